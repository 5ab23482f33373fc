package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f.txt")
	if err := Write(p, []byte("one"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Write(p, []byte("two"), 0o644); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(p)
	if err != nil || string(data) != "two" {
		t.Fatalf("content %q, %v", data, err)
	}
	if st, _ := os.Stat(p); st.Mode().Perm() != 0o644 {
		t.Errorf("mode %v", st.Mode().Perm())
	}
}

func TestWriteFuncFailureLeavesTarget(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f.txt")
	if err := Write(p, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	err := WriteFunc(p, 0o644, func(w io.Writer) error {
		_, _ = w.Write([]byte("partial"))
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v", err)
	}
	data, _ := os.ReadFile(p)
	if string(data) != "keep" {
		t.Errorf("target changed to %q", data)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("temporary files left behind: %v", entries)
	}
}

func TestWriteIn(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	if err := WriteIn(root, "f.txt", []byte("one"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := WriteIn(root, "f.txt", []byte("two"), 0o644); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "f.txt"))
	if err != nil || string(data) != "two" {
		t.Fatalf("content %q, %v", data, err)
	}
	if st, _ := os.Stat(filepath.Join(dir, "f.txt")); st.Mode().Perm() != 0o644 {
		t.Errorf("mode %v", st.Mode().Perm())
	}
	// A link at the target is replaced, its target left alone.
	target := filepath.Join(outside, "host")
	if err := os.WriteFile(target, []byte("host"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, filepath.Join(dir, "link.txt")); err != nil {
		t.Fatal(err)
	}
	if err := WriteIn(root, "link.txt", []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(target); string(data) != "host" {
		t.Errorf("link target written: %q", data)
	}
	if fi, err := os.Lstat(filepath.Join(dir, "link.txt")); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("link.txt not replaced by a regular file: %v, %v", fi, err)
	}
	// A linked directory on the way out of the root is refused.
	if err := os.Symlink(outside, filepath.Join(dir, "out")); err != nil {
		t.Fatal(err)
	}
	if err := WriteIn(root, "out/f.txt", []byte("x"), 0o644); err == nil {
		t.Error("WriteIn wrote through a link leaving the root")
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 1 {
		t.Errorf("files written outside the root: %v", entries)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 3 {
		t.Errorf("temporary files left behind: %v", entries)
	}
}
