package stage

import (
	"archive/tar"
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// outEntry is one entry of a hand-built output archive.
type outEntry struct {
	name string
	typ  byte
	body string
	mode int64
	link string
}

func buildOutTar(t testing.TB, entries []outEntry) []byte {
	t.Helper()
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	for _, e := range entries {
		mode := e.mode
		if mode == 0 {
			mode = 0o644
		}
		h := &tar.Header{Name: e.name, Typeflag: e.typ, Mode: mode, Linkname: e.link, Format: tar.FormatPAX}
		if e.typ == tar.TypeReg {
			h.Size = int64(len(e.body))
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if e.typ == tar.TypeReg {
			if _, err := tw.Write([]byte(e.body)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestExtractOutputTar: the tar stream of an output read through sandbox
// exec is hostile; only directories and regular files under the output's
// name are written, within limits, and what is left out is reported.
func TestExtractOutputTar(t *testing.T) {
	for _, tc := range []struct {
		name     string
		entries  []outEntry
		maxBytes int64
		maxEnt   int
		wantErr  string
		files    map[string]string // path under dir -> content
		absent   []string
		removed  []string // "path: why prefix"
		modes    map[string]fs.FileMode
	}{
		{name: "a file", entries: []outEntry{{name: "out", typ: tar.TypeReg, body: "x\n"}},
			files: map[string]string{"out": "x\n"}},
		{name: "a tree", entries: []outEntry{
			{name: "out/", typ: tar.TypeDir, mode: 0o777},
			{name: "out/a/b.txt", typ: tar.TypeReg, body: "b"},
			{name: "out/run.sh", typ: tar.TypeReg, body: "#!/bin/sh\n", mode: 0o6777}},
			files: map[string]string{"out/a/b.txt": "b", "out/run.sh": "#!/bin/sh\n"},
			modes: map[string]fs.FileMode{"out/run.sh": 0o755, "out/a/b.txt": 0o644}},
		{name: "links and special files are left out", entries: []outEntry{
			{name: "out/", typ: tar.TypeDir},
			{name: "out/passwd", typ: tar.TypeSymlink, link: "/etc/passwd"},
			{name: "out/hard", typ: tar.TypeLink, link: "etc/shadow"},
			{name: "out/fifo", typ: tar.TypeFifo},
			{name: "out/dev", typ: tar.TypeChar}},
			absent:  []string{"out/passwd", "out/hard", "out/fifo", "out/dev"},
			removed: []string{"passwd: " + whySymlink, "hard: " + whyLinked, "fifo: " + whySpecial, "dev: " + whySpecial}},
		{name: "the output itself a link", entries: []outEntry{{name: "out", typ: tar.TypeSymlink, link: "/etc"}},
			absent: []string{"out"}, removed: []string{".: " + whySymlink}},
		{name: "a second copy of a file", entries: []outEntry{
			{name: "out/a", typ: tar.TypeReg, body: "first"}, {name: "out/a", typ: tar.TypeReg, body: "second"}},
			files: map[string]string{"out/a": "first"}, removed: []string{"a: listed twice"}},
		{name: "a file under a link is not written through it", entries: []outEntry{
			{name: "out/l", typ: tar.TypeSymlink, link: "/tmp"}, {name: "out/l/x", typ: tar.TypeReg, body: "x"}},
			files: map[string]string{"out/l/x": "x"}, removed: []string{"l: " + whySymlink}},
		{name: "parent traversal", entries: []outEntry{{name: "out/../../evil", typ: tar.TypeReg, body: "x"}},
			wantErr: "not under"},
		{name: "absolute name", entries: []outEntry{{name: "/etc/evil", typ: tar.TypeReg, body: "x"}},
			wantErr: "not under"},
		{name: "another name", entries: []outEntry{{name: "outx/a", typ: tar.TypeReg, body: "x"}},
			wantErr: "not under"},
		{name: "dot segment", entries: []outEntry{{name: "out/./a", typ: tar.TypeReg, body: "x"}},
			wantErr: "not under"},
		{name: "too large", maxBytes: 4, entries: []outEntry{
			{name: "out/a", typ: tar.TypeReg, body: "abc"}, {name: "out/b", typ: tar.TypeReg, body: "de"}},
			wantErr: "larger than 4 bytes"},
		{name: "too many entries", maxEnt: 2, entries: []outEntry{
			{name: "out/", typ: tar.TypeDir}, {name: "out/a", typ: tar.TypeReg}, {name: "out/b", typ: tar.TypeReg}},
			wantErr: "more than 2 entries"},
		{name: "a directory over a file", entries: []outEntry{
			{name: "out/a", typ: tar.TypeReg, body: "x"}, {name: "out/a/b", typ: tar.TypeReg, body: "y"}},
			wantErr: "output entry"},
		{name: "empty archive", wantErr: "empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			maxBytes, maxEnt := int64(1<<20), 100
			if tc.maxBytes > 0 {
				maxBytes = tc.maxBytes
			}
			if tc.maxEnt > 0 {
				maxEnt = tc.maxEnt
			}
			removed, err := ExtractOutput(bytes.NewReader(buildOutTar(t, tc.entries)), dir, "out", maxBytes, maxEnt)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				assertConfined(t, dir)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for p, want := range tc.files {
				if b, err := os.ReadFile(filepath.Join(dir, p)); err != nil || string(b) != want {
					t.Errorf("%s = %q, %v; want %q", p, b, err, want)
				}
			}
			for p, want := range tc.modes {
				if st, err := os.Stat(filepath.Join(dir, p)); err != nil || st.Mode().Perm() != want {
					t.Errorf("%s mode %v, %v; want %v", p, st.Mode().Perm(), err, want)
				}
			}
			for _, p := range tc.absent {
				if _, err := os.Lstat(filepath.Join(dir, p)); !os.IsNotExist(err) {
					t.Errorf("%s written: %v", p, err)
				}
			}
			var got []string
			for _, r := range removed {
				got = append(got, r.Path+": "+r.Why)
			}
			if len(got) != len(tc.removed) {
				t.Fatalf("removed %q, want %q", got, tc.removed)
			}
			for i := range got {
				if !strings.HasPrefix(got[i], tc.removed[i]) {
					t.Errorf("removed[%d] = %q, want prefix %q", i, got[i], tc.removed[i])
				}
			}
			assertConfined(t, dir)
		})
	}
}

// assertConfined checks that dir holds only directories and regular files
// with one name each and no set-id or world-write bit.
func assertConfined(t testing.TB, dir string) {
	t.Helper()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		m := info.Mode()
		if !m.IsDir() && !m.IsRegular() {
			t.Errorf("%s: mode %v", p, m)
		}
		if m&(fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky) != 0 || m.Perm()&0o002 != 0 {
			t.Errorf("%s: unsafe mode %v", p, m)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// FuzzExtractOutputTar: no archive makes the extractor panic or write
// anything but directories and regular files inside its directory.
func FuzzExtractOutputTar(f *testing.F) {
	f.Add(buildOutTar(f, []outEntry{{name: "out/", typ: tar.TypeDir}, {name: "out/a", typ: tar.TypeReg, body: "a"}}))
	f.Add(buildOutTar(f, []outEntry{{name: "out/l", typ: tar.TypeSymlink, link: "/etc"}, {name: "out/l/x", typ: tar.TypeReg, body: "x"}}))
	f.Add(buildOutTar(f, []outEntry{{name: "out/../x", typ: tar.TypeReg, body: "x"}}))
	f.Add([]byte("not a tar"))
	f.Fuzz(func(t *testing.T, data []byte) {
		parent := t.TempDir()
		dir := filepath.Join(parent, "stage")
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		_, _ = ExtractOutput(bytes.NewReader(data), dir, "out", 1<<16, 64)
		assertConfined(t, parent)
		ents, _ := os.ReadDir(parent)
		if len(ents) != 1 {
			t.Errorf("written beside the staging directory: %v", ents)
		}
	})
}
