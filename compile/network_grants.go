package compile

import (
	"gopkg.in/yaml.v3"

	"fmt"
	"regexp"
	"strings"

	"github.com/fullsend-ai/agent-sandbox/agentdef"
	"github.com/fullsend-ai/agent-sandbox/openshell"
	"github.com/fullsend-ai/agent-sandbox/openshell/glob"
	"github.com/fullsend-ai/agent-sandbox/placeholder"
	"github.com/fullsend-ai/agent-sandbox/policycue"
)

// supportsEndpoint reports whether the target OpenShell version can express
// a catalog endpoint. A GraphQL endpoint routed by path needs protocol
// graphql and endpoint path routing, which arrived together in v0.0.37
// (select_l7_config_for_path in crates/openshell-supervisor-network/src/l7/
// relay.rs, L7AllowDef.operation_type in crates/openshell-policy/src/lib.rs;
// both present @ v0.0.83 and @ v0.0.111). Below that release the endpoint is
// left out with a warning naming what the agent gets instead.
func (b *builder) supportsEndpoint(profile string, ep policycue.CatalogEndpoint, at agentdef.Pos) bool {
	if ep.Protocol != openshell.ProtocolGraphQL || openshell.Supports(openshell.FeatureProtocolGraphQL, b.version) {
		return true
	}
	if b.gated == nil {
		b.gated = map[string]bool{}
	}
	if !b.gated[profile] {
		b.gated[profile] = true
		since, _ := openshell.Since(openshell.FeatureProtocolGraphQL)
		b.warnf(at, "tools", fmt.Sprintf("target OpenShell %s or later (--openshell-version), or use gh api with REST paths", since),
			"profile %s: OpenShell %s cannot inspect GraphQL (protocol graphql and endpoint path routing arrived in %s), so POST %s%s is left out: "+
				"the agent gets the REST rules only, and gh commands that read or write through GraphQL (gh issue view/list, gh pr list, gh label list, gh issue comment) fail",
			profile, b.version, since, ep.Host, ep.Path)
	}
	return false
}

// graphQLReads reports whether a rule only reads: a GraphQL query. Every
// other operation type (mutation, subscription, "*") may write.
func graphQLReads(m openshell.Match) bool {
	return strings.EqualFold(m.OperationType, "query")
}

// ruleLabel names a rule for messages: "POST /x" or "graphql mutation addComment".
func ruleLabel(m openshell.Match) string {
	if m.OperationType == "" {
		return m.Method + " " + m.Path
	}
	s := "graphql " + m.OperationType
	if m.OperationName != "" {
		s += " " + m.OperationName
	}
	if len(m.Fields) > 0 {
		s += " {" + strings.Join(m.Fields, ", ") + "}"
	}
	return s
}

// modelAPIHost reports whether host is one of the model API hosts of the
// agent's runtime (any provider): the agent's own channel, which every tier
// needs. A catalog host with a host-label placeholder,
// {{GCP_REGION}}-aiplatform.googleapis.com, matches a literal host whose
// label part is a valid value (us-east5-aiplatform.googleapis.com).
func (b *builder) modelAPIHost(host string) bool {
	rt, ok := b.cat.Runtimes[b.runtime]
	if !ok {
		return false
	}
	for _, prov := range rt.Providers {
		for _, name := range prov.Profiles {
			for _, ep := range b.cat.Profiles[name].Endpoints {
				if hostMatchesTemplate(ep.Host, host) {
					return true
				}
			}
		}
	}
	return false
}

// hostMatchesTemplate matches a literal host against a catalog host that
// may hold host-label placeholders; each placeholder's part must validate.
func hostMatchesTemplate(tmpl, host string) bool {
	if tmpl == host {
		return true
	}
	refs, err := placeholder.Find(tmpl)
	if err != nil || len(refs) == 0 || !agentdef.AllHostLabel(refs) {
		return false
	}
	m := templateRegexp(tmpl, refs).FindStringSubmatch(host)
	if m == nil {
		return false
	}
	for i, r := range refs {
		if placeholder.Validate(r.Name, m[i+1]) != nil {
			return false
		}
	}
	return true
}

// templateRegexp matches a whole host against tmpl, capturing the part
// each placeholder of refs stands for (a host label part).
func templateRegexp(tmpl string, refs []placeholder.Ref) *regexp.Regexp {
	var re strings.Builder
	re.WriteString("^")
	last := 0
	for _, r := range refs {
		re.WriteString(regexp.QuoteMeta(tmpl[last:r.Start]))
		re.WriteString("([a-z0-9-]+)")
		last = r.End
	}
	re.WriteString(regexp.QuoteMeta(tmpl[last:]))
	re.WriteString("$")
	return regexp.MustCompile(re.String())
}

// bedrockModel matches Amazon Bedrock model ids and inference profiles for
// Anthropic models: anthropic.claude-..., us.anthropic.claude-...,
// global.anthropic.claude-..., and Bedrock ARNs.
var bedrockModel = regexp.MustCompile(`^(?:(?:[a-z]{2,6}(?:-gov)?)\.)?anthropic\.|^arn:aws[a-z-]*:bedrock:`)

