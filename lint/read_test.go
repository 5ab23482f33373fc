package lint

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadPolicies checks that the concurrent read keeps the order of the
// names and reports the first failing file in that order.
func TestReadPolicies(t *testing.T) {
	good, _ := filepath.Glob("testdata/bad/*.yaml")
	if len(good) < 10 {
		t.Fatalf("corpus too small: %d files", len(good))
	}
	ins, err := ReadPolicies(good)
	if err != nil {
		t.Fatal(err)
	}
	for i, in := range ins {
		raw, _ := os.ReadFile(good[i])
		if in.File != good[i] || in.Policy == nil || string(in.Raw) != string(raw) {
			t.Errorf("input %d: file %s, policy %v; want %s decoded", i, in.File, in.Policy != nil, good[i])
		}
	}

	dir := t.TempDir()
	undecodable := filepath.Join(dir, "undecodable.yaml")
	if err := os.WriteFile(undecodable, []byte("version: 1\nno_such_field: true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.yaml")
	for _, tc := range []struct {
		name  string
		names []string
		check func(error) bool
	}{
		{"undecodable first", append([]string{undecodable, missing}, good...), func(err error) bool {
			return strings.HasPrefix(err.Error(), undecodable+": ")
		}},
		{"missing first", append(append([]string{}, good...), missing, undecodable), func(err error) bool {
			return errors.Is(err, fs.ErrNotExist)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ins, err := ReadPolicies(tc.names)
			if err == nil || !tc.check(err) || ins != nil {
				t.Errorf("ReadPolicies = %d inputs, %v", len(ins), err)
			}
		})
	}
}
