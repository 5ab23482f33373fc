package compile

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/fullsend-ai/agent-sandbox/openshell"
	"github.com/fullsend-ai/agent-sandbox/openshell/decide"
	"github.com/fullsend-ai/agent-sandbox/placeholder"
)

// widerLayers warns, at the line that names each provider, when its layer
// allows a request the agent's own declared rules for the same host and
// port deny (the built-in github profile lets gh read every repository
// while the agent declares one): the layer is wider than the agent's
// declaration. The probes are the agent's own REST rules with every
// placeholder and glob pointed elsewhere, then a path none declares; the
// first the agent's policy denies and the layer allows is named.
func (b *builder) widerLayers(own *openshell.Policy, comp *openshell.Policy, layers []ProviderLayer) {
	mine := own.Clone()
	if _, err := openshell.ApplyPlaceholders(mine, placeholder.Examples()); err != nil {
		return
	}
	self, err := decide.New(mine, b.version)
	if err != nil {
		return
	}
	for _, l := range layers {
		np := comp.NetworkPolicies[l.Key]
		alone, err := decide.New(&openshell.Policy{Version: 1, NetworkPolicies: map[string]openshell.NetworkPolicy{l.Key: np}}, b.version)
		if err != nil {
			continue
		}
		if req, d, ok := widerRequest(own, np, self, alone); ok {
			b.warnf(l.Pos, "sandbox.providers", l.narrowHint(),
				"provider %s allows %s (%s), which the agent's own rules for that host deny: the layer is wider than the agent declares; in %s",
				l.Name, req, d.Reason, l.cite(comp, d.Path))
		}
	}
}

// widerRequest finds a probe (see widerLayers), built from the agent's own
// policy as written (placeholders open), on a host both the layer np and
// it declare that self denies and alone (the
// layer by itself) allows.
func widerRequest(own *openshell.Policy, np openshell.NetworkPolicy, self, alone *decide.Decider) (string, decide.Decision, bool) {
	for _, lep := range np.Endpoints {
		for _, key := range own.PolicyKeys() {
			onp := own.NetworkPolicies[key]
			for _, oep := range onp.Endpoints {
				if !strings.EqualFold(oep.Host, lep.Host) || oep.Port != lep.Port || len(oep.Rules) == 0 {
					continue
				}
				for _, probe := range probes(oep, onp.Binaries) {
					r, err := decide.ParseRequest(probe)
					if err != nil {
						continue
					}
					if d := alone.Decide(r); d.Allowed && !self.Decide(r).Allowed {
						return probe, d, true
					}
				}
			}
		}
	}
	return "", decide.Decision{}, false
}

// elsewhere matches what probes repoint: a placeholder's example value
// position is not known after substitution, so the declared rule's
// placeholders ({{X}}) and globs are replaced before it.
var elsewhere = regexp.MustCompile(`\{\{[A-Z0-9_]+\}\}|\*\*|\*`)

// probes are the requests widerLayers tries for one of the agent's own
// endpoints: each REST rule's method on its path pointed elsewhere
// ({{OWNER}} -> elsewhere, ** -> probe), then GET on a path none declares,
// from each of the endpoint policy's binaries.
func probes(ep openshell.Endpoint, bins []openshell.Binary) []string {
	var paths []string
	for _, r := range ep.Rules {
		m := r.Allow
		if m.Path == "" || m.Command != "" {
			continue
		}
		method := m.Method
		if method == "" || method == "*" {
			method = "GET"
		}
		paths = append(paths, method+" "+elsewhere.ReplaceAllStringFunc(m.Path, func(s string) string {
			if strings.HasPrefix(s, "{{") {
				return "elsewhere"
			}
			return "probe"
		}))
	}
	paths = append(paths, "GET /fullsend-undeclared-probe")
	host := ep.Host
	if ep.Port != 443 && ep.Port != 0 {
		host = fmt.Sprintf("%s:%d", host, ep.Port)
	}
	var out []string
	for _, b := range bins {
		if strings.ContainsAny(b.Path, "*?[") {
			continue
		}
		for _, p := range paths {
			method, path, _ := strings.Cut(p, " ")
			out = append(out, fmt.Sprintf("%s https://%s%s from %s", method, host, path, b.Path))
		}
	}
	return out
}
