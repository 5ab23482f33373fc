package scaffold

import (
	"cmp"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/fullsend-ai/agent-sandbox/internal/atomicfile"
	"github.com/fullsend-ai/agent-sandbox/templates"
)

//go:embed all:tree
var tree embed.FS

// Signing choices, as recorded in Result.Signing.
const (
	// SigningKeyless: Sigstore keyless signing in CI; no key material.
	SigningKeyless = "keyless"
	// SigningKey: a cosign key pair the user creates with `fullsend image
	// keygen` (encrypted); init writes instructions, never the key.
	SigningKey = "key"
)

// Where the CI templates go: the layout `fullsend templates write` documents.
const (
	GitHubDir = ".github"
	GitLabDir = "ci"
)

// ExampleAgent is the agent of the scaffold, for the commands init prints.
const ExampleAgent = "summarizer"

// Options are the inputs of Write.
type Options struct {
	// Dir is the repository directory; created when missing.
	Dir string
	// Force replaces files that already exist (default: they are kept and
	// reported as skipped).
	Force bool
	// Signing is SigningKeyless (default, "") or SigningKey.
	Signing string
	// Version is the running fullsend's version (internal/version). A
	// release version (vX.Y.Z) is written to VersionFile; anything else (a
	// devel build, a pseudo-version, a pre-release) writes no VersionFile,
	// and Result.VersionNote says why.
	Version string
}

// VersionFile pins the fullsend that reviews policy changes: the
// pull-request policy-diff templates install the version the base branch
// holds there and skip the diff without it
// (templates/github/workflows/fullsend-policy-diff.yml).
const VersionFile = ".fullsend-version"

// releaseVersion is what the policy-diff templates accept in VersionFile.
var releaseVersion = regexp.MustCompile(`^v[0-9]+\.[0-9]+\.[0-9]+$`)

// Result says what Write did, by slash path relative to Dir.
type Result struct {
	Dir     string   `json:"dir"`
	Signing string   `json:"signing"`
	Written []string `json:"written"`
	Skipped []string `json:"skipped"`
	// VersionNote says why no VersionFile was written ("" when it was
	// written or kept).
	VersionNote string `json:"version_note,omitempty"`
	// GitignoreNote says what became of a kept .gitignore that lacked
	// the scaffold's patterns: completed when an earlier init wrote it,
	// else the patterns to add ("" when it has them all).
	GitignoreNote string `json:"gitignore_note,omitempty"`
	// SigningNote says that a kept SIGNING.md does not describe the
	// chosen signing ("" when it was written or matches).
	SigningNote string `json:"signing_note,omitempty"`
}

// File is one file of the scaffold.
type File struct {
	// Path is slash-separated, relative to the repository root.
	Path string
	Data []byte
}

// ErrSigning reports an unknown signing choice.
var ErrSigning = errors.New("unknown signing choice")

