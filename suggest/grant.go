package suggest

import (
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/fullsend-ai/agent-sandbox/openshell"
)

// Grant is one thing the patch lets a binary do that it could not before:
// open Host:Port and send Method to a path that Path matches. Method "*" is
// any method (an L4 endpoint, access: full), Path "/**" any path; Path is
// the rule as the patch writes it (placeholders, a "*" segment).
type Grant struct {
	Binary string `json:"binary"`
	Host   string `json:"host"`
	Port   int    `json:"port"`
	Method string `json:"method"`
	Path   string `json:"path"`
}

// accessMethods are the methods of OpenShell's access presets (read-only:
// openshell.IsReadMethod); "*" is every method.
var accessMethods = map[string][]string{
	openshell.AccessReadOnly:  {"GET", "HEAD", "OPTIONS"},
	openshell.AccessReadWrite: {"GET", "HEAD", "OPTIONS", "POST", "PUT", "PATCH"},
	openshell.AccessFull:      {"*"},
}

// grantsOf is everything the patch grants through s, read from the change
// itself and the compiled policy it edits, never from a log's text: a new
// endpoint's binaries times its rules (or its provisional read-only
// access), a new rule for each binary its endpoint entry allows after the
// patch, a new binary for each rule its entry holds after the patch.
func (p *planner) grantsOf(s *Suggestion) []Grant {
	if len(s.requests) == 0 {
		return nil
	}
	host, port := s.requests[0].Host, s.requests[0].Port
	var bins []string
	var rules [][2]string
	switch s.Change {
	case "add-endpoint":
		bins, rules = s.binaries, s.endpointRules()
	case "add-rule":
		bins, rules = p.entryBinaries(s, host, port), [][2]string{splitRule(s.Value)}
	case "add-binary":
		bins, rules = []string{s.Value}, p.entryRules(s)
	}
	var out []Grant
	rules = withHead(rules)
	for _, b := range bins {
		for _, r := range rules {
			out = append(out, Grant{Binary: b, Host: host, Port: port, Method: r[0], Path: r[1]})
		}
	}
	return out
}

// endpointRules are a new endpoint's (method, path) pairs.
func (s *Suggestion) endpointRules() [][2]string {
	if s.Provisional {
		return presetRules(openshell.AccessReadOnly)
	}
	var out [][2]string
	for _, r := range s.Rules {
		out = append(out, splitRule(r))
	}
	return out
}

// presetRules are an access preset's (method, any path) pairs.
func presetRules(access string) [][2]string {
	var out [][2]string
	for _, m := range accessMethods[access] {
		out = append(out, [2]string{m, "/**"})
	}
	return out
}

func splitRule(r string) [2]string {
	m, path, _ := strings.Cut(r, " ")
	return [2]string{m, path}
}

// sameEntry reports whether two suggestions edit the same endpoint entry.
func sameEntry(a, b *Suggestion) bool {
	ea, _, _ := strings.Cut(a.YAMLPath, "].")
	eb, _, _ := strings.Cut(b.YAMLPath, "].")
	return a.File == b.File && ea == eb && strings.HasPrefix(a.YAMLPath, "sandbox.endpoints[")
}

// entryBinaries are the binaries s's endpoint entry allows after the
// patch: those that reach host:port now, and those the patch adds to it.
func (p *planner) entryBinaries(s *Suggestion, host string, port int) []string {
	_, np := p.policyServing(host, port)
	bins := p.reaching(np, host, port)
	for _, o := range p.sugs {
		if o.Change == "add-binary" && sameEntry(o, s) && !slices.Contains(bins, o.Value) {
			bins = append(bins, o.Value)
		}
	}
	return bins
}

// entryRules are the (method, path) pairs s's endpoint entry declares
// after the patch: its own rules: and access:, as written in its file (a
// binary gets the rules declared for it, never another source's on the
// same host), and the rules the patch adds to it; any request when it
// declares neither.
func (p *planner) entryRules(s *Suggestion) [][2]string {
	var rules [][2]string
	if src, err := p.source(s.File); err == nil {
		if e, err := src.entryAt(s.YAMLPath); err == nil {
			rules = declaredRules(e.node)
		}
	}
	for _, o := range p.sugs {
		if o.Change == "add-rule" && sameEntry(o, s) {
			rules = append(rules, splitRule(o.Value))
		}
	}
	if len(rules) == 0 {
		return [][2]string{{"*", "/**"}}
	}
	return rules
}

// declaredRules are the (method, path) pairs of an endpoint entry's
// access: preset and its "METHOD /path" rules.
func declaredRules(entry *yaml.Node) [][2]string {
	var out [][2]string
	if a := get(entry, "access"); a != nil && a.Kind == yaml.ScalarNode {
		out = append(out, presetRules(a.Value)...)
	}
	if rs := get(entry, "rules"); rs != nil && rs.Kind == yaml.SequenceNode {
		for _, r := range rs.Content {
			if r.Kind == yaml.ScalarNode {
				out = append(out, splitRule(r.Value))
			}
		}
	}
	return out
}

// withHead adds a HEAD pair after every GET pair: a GET rule also allows
// HEAD (sandbox-policy.rego:716-727@v0.0.111, decide's methodMatches).
func withHead(rules [][2]string) [][2]string {
	var out [][2]string
	for _, r := range rules {
		out = append(out, r)
		if r[0] == "GET" && !slices.Contains(rules, [2]string{"HEAD", r[1]}) {
			out = append(out, [2]string{"HEAD", r[1]})
		}
	}
	return out
}
