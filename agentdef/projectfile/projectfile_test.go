package projectfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
)

func TestRead(t *testing.T) {
	fsys := fstest.MapFS{
		"agents/a.md": {Data: []byte("---\nname: a\n---\n")},
		"big.md":      {Data: []byte(strings.Repeat("x", MaxSize+1))},
		"limit.md":    {Data: []byte(strings.Repeat("x", MaxSize))},
		"dir":         {Mode: fs.ModeDir},
	}
	tests := []struct {
		name string
		err  error
		size int
	}{
		{"agents/a.md", nil, 16},
		{"limit.md", nil, MaxSize},
		{"big.md", ErrTooLarge, 0},
		{"dir", ErrNotRegular, 0},
		{"missing.md", fs.ErrNotExist, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data, err := Read(fsys, tt.name)
			if !errors.Is(err, tt.err) || (tt.err != nil && !strings.Contains(err.Error(), tt.name)) {
				t.Fatalf("err = %v, want %v naming the file", err, tt.err)
			}
			if len(data) != tt.size {
				t.Errorf("read %d bytes, want %d", len(data), tt.size)
			}
		})
	}
}

func TestReadNoLinks(t *testing.T) {
	dir := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(dir, "policies", "real"), 0o755))
	must(os.WriteFile(filepath.Join(dir, "policies", "real", "f.yaml"), []byte("ok"), 0o644))
	must(os.WriteFile(filepath.Join(dir, "secret"), []byte("do not show"), 0o644))
	must(os.Symlink("real", filepath.Join(dir, "policies", "linked")))
	must(os.Symlink(filepath.Join("..", "secret"), filepath.Join(dir, "policies", "f.yaml")))
	fsys := os.DirFS(dir)
	tests := []struct {
		name string
		err  error
		in   string // the error names this
	}{
		{"policies/real/f.yaml", nil, ""},
		{"policies/f.yaml", ErrSymlink, "policies/f.yaml"},
		{"policies/linked/f.yaml", ErrSymlink, "policies/linked"},
		{"../secret", fs.ErrInvalid, "../secret"},
		{"policies/a\u2028b.yaml", ErrNameText, `"policies/a\u2028b.yaml"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data, err := ReadNoLinks(fsys, tt.name)
			if !errors.Is(err, tt.err) || (tt.err != nil && !strings.Contains(err.Error(), tt.in)) {
				t.Fatalf("err = %v, want %v naming %s", err, tt.err, tt.in)
			}
			if tt.err == nil && string(data) != "ok" {
				t.Errorf("read %q", data)
			}
			if err != nil && strings.Contains(err.Error(), "do not show") {
				t.Errorf("the error shows what the link points to: %v", err)
			}
		})
	}
}

func TestCheckNameAndQuote(t *testing.T) {
	tests := []struct {
		name   string
		ok     bool
		quoted string
	}{
		{"agents/triage.md", true, "agents/triage.md"},
		{"agents/ünïcode.md", true, "agents/ünïcode.md"},
		{"agents/with space.md", true, "agents/with space.md"},
		{"agents/a\nb.md", false, `"agents/a\nb.md"`},
		{"agents/a\u202eb.md", false, `"agents/a\u202eb.md"`},
		{"agents/\xff.md", false, `"agents/\xff.md"`},
	}
	for _, tt := range tests {
		err := CheckName(tt.name)
		if (err == nil) != tt.ok || (err != nil && !errors.Is(err, ErrNameText)) {
			t.Errorf("CheckName(%q) = %v, want ok=%v", tt.name, err, tt.ok)
		}
		if got := Quote(tt.name); got != tt.quoted {
			t.Errorf("Quote(%q) = %s, want %s", tt.name, got, tt.quoted)
		}
	}
}

// FuzzQuote: whatever a project names a file, its quoted form is printable
// text, and a printable name is shown as it is.
func FuzzQuote(f *testing.F) {
	for _, s := range []string{"agents/a.md", "a\u2028b", "\xff", "a\rb\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		q := Quote(name)
		if err := CheckName(q); err != nil {
			t.Fatalf("Quote(%q) = %q, not printable: %v", name, q, err)
		}
		if CheckName(name) == nil && q != name {
			t.Fatalf("Quote(%q) = %q changed a printable name", name, q)
		}
	})
}
