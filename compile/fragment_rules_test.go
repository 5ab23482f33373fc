package compile

import (
	"testing"

	"github.com/fullsend-ai/agent-sandbox/openshell"
)

// A policy fragment's rules are blamed on their own lines, not on their
// endpoint's host line (policy diff shows the line a change added).
func TestFragmentRulePositions(t *testing.T) {
	frag := `version: 1
network_policies:
  gh:
    name: gh
    endpoints:
      - host: api.github.com
        port: 443
        protocol: rest
        rules:
          - allow: {method: GET, path: /a}
          - allow:
              method: GET
              path: /b
      - host: uploads.github.com
        port: 443
        protocol: rest
        access: read-only
`
	p, err := openshell.Unmarshal([]byte(frag))
	if err != nil {
		t.Fatal(err)
	}
	hosts, rules := fragmentHostPositions("f.yaml", []byte(frag)), fragmentRulePositions("f.yaml", []byte(frag))
	for _, tc := range []struct {
		endpoint int
		want     []int // each rule's line
	}{
		{0, []int{10, 11}},
		{1, nil},
	} {
		_, from := fragmentSource("f.yaml", "gh", tc.endpoint, hosts["gh"])
		c := fragmentContribution(p.NetworkPolicies["gh"].Endpoints[tc.endpoint], nil, from, rules["gh"][tc.endpoint])
		if len(c.rules) != len(tc.want) {
			t.Fatalf("endpoint %d: %d rules, want %d", tc.endpoint, len(c.rules), len(tc.want))
		}
		for i, r := range c.rules {
			if got := r.From[0]; got.Line != tc.want[i] || got.File != "f.yaml" || got.Reason != from.Reason {
				t.Errorf("endpoint %d rule %d: from %+v, want line %d", tc.endpoint, i, got, tc.want[i])
			}
		}
	}
}
