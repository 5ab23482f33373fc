package image

import (
	"context"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fullsend-ai/agent-sandbox/bundle"
)

// hostMarker is the content of the file outside the project that the
// symlink attacks try to pull into the signed image.
const hostMarker = "HOST-ONLY-MARKER root:x:0:0 do not ship\n"

// copyProject copies testdata/project into a fresh directory and returns
// it with a sibling directory outside the project holding the host marker.
func copyProject(t *testing.T) (proj, outside string) {
	t.Helper()
	tmp := t.TempDir()
	proj, outside = filepath.Join(tmp, "project"), filepath.Join(tmp, "host")
	if err := os.CopyFS(proj, os.DirFS("testdata/project")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "marker"), []byte(hostMarker), 0o644); err != nil {
		t.Fatal(err)
	}
	return proj, outside
}

func mustSymlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

func mustRename(t *testing.T, from, to string) {
	t.Helper()
	if err := os.Rename(from, to); err != nil {
		t.Fatal(err)
	}
}

// TestBuildSymlinkAttacks are the red-team findings against `image build
// --dir`: a project whose templates/ or policies/ is a link, or that holds a
// link pointing out of it, must not put a host file into the signed image.
// Each is refused with an error naming the link and without any byte of the
// host file, whether the project is read through os.DirFS or os.Root.
func TestBuildSymlinkAttacks(t *testing.T) {
	tests := []struct {
		name string
		// attack edits the copied project; outside is a host directory
		// holding the marker file.
		attack func(t *testing.T, proj, outside string)
		link   string // the path the error must name
	}{
		{"templates symlinked to a host directory", func(t *testing.T, proj, outside string) {
			if err := os.RemoveAll(filepath.Join(proj, "templates")); err != nil {
				t.Fatal(err)
			}
			mustSymlink(t, outside, filepath.Join(proj, "templates"))
		}, "templates"},
		{"templates symlinked relatively out of the project", func(t *testing.T, proj, outside string) {
			if err := os.RemoveAll(filepath.Join(proj, "templates")); err != nil {
				t.Fatal(err)
			}
			mustSymlink(t, "../host", filepath.Join(proj, "templates"))
		}, "templates"},
		{"policies symlinked to a host directory", func(t *testing.T, proj, outside string) {
			// The compiled policies live on the host; the project only links them.
			for _, f := range []string{"manifest.json", "provenance.json", "triage.yaml"} {
				mustRename(t, filepath.Join(proj, "policies", f), filepath.Join(outside, f))
			}
			if err := os.Remove(filepath.Join(proj, "policies")); err != nil {
				t.Fatal(err)
			}
			mustSymlink(t, outside, filepath.Join(proj, "policies"))
		}, "policies"},
		{"agents symlinked to a host directory", func(t *testing.T, proj, outside string) {
			mustRename(t, filepath.Join(proj, "agents", "triage.md"), filepath.Join(outside, "triage.md"))
			if err := os.Remove(filepath.Join(proj, "agents")); err != nil {
				t.Fatal(err)
			}
			mustSymlink(t, outside, filepath.Join(proj, "agents"))
		}, "agents"},
		{"symlink inside skills pointing to a host file", func(t *testing.T, proj, outside string) {
			mustSymlink(t, filepath.Join(outside, "marker"), filepath.Join(proj, "skills", "triage-issue", "reference.md"))
		}, "skills/triage-issue/reference.md"},
		{"symlink inside templates pointing into the project", func(t *testing.T, proj, outside string) {
			mustSymlink(t, "../agents/triage.md", filepath.Join(proj, "templates", "triage.md"))
		}, "templates/triage.md"},
	}
	opens := []struct {
		name string
		open func(t *testing.T, dir string) fs.FS
	}{
		{"DirFS", func(t *testing.T, dir string) fs.FS { return os.DirFS(dir) }},
		{"Root", func(t *testing.T, dir string) fs.FS {
			root, err := os.OpenRoot(dir)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { root.Close() })
			return root.FS()
		}},
	}
	for _, tt := range tests {
		for _, op := range opens {
			t.Run(tt.name+"/"+op.name, func(t *testing.T) {
				proj, outside := copyProject(t)
				tt.attack(t, proj, outside)
				o := fixedOptions(t, amd64)
				o.Project, o.ProjectName = op.open(t, proj), proj
				res, err := Build(context.Background(), o)
				if err == nil {
					for p, e := range extract(t, res.Image) {
						if strings.Contains(e.data, "HOST-ONLY-MARKER") {
							t.Errorf("host file shipped in the image as %s", p)
						}
					}
					t.Fatal("Build succeeded")
				}
				msg := err.Error()
				if !strings.Contains(msg, tt.link) || !strings.Contains(msg, "symbolic link") {
					t.Errorf("error %q does not name the symbolic link %s", msg, tt.link)
				}
				if strings.Contains(msg, "HOST-ONLY") || strings.Contains(msg, "root:x") {
					t.Errorf("error %q echoes the host file", msg)
				}
			})
		}
	}
}

// TestSamePolicies: the policies layer must hold the bytes the bundle
// verified; a policy or manifest that changed (or vanished) between the
// read and the check fails the build.
func TestSamePolicies(t *testing.T) {
	proj, _ := copyProject(t)
	fsys := os.DirFS(proj)
	good, err := readTree(fsys, policiesDir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := bundle.Open(fsys, policiesDir)
	if err != nil {
		t.Fatal(err)
	}
	edit := func(drop, change string) []file {
		var out []file
		for _, f := range good {
			switch path.Base(f.path) {
			case drop:
				continue
			case change:
				f.data = append(slices.Clone(f.data), '\n')
			}
			out = append(out, f)
		}
		return out
	}
	tests := []struct {
		name  string
		files []file
		want  string // "" for no error
	}{
		{"as verified", good, ""},
		{"policy changed", edit("", "triage.yaml"), "policies/triage.yaml changed"},
		{"manifest changed", edit("", "manifest.json"), "policies/manifest.json changed"},
		{"policy gone", edit("triage.yaml", ""), "policies/triage.yaml changed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := samePolicies(tt.files, b)
			if (err == nil) != (tt.want == "") || (err != nil && !strings.Contains(err.Error(), tt.want)) {
				t.Errorf("samePolicies = %v, want %q", err, tt.want)
			}
		})
	}
}
