package compile

import (
	"testing"

	"github.com/fullsend-ai/agent-sandbox/openshell"
	"github.com/fullsend-ai/agent-sandbox/openshell/decide"
	"github.com/fullsend-ai/agent-sandbox/placeholder"
)

// TestWiderRequest: a provider layer that reads all of api.github.com is
// wider than an agent that declares one repository (the probe names the
// request), and not wider than an agent that declares as much. An agent
// binary that is a glob is skipped (a probe names one executable), so an
// agent whose only binary is a glob gets no warning however narrow its
// rules, even where the layer lists the same glob (the layer's "/usr/bin/*"
// is there so that dropping the skip fails this case).
func TestWiderRequest(t *testing.T) {
	layer := openshell.NetworkPolicy{
		Name:      "layer",
		Endpoints: []openshell.Endpoint{{Host: "api.github.com", Port: 443, Protocol: "rest", Access: "read-only", Enforcement: "enforce"}},
		Binaries:  []openshell.Binary{{Path: "/usr/bin/gh"}, {Path: "/usr/bin/*"}},
	}
	for _, tc := range []struct {
		name, bin string
		rules     []string // the agent's own GET paths on api.github.com
		want      string   // the probe named, "" for no warning
	}{
		{name: "narrower agent", bin: "/usr/bin/gh", rules: []string{"/repos/{{OWNER}}/{{REPO_NAME}}/**"},
			want: "GET https://api.github.com/repos/elsewhere/elsewhere/probe from /usr/bin/gh"},
		{name: "undeclared path", bin: "/usr/bin/gh", rules: []string{"/repos/acme/widgets"},
			want: "GET https://api.github.com/fullsend-undeclared-probe from /usr/bin/gh"},
		{name: "agent as wide as the layer", bin: "/usr/bin/gh", rules: []string{"/**"}},
		{name: "glob binary skipped", bin: "/usr/bin/*", rules: []string{"/repos/{{OWNER}}/{{REPO_NAME}}/**"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ep := openshell.Endpoint{Host: "api.github.com", Port: 443, Protocol: "rest", Enforcement: "enforce"}
			for _, p := range tc.rules {
				ep.Rules = append(ep.Rules, openshell.Rule{Allow: openshell.Match{Method: "GET", Path: p}})
			}
			own := &openshell.Policy{Version: 1, NetworkPolicies: map[string]openshell.NetworkPolicy{
				"own": {Name: "own", Endpoints: []openshell.Endpoint{ep}, Binaries: []openshell.Binary{{Path: tc.bin}}},
			}}
			self := layerDecider(t, map[string]openshell.NetworkPolicy{"own": ownExamples(t, own)})
			alone := layerDecider(t, map[string]openshell.NetworkPolicy{"layer": layer})
			got, _, ok := widerRequest(own, layer, self, alone)
			if ok != (tc.want != "") || got != tc.want {
				t.Fatalf("got %q (%v), want %q", got, ok, tc.want)
			}
		})
	}
}

// ownExamples is own's network policy with the placeholders' example
// values, as widerLayers decides with.
func ownExamples(t *testing.T, own *openshell.Policy) openshell.NetworkPolicy {
	t.Helper()
	mine := own.Clone()
	if _, err := openshell.ApplyPlaceholders(mine, placeholder.Examples()); err != nil {
		t.Fatal(err)
	}
	return mine.NetworkPolicies["own"]
}

// layerDecider decides with the network policies nps alone.
func layerDecider(t *testing.T, nps map[string]openshell.NetworkPolicy) *decide.Decider {
	t.Helper()
	d, err := decide.New(&openshell.Policy{Version: 1, NetworkPolicies: nps}, "v0.0.111")
	if err != nil {
		t.Fatal(err)
	}
	return d
}
