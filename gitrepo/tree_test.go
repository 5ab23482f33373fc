package gitrepo

import (
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/fullsend-ai/agent-sandbox/internal/testtool"
)

// hostileName is a committed file name that is a pathspec, holds a tab
// and a newline and starts like an option.
const hostileName = "-n\tx\ny"

// treeRepo commits a project with a file, an executable, a symbolic
// link, a subdirectory, a name that git would read as pathspec magic and
// hostileName, and returns the repository and its commit.
func treeRepo(t *testing.T) (repo, commit string) {
	t.Helper()
	git := testtool.Find(t, "git", ".ci/install.d/10-git.sh")
	repo = t.TempDir()
	files := map[string]string{
		"p/agent.yaml":        "name: a\n",
		"p/sub/notes.md":      "notes\n",
		"p/" + hostileName:    "hostile\n",
		"top.txt":             "top\n",
		"p/:(top)missing.txt": "magic\n",
	}
	for name, data := range files {
		p := filepath.Join(repo, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(repo, "p", "run.sh"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("agent.yaml", filepath.Join(repo, "p", "link")); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_GLOBAL=/dev/null")
	var out []byte
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"commit", "-q", "-m", "x"}, {"rev-parse", "HEAD"}} {
		cmd := exec.Command(git, args...)
		cmd.Dir, cmd.Env = repo, env
		var err error
		if out, err = cmd.Output(); err != nil {
			t.Fatalf("git %v: %v", args, err)
		}
	}
	return repo, strings.TrimSpace(string(out))
}

// Tree reads a project directory as committed: files with their modes,
// links kept as links, subdirectories below it, hostile names verbatim;
// a missing directory or an unsafe revision is an error.
func TestTree(t *testing.T) {
	repo, commit := treeRepo(t)
	for _, tc := range []struct {
		name, commit, dir string
		want              map[string]fs.FileMode // path: mode
		wantErr           string
	}{
		{name: "project", commit: commit, dir: "p", want: map[string]fs.FileMode{
			"agent.yaml": 0o644, "sub/notes.md": 0o644, hostileName: 0o644, ":(top)missing.txt": 0o644,
			"run.sh": 0o755, "link": fs.ModeSymlink | 0o777,
		}},
		{name: "dir cleaned", commit: commit, dir: "/q/../p/sub/", want: map[string]fs.FileMode{"notes.md": 0o644}},
		{name: "missing dir", commit: commit, dir: "nothere", wantErr: "git ls-tree"},
		{name: "file not dir", commit: commit, dir: "top.txt", wantErr: "git ls-tree"},
		{name: "option revision", commit: "--output=x", dir: "p", wantErr: `invalid revision "--output=x"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fsys, err := Tree(context.Background(), repo, tc.commit, tc.dir)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got %v, want an error with %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]fs.FileMode{}
			err = fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
				if err != nil || d.IsDir() {
					return err
				}
				info, err := d.Info()
				got[p] = info.Mode()
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}

// Lookup lists the files and links at a name, nothing for a directory,
// and says when nothing is there; Listed says whether anything is; Blob
// reads an entry's content within its limit. A name is a literal path,
// never pathspec magic.
func TestLookupListedBlob(t *testing.T) {
	repo, commit := treeRepo(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name, path   string
		listed       bool
		mode         fs.FileMode // of the one entry; 0 for none
		content      string      // Blob of the entry
		limit        int64
		wantBlobErr  string
		wantLookErr  string
		lookupCommit string
	}{
		{name: "file", path: "p/agent.yaml", listed: true, mode: 0o644, content: "name: a\n", limit: 100},
		{name: "executable", path: "p/run.sh", listed: true, mode: 0o755, content: "#!/bin/sh\n", limit: 100},
		{name: "symlink", path: "p/link", listed: true, mode: fs.ModeSymlink | 0o777, content: "agent.yaml", limit: 100},
		{name: "directory", path: "p/sub", listed: true},
		{name: "missing", path: "p/nothere"},
		{name: "hostile name", path: "p/" + hostileName, listed: true, mode: 0o644, content: "hostile\n", limit: 100},
		{name: "pathspec magic is literal", path: ":(top)top.txt"},
		{name: "magic-looking file", path: "p/:(top)missing.txt", listed: true, mode: 0o644, content: "magic\n", limit: 100},
		{name: "over limit", path: "p/agent.yaml", listed: true, mode: 0o644, limit: 3, wantBlobErr: "output exceeds 3 bytes"},
		{name: "option revision", path: "p/agent.yaml", lookupCommit: "--output=x", wantLookErr: `invalid revision "--output=x"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := commit
			if tc.lookupCommit != "" {
				c = tc.lookupCommit
			}
			entries, listed, err := Lookup(ctx, repo, c, tc.path)
			listed2, err2 := Listed(ctx, repo, c, tc.path)
			if tc.wantLookErr != "" {
				for _, err := range []error{err, err2} {
					if err == nil || !strings.Contains(err.Error(), tc.wantLookErr) {
						t.Fatalf("got %v, want an error with %q", err, tc.wantLookErr)
					}
				}
				return
			}
			if err != nil || err2 != nil {
				t.Fatal(err, err2)
			}
			if listed != tc.listed || listed2 != tc.listed {
				t.Fatalf("Lookup listed %v, Listed %v, want %v", listed, listed2, tc.listed)
			}
			if tc.mode == 0 {
				if len(entries) != 0 {
					t.Fatalf("got entries %v, want none", entries)
				}
				return
			}
			if len(entries) != 1 || entries[0].Mode != tc.mode || entries[0].Name != tc.path {
				t.Fatalf("got %v, want one %s of mode %v", entries, tc.path, tc.mode)
			}
			data, err := Blob(ctx, repo, entries[0].OID, tc.limit)
			if tc.wantBlobErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantBlobErr) {
					t.Fatalf("got %v, want an error with %q", err, tc.wantBlobErr)
				}
				return
			}
			if err != nil || string(data) != tc.content {
				t.Fatalf("got %q, %v, want %q", data, err, tc.content)
			}
		})
	}
}
