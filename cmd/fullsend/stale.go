package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/fullsend-ai/agent-sandbox/bundle"
	"github.com/fullsend-ai/agent-sandbox/cienv"
)

// checkStale applies bundle.StaleRule to the compiled bundle in
// policiesDir of the project in dir, the same way in every command: in CI
// a stale bundle is an error; elsewhere the warning goes to errw and the
// command goes on. It reports whether the bundle was stale. No bundle, or
// one whose sources are not under dir, is not judged.
func checkStale(dir, policiesDir string, getenv func(string) string, errw io.Writer) (bool, error) {
	rel, err := filepath.Rel(dir, policiesDir)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return false, nil
	}
	s, err := bundle.Freshness(os.DirFS(dir), filepath.ToSlash(rel))
	if errors.Is(err, bundle.ErrManifest) || (err == nil && !s.SourcesFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	warning, err := bundle.StaleRule(s, cienv.Detect(getenv).IsCI(), "fullsend policy compile "+dir)
	if err != nil {
		return true, err
	}
	if warning != "" {
		fmt.Fprintln(errw, warning)
	}
	return s.Stale(), nil
}