// inferProvider names the model provider a Claude Code model id implies:
// vertex for a Vertex id (claude-sonnet-4-6@default, claude-sonnet-4@20250514),
// bedrock for a Bedrock id (anthropic.claude-..., us.anthropic.claude-...),
// "" when the id does not say (claude-sonnet-4-6 is valid on several).
func inferProvider(model string) string {
	switch {
	case bedrockModel.MatchString(model):
		return "bedrock"
	case strings.Contains(model, "@"):
		return "vertex"
	}
	return ""
}

// graphQLKey renders a rule's GraphQL selectors for merging and sorting.
func graphQLKey(m openshell.Match) string {
	if m.OperationType == "" && m.OperationName == "" && len(m.Fields) == 0 {
		return ""
	}
	return m.OperationType + "|" + m.OperationName + "|" + strings.Join(m.Fields, ",")
}

// keyPart turns a host or an endpoint path into its part of a policy key:
// lower-case letters and digits kept, "*" spelled "wildcard", anything else
// "_", with no "_" at either end (/graphql -> graphql, *.googleapis.com ->
// wildcard_googleapis_com); "" for no path.
func keyPart(p string) string {
	var sb strings.Builder
	for _, r := range strings.ToLower(p) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			sb.WriteRune(r)
		case r == '*':
			sb.WriteString("wildcard")
		default:
			sb.WriteByte('_')
		}
	}
	return strings.Trim(sb.String(), "_")
}

// fragmentBinaries resolves the binaries of a fragment's network policy.
// Experiment 0005 wrote "**/curl" and "**/claude": any executable of that
// name anywhere. A glob whose last element names a command of the binary
// registry, or the runtime's own executable, becomes that command's
// catalog paths, with a warning; other globs are kept for lint to judge.
func (b *builder) fragmentBinaries(name, key string, in []openshell.Binary) []string {
	var out []string
	for _, bin := range in {
		base, ok := strings.CutPrefix(bin.Path, "**/")
		if !ok || strings.ContainsAny(base, "*?[/") {
			out = append(out, bin.Path)
			continue
		}
		var paths []string
		switch cb, known := b.cat.Binaries[base]; {
		case base == b.runtime:
			// The runtime itself: its entry executable, not the
			// interpreter it runs on (node may run anything).
			paths = b.cat.Runtimes[b.runtime].Binaries[:1]
		case known:
			paths = cb.Paths
		}
		if len(paths) == 0 {
			out = append(out, bin.Path)
			continue
		}
		b.warnf(agentdef.Pos{File: name, Line: 1}, "network_policies."+key+".binaries",
			"name the executables, e.g. "+paths[0],
			"binary %q in policy fragment %s matches any executable named %s anywhere; narrowed to the catalog's %s", bin.Path, name, base, strings.Join(paths, ", "))
		out = append(out, paths...)
	}
	return out
}

// fragmentModelAPI reports whether a fragment endpoint is the agent's model
// API (experiment 0005's "*.googleapis.com" over tcp for Vertex), which the
// runtime baseline already grants with the project and region pinned; the
// endpoint is dropped with a warning instead of widening the baseline.
func (b *builder) fragmentModelAPI(name, key string, ep openshell.Endpoint) bool {
	prov := b.cat.Runtimes[b.runtime].Providers[b.provider]
	for _, pn := range prov.Profiles {
		for _, pe := range b.cat.Profiles[pn].Endpoints {
			if ep.Host == pe.Host || (strings.Contains(ep.Host, "*") && glob.Match(strings.ToLower(ep.Host), strings.ToLower(pe.Host), '.')) {
				b.warnf(agentdef.Pos{File: name, Line: 1}, "network_policies."+key,
					"remove the endpoint; the runtime's "+b.provider+" baseline (profile "+pn+") reaches the model API with the project and region pinned",
					"endpoint %s in policy fragment %s is the model API of provider %s: the baseline grants it, the fragment's wider grant is dropped", ep.Host, name, b.provider)
				return true
			}
		}
	}
	return false
}

// fragmentHostPositions returns, per network policy key, the position of
// each endpoint's host in a policy fragment, so that what is wrong with an
// endpoint is reported at the fragment's line.
func fragmentHostPositions(name string, data []byte) map[string][]agentdef.Pos {
	var doc yaml.Node
	if yaml.Unmarshal(data, &doc) != nil || len(doc.Content) == 0 {
		return nil
	}
	out := map[string][]agentdef.Pos{}
	nps := mappingValue(doc.Content[0], "network_policies")
	if nps == nil || nps.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(nps.Content); i += 2 {
		key := nps.Content[i].Value
		eps := mappingValue(nps.Content[i+1], "endpoints")
		if eps != nil && eps.Kind == yaml.SequenceNode {
			out[key] = append(out[key], hostPositions(name, eps)...)
		}
	}
	return out
}

// hostPositions is the position in file name of each endpoint's host in
// the endpoints sequence eps (of the endpoint itself when it has none).
func hostPositions(name string, eps *yaml.Node) []agentdef.Pos {
	var out []agentdef.Pos
	for _, ep := range eps.Content {
		at := ep
		if h := mappingValue(ep, "host"); h != nil {
			at = h
		}
		out = append(out, agentdef.Pos{File: name, Line: at.Line, Column: at.Column})
	}
	return out
}

// mappingValue returns the value node of key in mapping n, or nil.
func mappingValue(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}
