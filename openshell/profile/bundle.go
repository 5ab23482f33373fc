package profile

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/fullsend-ai/agent-sandbox/bundle"
)

// Attachments resolves a compiled agent's providers (its manifest entry's
// providers, in attachment order) to attachments: a built-in profile from
// the catalog embedded for version, a project profile from files (the
// bytes bundle.Open verified, keyed by the path the manifest gives). Each
// profile is validated as Resolve does.
func Attachments(refs []bundle.ProviderRef, files map[string][]byte, version string) ([]Attachment, error) {
	read := func(file string) ([]byte, error) {
		data, ok := files[file]
		if !ok {
			return nil, fmt.Errorf("%s is not among the bundle's verified profiles: %w", file, fs.ErrNotExist)
		}
		return data, nil
	}
	out := make([]Attachment, 0, len(refs))
	for _, r := range refs {
		ref := r.Name + "=" + r.Profile
		if !r.Builtin {
			ref = r.Name + "=" + r.File
		}
		a, err := Resolve(ref, read, version)
		if errors.Is(err, ErrNoProfile) {
			return nil, err // Resolve names the provider
		}
		if err != nil {
			return nil, fmt.Errorf("provider %s: %w", r.Name, err)
		}
		out = append(out, a)
	}
	return out, nil
}
