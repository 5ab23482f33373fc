package handover

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestNamesAreDistinct: no two hand-over variables or outputs share a name,
// and what run reads is among what verify writes.
func TestNamesAreDistinct(t *testing.T) {
	envs := map[string]bool{}
	outs := map[string]bool{}
	for _, v := range Verified() {
		if envs[v.Env] || outs[v.Output] {
			t.Errorf("%v: name used twice", v)
		}
		envs[v.Env], outs[v.Output] = true, true
	}
	for _, n := range RunInputs() {
		if !envs[n] {
			t.Errorf("run reads %s, which verify does not write", n)
		}
	}
	for _, n := range RunSettings() {
		if envs[n] {
			t.Errorf("run setting %s is also a verify output", n)
		}
	}
}

// TestOneOwner: no Go file of the module outside this package spells a
// hand-over name as a string literal of its own, so a rename here reaches
// every writer and reader (test files may, to state expected values).
func TestOneOwner(t *testing.T) {
	names := []string{PoliciesDigestAnnotation}
	for _, v := range Verified() {
		names = append(names, v.Env)
	}
	names = append(names, RunSettings()...)
	root := ".."
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == ".git" || (d.Name() == "handover" && filepath.Dir(p) == root) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, n := range names {
			if strings.Contains(string(src), `"`+n+`"`) {
				t.Errorf("%s spells %q itself; use the handover constant", p, n)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(names, Image) {
		t.Fatal("the name list is empty")
	}
}
