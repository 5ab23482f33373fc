package compile

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/fullsend-ai/agent-sandbox/openshell"
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
func (b *builder) supportsEndpoint(profile string, ep policycue.CatalogEndpoint, at Pos) bool {
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
	if err != nil || len(refs) == 0 || !allHostLabel(refs) {
		return false
	}
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
	m := regexp.MustCompile(re.String()).FindStringSubmatch(host)
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

// pathKey turns an endpoint path into a policy key suffix: /graphql ->
// graphql; "" for no path.
func pathKey(p string) string {
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
