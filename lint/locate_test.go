package lint

import (
	"bytes"
	"testing"
)

const locatePolicy = `version: 1
network_policies:
  gh:
    endpoints:
      - host: api.github.com
        port: 443
      - host: github.com
    binaries:
      - path: /usr/bin/gh
`

func TestLineLocator(t *testing.T) {
	tests := []struct {
		path string
		want int
	}{
		{"version", 1},
		{"network_policies.gh", 3},
		{"network_policies.gh.endpoints[1].host", 7},
		{"network_policies.gh.endpoints[0].port", 6},
		{"network_policies.gh.binaries[0].path", 9},
		{"network_policies.gh.endpoints[2].host", 4},  // no third endpoint: the list's line
		{"network_policies.gh.endpoints[-1].host", 4}, // a negative index names no item
		{"network_policies.gh.endpoints[x]", 4},
		{"network_policies.gh.endpoints[99999999999999999999999]", 4},
		{"network_policies.nope.endpoints[0]", 2},
		{"", 0},
	}
	lines := &lazyLines{raw: []byte(locatePolicy)}
	for _, tt := range tests {
		if got := lines.line(tt.path); got != tt.want {
			t.Errorf("line(%q) = %d, want %d", tt.path, got, tt.want)
		}
	}
	if got := (&lazyLines{raw: []byte("version: [\n")}).line("version"); got != 0 {
		t.Errorf("a policy that does not parse: line = %d, want 0", got)
	}
}

// FuzzLineLocator: a rule's message path and the raw policy are both input
// the engine does not control; locating never panics and names a line of
// the document or none.
func FuzzLineLocator(f *testing.F) {
	f.Add([]byte(locatePolicy), "network_policies.gh.endpoints[1].host")
	f.Add([]byte(locatePolicy), "network_policies.gh.endpoints[-1]")
	f.Add([]byte("a: &x [1, *x]\n"), "a[0][0]")
	f.Add([]byte("- [a, b]\n"), "[0][1]")
	f.Fuzz(func(t *testing.T, raw []byte, path string) {
		got := (&lazyLines{raw: raw}).line(path)
		if got < 0 || got > bytes.Count(raw, []byte("\n"))+1 {
			t.Fatalf("line(%q) = %d, outside the document", path, got)
		}
	})
}
