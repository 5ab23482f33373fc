package lint

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// sameLines compares the fast tree with yaml.v3's: kinds, the lines of
// collections, keys and values, and key names.
func sameLines(fast, full *yaml.Node, path string) error {
	if fast.Kind != full.Kind {
		return fmt.Errorf("%s: kind %v, yaml.v3 %v", path, fast.Kind, full.Kind)
	}
	if fast.Line != full.Line {
		return fmt.Errorf("%s: line %d, yaml.v3 %d", path, fast.Line, full.Line)
	}
	if len(fast.Content) != len(full.Content) {
		return fmt.Errorf("%s: %d children, yaml.v3 %d", path, len(fast.Content), len(full.Content))
	}
	for i := range fast.Content {
		p := fmt.Sprintf("%s[%d]", path, i)
		if fast.Kind == yaml.MappingNode && i%2 == 0 {
			if fast.Content[i].Value != full.Content[i].Value {
				return fmt.Errorf("%s: key %q, yaml.v3 %q", p, fast.Content[i].Value, full.Content[i].Value)
			}
		}
		if err := sameLines(fast.Content[i], full.Content[i], p); err != nil {
			return err
		}
	}
	return nil
}

// checkFastTree fails when fastTree accepts raw but disagrees with yaml.v3;
// it reports whether fastTree accepted it.
func checkFastTree(t *testing.T, name string, raw []byte) bool {
	t.Helper()
	fast := fastTree(raw)
	if fast == nil {
		return false
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(raw, &doc); err != nil || len(doc.Content) == 0 {
		return true // not YAML at all: the locator is never built for such input
	}
	if err := sameLines(fast, doc.Content[0], "$"); err != nil {
		t.Errorf("%s: %v", name, err)
	}
	return true
}

// TestFastTree compares fastTree with yaml.v3 on every YAML file of the
// repository's testdata (the policies it is built for) and on edge cases.
func TestFastTree(t *testing.T) {
	accepted, total := 0, 0
	err := filepath.WalkDir("..", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.Contains(p, "testdata") ||
			!(strings.HasSuffix(p, ".yaml") || strings.HasSuffix(p, ".yml")) {
			return err
		}
		raw, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		total++
		if checkFastTree(t, p, raw) {
			accepted++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("fast path took %d of %d testdata YAML files", accepted, total)
	if accepted == 0 {
		t.Error("the fast path took no testdata policy")
	}
	for _, tc := range fastTreeCases {
		checkFastTree(t, fmt.Sprintf("%q", tc), []byte(tc))
	}
}

var fastTreeCases = []string{
	"a: 1\nb:\n  c: 2\n",
	"a:\n- x\n- y\nb: 1\n",
	"a:\n  - x: 1\n    y: 2\n  - - p\n    - q\n",
	"- a\n- b: c\n  d: e\n",
	"# c\n\na: 1 # c\nb: 'x'\nc: \"y\"\n",
	"a:\n  b\n",
	"a: b\n  c\n",
	"a:\n-\n  b: 1\n",
	"a: |\n  x\n",
	"a: {b: 1}\n",
	"a: [1]\n",
	"a: &x 1\nb: *x\n",
	"a:\n\tb: 1\n",
	"---\na: 1\n",
	"a: 1\n---\nb: 2\n",
	"a: \"x # y\"\n",
	"a:\n  b: 1\n c: 2\n",
	"a: 1\na: 2\n",
	"- - - a\n",
	"a:\n",
	"a:\nb:\n",
	"a: x:y\n",
	"\"a\": 1\n",
	"a: 'it''s'\n",
	"a:\n  - b\n  c: 1\n",
}

func FuzzFastTree(f *testing.F) {
	for _, tc := range fastTreeCases {
		f.Add([]byte(tc))
	}
	for _, p := range []string{"testdata/good/triage.yaml", "../openshell/testdata/decide/policy.yaml"} {
		if raw, err := os.ReadFile(p); err == nil {
			f.Add(raw)
		}
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		checkFastTree(t, "input", raw)
	})
}
