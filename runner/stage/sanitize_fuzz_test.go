//go:build unix

package stage

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// fuzzNames are the entry names the fuzzer builds trees from: plain names,
// the names git gives meaning to, and spellings of .git that git or a
// case-insensitive or NTFS checkout treats as .git.
var fuzzNames = []string{"a", "b", "sub", ".git", ".GIT", ".git.", ".git ", "git~1", ".g\u200cit", "HEAD", "head",
	"objects", "refs", "commondir", "hooks", "config", "gitdir", ".gitattributes", ".gitmodules", "info"}

// fuzzLinks are symlink targets: inside, the root's parent, absolute.
var fuzzLinks = []string{"a", "..", "../..", "/", "/etc/passwd", "../outside/secret", "HEAD"}

// buildFuzzTree turns data into a tree under root: each 3-byte op picks a
// kind, a parent among the directories made so far and a name.
func buildFuzzTree(t *testing.T, root string, data []byte) {
	t.Helper()
	dirs := []string{root}
	for i := 0; i+2 < len(data) && i < 3*64; i += 3 {
		kind, parent := data[i], dirs[int(data[i+1])%len(dirs)]
		p := filepath.Join(parent, fuzzNames[int(data[i+2])%len(fuzzNames)])
		arg := int(data[i+1]) ^ int(data[i+2])
		switch kind % 7 {
		case 0:
			if os.Mkdir(p, 0o755) == nil {
				dirs = append(dirs, p)
			}
		case 1: // a file with any permission bits, setuid and friends
			createNew(p, "ref: refs/heads/main\n", fs.FileMode(arg&0o777)|[]fs.FileMode{0, fs.ModeSetuid, fs.ModeSetgid, fs.ModeSticky}[arg%4])
		case 2:
			_ = os.Symlink(fuzzLinks[arg%len(fuzzLinks)], p)
		case 3: // a gitdir file
			createNew(p, "gitdir: "+fuzzNames[arg%len(fuzzNames)]+"\n", 0o644)
		case 4:
			_ = syscall.Mkfifo(p, 0o644)
		case 5: // a world-writable or sticky directory
			_ = os.Chmod(parent, 0o777|fs.ModeSticky)
		case 6: // a bare repository's skeleton
			for _, n := range []string{"objects", "refs"} {
				_ = os.Mkdir(filepath.Join(parent, n), 0o755)
			}
			createNew(filepath.Join(parent, "HEAD"), "ref: refs/heads/main\n", 0o644)
		}
	}
}

// createNew creates p only when nothing is there: never through a symlink
// the tree already holds (one points at /etc/passwd), never into a fifo.
func createNew(p, content string, mode fs.FileMode) {
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return
	}
	defer f.Close()
	_, _ = f.WriteString(content)
	_ = f.Chmod(mode)
}

// snapshot records every entry under dir: name, mode and, for files and
// links, content, to prove Sanitize touched nothing outside its root.
func snapshot(t *testing.T, dir string) string {
	t.Helper()
	var b bytes.Buffer
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		b.WriteString(p + " " + info.Mode().String() + "\n")
		if info.Mode().IsRegular() {
			data, _ := os.ReadFile(p)
			b.Write(data)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// FuzzSanitize builds random trees of files, directories, symlinks, fifos,
// .git files and directories and bare-repository skeletons, and checks the
// invariant of an output: after Sanitize nothing unsafe is left, a second
// pass finds nothing, and nothing outside the root changed.
func FuzzSanitize(f *testing.F) {
	// Ops are (kind, parent, name) triples; see buildFuzzTree.
	f.Add([]byte{1, 0, 3, 0, 1, 3, 1, 1, 15})         // a/.git/config (the root is named a)
	f.Add([]byte{2, 0, 2, 0, 0, 2, 6, 1, 0, 2, 0, 4}) // sub/ with a bare skeleton, a link to /etc/passwd
	f.Add([]byte{3, 0, 3, 0, 0, 9, 4, 0, 0, 5, 0, 0}) // a .git file, a HEAD dir, a fifo, a world-writable root
	f.Add([]byte{1, 0, 14, 0, 1, 4, 1, 2, 5})         // .g\u200cit/.GIT, a setuid file
	f.Fuzz(func(t *testing.T, data []byte) {
		base := t.TempDir()
		outside := filepath.Join(base, "outside")
		if err := os.MkdirAll(outside, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("keep"), 0o4755); err != nil {
			t.Fatal(err)
		}
		_ = os.Chmod(filepath.Join(outside, "secret"), 0o777|fs.ModeSetuid)
		name := "out"
		if len(data) > 0 && data[0]%5 == 0 {
			name = fuzzNames[int(data[0])%len(fuzzNames)] // the output itself may be named .git
		}
		root := filepath.Join(base, "o", name)
		if err := os.MkdirAll(root, 0o755); err != nil {
			t.Fatal(err)
		}
		buildFuzzTree(t, root, data)
		before := snapshot(t, outside)
		if _, err := Sanitize(root); err != nil {
			t.Fatalf("Sanitize: %v", err)
		}
		assertInert(t, root)
		if _, err := os.Lstat(root); err == nil {
			if removed, err := Sanitize(root); err != nil || len(removed) != 0 {
				t.Errorf("second pass removed %v, %v", removed, err)
			}
		}
		if after := snapshot(t, outside); after != before {
			t.Errorf("Sanitize changed files outside its root:\nbefore:\n%s\nafter:\n%s", before, after)
		}
		if ents, _ := os.ReadDir(base); len(ents) != 2 {
			t.Errorf("Sanitize changed the root's parent: %v", ents)
		}
	})
}