// Files returns the scaffold for a signing choice, sorted by path: the
// embedded tree (with _gitignore as .gitignore and the SIGNING-<choice>.md
// variant as SIGNING.md) and both CI systems' templates.
func Files(signing string) ([]File, error) {
	signing = cmp.Or(signing, SigningKeyless)
	if signing != SigningKeyless && signing != SigningKey {
		return nil, fmt.Errorf("%w %q (want %s or %s)", ErrSigning, signing, SigningKeyless, SigningKey)
	}
	out, err := treeFiles(signing)
	if err != nil {
		return nil, err
	}
	tmpl, err := templateFiles()
	if err != nil {
		return nil, err
	}
	out = append(out, tmpl...)
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

// treeFiles is the embedded tree for a signing choice: _gitignore as
// .gitignore, SIGNING-<signing>.md as SIGNING.md and no other SIGNING-*.
func treeFiles(signing string) ([]File, error) {
	root, err := fs.Sub(tree, "tree")
	if err != nil {
		return nil, err
	}
	var out []File
	err = fs.WalkDir(root, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		name, ok := treeName(p, signing)
		if !ok {
			return nil
		}
		data, err := fs.ReadFile(root, p)
		out = append(out, File{Path: name, Data: data})
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// treeName is the scaffold path of the embedded tree's file p; false for
// the SIGNING-*.md of another signing choice.
func treeName(p, signing string) (string, bool) {
	switch {
	case p == "_gitignore":
		return ".gitignore", true
	case strings.HasPrefix(p, "SIGNING-"):
		return "SIGNING.md", p == "SIGNING-"+signing+".md"
	}
	return p, true
}

// templateFiles is both CI systems' templates under GitHubDir and
// GitLabDir.
func templateFiles() ([]File, error) {
	var out []File
	for kind, dir := range map[string]string{"github": GitHubDir, "gitlab": GitLabDir} {
		files, err := kindTemplates(kind, dir)
		if err != nil {
			return nil, err
		}
		out = append(out, files...)
	}
	return out, nil
}

// kindTemplates is one CI system's templates (templates.List(kind)) under
// dir.
func kindTemplates(kind, dir string) ([]File, error) {
	fsys, err := templates.FS(kind)
	if err != nil {
		return nil, err
	}
	names, err := templates.List(kind)
	if err != nil {
		return nil, err
	}
	var out []File
	for _, n := range names {
		data, err := fs.ReadFile(fsys, n)
		if err != nil {
			return nil, err
		}
		out = append(out, File{Path: path.Join(dir, n), Data: data})
	}
	return out, nil
}

// Write puts the scaffold under o.Dir. An existing file (or anything else
// at a file's path) is kept and listed in Skipped unless o.Force; every
// file is written atomically through an os.Root of Dir, so no symbolic link
// leads a write outside it. Running Write again writes nothing new.
func Write(o Options) (*Result, error) {
	files, err := Files(o.Signing)
	if err != nil {
		return nil, err
	}
	res := &Result{Dir: o.Dir, Signing: cmp.Or(o.Signing, SigningKeyless), Written: []string{}, Skipped: []string{}}
	files, res.VersionNote = withVersionFile(files, o.Version)
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("creating %s: %w", o.Dir, err)
	}
	root, err := os.OpenRoot(o.Dir)
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", o.Dir, err)
	}
	defer root.Close()
	if err := res.writeFiles(root, o.Dir, files, o.Force); err != nil {
		return nil, err
	}
	return res, res.checkKept(root, files)
}

// checkKept completes or notes the kept files that matter to a new
// setup: the .gitignore and SIGNING.md.
func (res *Result) checkKept(root *os.Root, files []File) error {
	var err error
	for _, f := range files {
		if !slices.Contains(res.Skipped, f.Path) {
			continue
		}
		switch f.Path {
		case gitignoreFile:
			res.GitignoreNote, err = keptGitignore(root, f.Data)
		case signingFile:
			res.SigningNote, err = keptSigning(root, res.Signing, f.Data)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", res.Dir, err)
		}
	}
	return nil
}

// withVersionFile adds VersionFile to files, sorted by path, when version
// is a release version; otherwise it returns files as they are and the
// note that says why no VersionFile is written.
func withVersionFile(files []File, version string) ([]File, string) {
	if !releaseVersion.MatchString(version) {
		return files, fmt.Sprintf("%s not written: this fullsend (%s) is not a release version vX.Y.Z; "+
			"the pull-request policy diff skips until the default branch holds one (echo vX.Y.Z > %s)", VersionFile, cmp.Or(version, "unknown"), VersionFile)
	}
	files = append(files, File{Path: VersionFile, Data: []byte(version + "\n")})
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	return files, ""
}

// writeFiles writes files under root (the directory dir), recording each
// as written or skipped; it stops at the first error.
func (res *Result) writeFiles(root *os.Root, dir string, files []File, force bool) error {
	for _, f := range files {
		written, err := writeFile(root, dir, f, force)
		if err != nil {
			return err
		}
		if written {
			res.Written = append(res.Written, f.Path)
		} else {
			res.Skipped = append(res.Skipped, f.Path)
		}
	}
	return nil
}

// writeFile writes f atomically under root (the directory dir, named in
// errors), creating its parent directories; false, writing nothing, when
// something is at its path and force is not set.
func writeFile(root *os.Root, dir string, f File, force bool) (bool, error) {
	if _, err := root.Lstat(f.Path); err == nil && !force {
		return false, nil
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, fmt.Errorf("%s: %w", f.Path, err)
	}
	if err := mkdirParent(root, dir, f.Path); err != nil {
		return false, err
	}
	if err := atomicfile.WriteIn(root, f.Path, f.Data, 0o644); err != nil {
		return false, fmt.Errorf("%s: %w", dir, err)
	}
	return true, nil
}

// mkdirParent creates the parent directories of slash path p under root
// (the directory dir, named in errors).
func mkdirParent(root *os.Root, dir, p string) error {
	parent := path.Dir(p)
	if parent == "." {
		return nil
	}
	if err := root.MkdirAll(parent, 0o755); err != nil {
		return fmt.Errorf("creating %s in %s: %w", parent, dir, err)
	}
	return nil
}
