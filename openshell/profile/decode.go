package profile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"golang.org/x/mod/semver"
	"gopkg.in/yaml.v3"

	"github.com/fullsend-ai/agent-sandbox/internal/suggest"
	"github.com/fullsend-ai/agent-sandbox/openshell"
)

// Since is the first OpenShell release with provider profiles (profiles.rs,
// compose.rs and the providers_v2_enabled setting all appear at v0.0.37).
const Since = "v0.0.37"

// field is one key of a serde struct and the first release whose struct has
// it (computed from profiles.rs at every tag v0.0.37..v0.0.111).
type field struct{ name, since string }

// The structs of profiles.rs and the release that added each field.
var (
	profileFields = []field{{"id", Since}, {"resource_version", "v0.0.69"}, {"annotations", "v0.0.84"},
		{"display_name", Since}, {"description", Since}, {"category", Since}, {"credentials", Since},
		{"endpoints", Since}, {"binaries", Since}, {"inference_capable", Since}, {"discovery", "v0.0.48"},
		{"source", "v0.0.88"}, {"scope", "v0.0.88"}}
	credentialFields = []field{{"name", Since}, {"description", Since}, {"env_vars", Since}, {"required", Since},
		{"auth_style", Since}, {"header_name", Since}, {"query_param", Since}, {"refresh", "v0.0.44"},
		{"path_template", "v0.0.58"}, {"token_grant", "v0.0.61"}}
	refreshFields = []field{{"strategy", "v0.0.44"}, {"token_url", "v0.0.44"}, {"scopes", "v0.0.44"},
		{"refresh_before_seconds", "v0.0.44"}, {"max_lifetime_seconds", "v0.0.44"}, {"material", "v0.0.44"},
		{"additional_outputs", "v0.0.86"}}
	materialFields   = []field{{"name", "v0.0.44"}, {"description", "v0.0.44"}, {"required", "v0.0.44"}, {"secret", "v0.0.44"}}
	outputFields     = []field{{"output", "v0.0.86"}, {"credential", "v0.0.86"}}
	tokenGrantFields = []field{{"token_endpoint", "v0.0.61"}, {"audience", "v0.0.61"}, {"jwt_svid_audience", "v0.0.61"},
		{"client_assertion_type", "v0.0.61"}, {"scopes", "v0.0.61"}, {"cache_ttl_seconds", "v0.0.61"},
		{"audience_overrides", "v0.0.61"}}
	overrideFields  = []field{{"host", "v0.0.61"}, {"port", "v0.0.61"}, {"path", "v0.0.61"}, {"audience", "v0.0.61"}, {"scopes", "v0.0.61"}}
	discoveryFields = []field{{"credentials", "v0.0.48"}}
	endpointFields  = []field{{"host", Since}, {"port", Since}, {"protocol", Since}, {"tls", Since}, {"access", Since},
		{"enforcement", Since}, {"rules", Since}, {"allowed_ips", Since}, {"ports", Since}, {"deny_rules", Since},
		{"allow_encoded_slash", Since}, {"websocket_credential_rewrite", "v0.0.39"},
		{"request_body_credential_rewrite", "v0.0.39"}, {"allow_uninspected_credentials", "v0.0.110"},
		{"persisted_queries", Since}, {"graphql_persisted_queries", Since}, {"graphql_max_body_bytes", Since},
		{"json_rpc_max_body_bytes", "v0.0.72"}, {"mcp", "v0.0.72"}, {"path", Since},
		{"credential_signing", "v0.0.72"}, {"signing_service", "v0.0.72"}, {"signing_region", "v0.0.72"}}
	mcpFields     = []field{{"strict_tool_names", "v0.0.72"}, {"allow_all_known_mcp_methods", "v0.0.72"}}
	ruleFields    = []field{{"allow", Since}}
	matchFields   = []field{{"method", Since}, {"path", Since}, {"command", Since}, {"query", Since}, {"operation_type", Since}, {"operation_name", Since}, {"fields", Since}, {"params", "v0.0.92"}, {"tool", "v0.0.92"}}
	matcherFields = []field{{"glob", Since}, {"any", Since}}
	graphqlFields = []field{{"operation_type", Since}, {"operation_name", Since}, {"fields", Since}}
	binaryFields  = []field{{"path", Since}, {"harness", Since}}
)

// maxNodeVisits bounds the work on one document (alias expansion).
const maxNodeVisits = 200000

type decoder struct {
	file, version string
	diags         []openshell.Diagnostic
	budget        int
	pos           map[string]position
}

func (d *decoder) add(n *yaml.Node, path string, sev openshell.Severity, trap bool, code, hint, format string, args ...any) {
	line, col := 1, 1
	if n != nil && n.Line > 0 {
		line, col = n.Line, n.Column
	}
	d.diags = append(d.diags, openshell.Diagnostic{File: d.file, Line: line, Column: col, Path: EscapeControls(path),
		Severity: sev, Code: code, Message: EscapeControls(fmt.Sprintf(format, args...)), Hint: hint, Trap: trap})
}

// EscapeControls writes control and line-separator characters of s (which
// quotes profile content) as Go escapes, so that a value cannot forge a
// line of the report or of a CI log.
func EscapeControls(s string) string {
	if !strings.ContainsFunc(s, isControl) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if isControl(r) {
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func isControl(r rune) bool {
	return r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == 0x2028 || r == 0x2029 || r == 0xfeff
}

func (d *decoder) errorf(n *yaml.Node, path, code, hint, format string, args ...any) {
	d.add(n, path, openshell.SeverityError, false, code, hint, format, args...)
}

func (d *decoder) trapf(n *yaml.Node, path, code, hint, format string, args ...any) {
	d.add(n, path, openshell.SeverityWarning, true, code, hint, format, args...)
}

func (d *decoder) has(since string) bool { return semver.Compare(d.version, since) >= 0 }

// Decode parses one provider profile strictly, the way OpenShell at version
// deserializes it (serde_yml into ProviderTypeProfile), and returns the
// profile with the diagnostics of decoding: errors where serde fails,
// trap warnings for the keys it silently drops (unknown, or newer than
// version). The profile is nil when the document is not a mapping. Decode
// never panics.
func Decode(file string, data []byte, version string) (*Profile, []openshell.Diagnostic) {
	d := &decoder{file: file, budget: maxNodeVisits, pos: map[string]position{}}
	v, err := openshell.NormalizeVersion(version)
	if err != nil {
		d.errorf(nil, "", openshell.CodeVersionUnsupported, "", "%v", err)
		return nil, d.diags
	}
	d.version = v
	if !d.has(Since) {
		d.errorf(nil, "", CodeUnsupported, "target OpenShell "+Since+" or later",
			"OpenShell %s has no provider profiles (they appear at %s)", v, Since)
		return nil, d.diags
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			d.errorf(nil, "", CodeSyntax, "a profile needs at least id and display_name", "profile is empty")
			return nil, d.diags
		}
		d.errorf(&yaml.Node{Line: openshell.YAMLErrorLine(err), Column: 1}, "", CodeSyntax, "fix the YAML syntax", "%s", strings.TrimPrefix(err.Error(), "yaml: "))
		return nil, d.diags
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		d.errorf(&extra, "", CodeSyntax, "one profile per file", "more than one YAML document")
	}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	p := &Profile{File: file}
	vals := d.object(root, "", "a profile", profileFields)
	if vals == nil {
		return nil, d.diags
	}
	d.required(root, vals, "", "id", "display_name")
	p.ID = d.str(vals["id"], "id")
	p.ResourceVersion = uint64(d.uint(vals["resource_version"], "resource_version", 1<<64-1))
	p.Annotations = d.strMap(vals["annotations"], "annotations")
	p.DisplayName = d.str(vals["display_name"], "display_name")
	p.Description = d.str(vals["description"], "description")
	p.Category = d.category(vals["category"])
	for i, n := range d.seq(vals["credentials"], "credentials") {
		p.Credentials = append(p.Credentials, d.credential(n, fmt.Sprintf("credentials[%d]", i)))
	}
	for i, n := range d.seq(vals["endpoints"], "endpoints") {
		p.Endpoints = append(p.Endpoints, d.endpoint(n, fmt.Sprintf("endpoints[%d]", i)))
	}
	for i, n := range d.seq(vals["binaries"], "binaries") {
		p.Binaries = append(p.Binaries, d.binary(n, fmt.Sprintf("binaries[%d]", i)))
	}
	p.InferenceCapable = d.boolean(vals["inference_capable"], "inference_capable")
	if n := vals["discovery"]; n != nil && !isNull(n) {
		dv := d.object(n, "discovery", "discovery", discoveryFields)
		p.Discovery = d.strList(dv["credentials"], "discovery.credentials", false)
	}
	p.Source = d.str(vals["source"], "source")
	p.Scope = d.str(vals["scope"], "scope")
	p.pos = d.pos
	return p, d.diags
}

// object checks that n is a mapping for a struct with fields and returns the
// value of each known key. Unknown keys and keys newer than the target are
// trap warnings (serde drops them); a key twice is an error (serde's
// "duplicate field"). It returns nil when n is not a mapping.
func (d *decoder) object(n *yaml.Node, path, what string, fields []field) map[string]*yaml.Node {
	n = d.resolve(n, path)
	if n == nil {
		return nil
	}
	if isEmptyPlain(n) {
		return map[string]*yaml.Node{}
	}
	if n.Kind != yaml.MappingNode {
		d.errorf(n, path, CodeType, "", "%s must be a mapping, got %s", what, describe(n))
		return nil
	}
	vals := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := d.resolve(n.Content[i], path), n.Content[i+1]
		if k == nil {
			continue
		}
		key := k.Value
		sub := join(path, key)
		if _, dup := vals[key]; dup {
			d.errorf(k, sub, CodeDuplicateKey, "keep one", "duplicate field %q", key)
			continue
		}
		f, known := lookup(fields, key)
		switch {
		case !known:
			hint := "remove it, or fix its spelling"
			if key == "<<" {
				hint = "OpenShell does not apply YAML merge keys: write the fields out"
			} else if key == "credential_binding" {
				hint = "a credential_binding names a concrete provider and belongs in the sandbox policy, not a profile (grpc/provider.rs:2894-2903 @ v0.0.111)"
			} else if s := suggestField(fields, key); s != "" {
				hint = fmt.Sprintf("did you mean %s?", s)
			}
			d.trapf(k, sub, CodeUnknownField, hint, "unknown field %q in %s: OpenShell %s ignores it", key, what, d.version)
			continue
		case !d.has(f.since):
			d.trapf(k, sub, CodeFieldTooNew, "target OpenShell "+f.since+" or later, or remove it",
				"field %q appears at OpenShell %s: OpenShell %s ignores it", key, f.since, d.version)
			continue
		}
		vals[key] = v
		d.pos[sub] = position{v.Line, v.Column}
		if _, ok := d.pos[sub+"#key"]; !ok {
			d.pos[sub+"#key"] = position{k.Line, k.Column}
		}
	}
	if path != "" {
		d.pos[path] = position{n.Line, n.Column}
	}
	return vals
}

func lookup(fields []field, key string) (field, bool) {
	for _, f := range fields {
		if f.name == key {
			return f, true
		}
	}
	return field{}, false
}

// suggestField names a known field one edit or a separator away from key.
func suggestField(fields []field, key string) string {
	norm := func(s string) string { return strings.ToLower(strings.NewReplacer("-", "", "_", "").Replace(s)) }
	for _, f := range fields {
		if norm(f.name) == norm(key) || suggest.Distance(f.name, key) == 1 {
			return f.name
		}
	}
	return ""
}

func (d *decoder) required(at *yaml.Node, vals map[string]*yaml.Node, path string, names ...string) {
	for _, name := range names {
		if _, ok := vals[name]; !ok {
			d.errorf(at, join(path, name), CodeRequired, "add "+name+":", "missing field %q", name)
		}
	}
}

func (d *decoder) category(n *yaml.Node) string {
	raw := d.str(n, "category")
	c := strings.ReplaceAll(strings.ToLower(strings.TrimSpace(raw)), "-", "_")
	switch c {
	case "":
		return "other"
	case "other", "inference", "agent", "source_control", "messaging", "data", "knowledge":
		return c
	}
	// deserialize_category, profiles.rs:851-858 @ v0.0.111.
	d.errorf(n, "category", CodeType, "one of other, inference, agent, source_control, messaging, data, knowledge",
		"unsupported provider profile category: %s", raw)
	return ""
}

func (d *decoder) strategy(n *yaml.Node, path string) string {
	raw := d.str(n, path)
	s := strings.ReplaceAll(strings.ToLower(strings.TrimSpace(raw)), "-", "_")
	switch s {
	case "", "static", "external", "oauth2_refresh_token", "oauth2_client_credentials", "google_service_account_jwt":
		return s
	case "aws_sts_assume_role":
		if d.has("v0.0.86") {
			return s
		}
	}
	// deserialize_refresh_strategy, profiles.rs:871-879; provider_refresh_strategy_from_yaml
	// knows aws_sts_assume_role from v0.0.86.
	d.errorf(n, path, CodeType, "", "unsupported provider refresh strategy: %s", raw)
	return ""
}

func (d *decoder) credential(n *yaml.Node, path string) Credential {
	var c Credential
	vals := d.object(n, path, "a credential", credentialFields)
	if vals == nil {
		return c
	}
	d.required(n, vals, path, "name")
	c.Name = d.str(vals["name"], path+".name")
	c.Description = d.str(vals["description"], path+".description")
	c.EnvVars = d.strList(vals["env_vars"], path+".env_vars", false)
	c.Required = d.boolean(vals["required"], path+".required")
	c.AuthStyle = d.str(vals["auth_style"], path+".auth_style")
	c.HeaderName = d.str(vals["header_name"], path+".header_name")
	c.QueryParam = d.str(vals["query_param"], path+".query_param")
	c.PathTemplate = d.str(vals["path_template"], path+".path_template")
	if r := vals["refresh"]; r != nil && !isNull(r) {
		c.Refresh = d.refresh(r, path+".refresh")
	}
	if t := vals["token_grant"]; t != nil && !isNull(t) {
		c.TokenGrant = d.tokenGrant(t, path+".token_grant")
	}
	return c
}

func (d *decoder) refresh(n *yaml.Node, path string) *Refresh {
	r := &Refresh{}
	vals := d.object(n, path, "refresh", refreshFields)
	if vals == nil {
		return r
	}
	r.Strategy = d.strategy(vals["strategy"], path+".strategy")
	r.TokenURL = d.str(vals["token_url"], path+".token_url")
	r.Scopes = d.strList(vals["scopes"], path+".scopes", false)
	r.RefreshBeforeSeconds = d.int64(vals["refresh_before_seconds"], path+".refresh_before_seconds")
	r.MaxLifetimeSeconds = d.int64(vals["max_lifetime_seconds"], path+".max_lifetime_seconds")
	for i, m := range d.seq(vals["material"], path+".material") {
		p := fmt.Sprintf("%s.material[%d]", path, i)
		mv := d.object(m, p, "refresh material", materialFields)
		if mv == nil {
			continue
		}
		d.required(m, mv, p, "name")
		r.Material = append(r.Material, Material{Name: d.str(mv["name"], p+".name"), Description: d.str(mv["description"], p+".description"),
			Required: d.boolean(mv["required"], p+".required"), Secret: d.boolean(mv["secret"], p+".secret")})
	}
	for i, o := range d.seq(vals["additional_outputs"], path+".additional_outputs") {
		p := fmt.Sprintf("%s.additional_outputs[%d]", path, i)
		ov := d.object(o, p, "an additional output", outputFields)
		if ov == nil {
			continue
		}
		d.required(o, ov, p, "output", "credential")
		r.AdditionalOutputs = append(r.AdditionalOutputs, Output{Output: d.str(ov["output"], p+".output"), Credential: d.str(ov["credential"], p+".credential")})
	}
	return r
}

func (d *decoder) tokenGrant(n *yaml.Node, path string) *TokenGrant {
	t := &TokenGrant{}
	vals := d.object(n, path, "token_grant", tokenGrantFields)
	if vals == nil {
		return t
	}
	d.required(n, vals, path, "token_endpoint")
	t.TokenEndpoint = d.str(vals["token_endpoint"], path+".token_endpoint")
	t.Audience = d.str(vals["audience"], path+".audience")
	t.JWTSVIDAudience = d.str(vals["jwt_svid_audience"], path+".jwt_svid_audience")
	t.ClientAssertionType = d.str(vals["client_assertion_type"], path+".client_assertion_type")
	t.Scopes = d.strList(vals["scopes"], path+".scopes", false)
	t.CacheTTLSeconds = d.int64(vals["cache_ttl_seconds"], path+".cache_ttl_seconds")
	for i, o := range d.seq(vals["audience_overrides"], path+".audience_overrides") {
		p := fmt.Sprintf("%s.audience_overrides[%d]", path, i)
		ov := d.object(o, p, "an audience override", overrideFields)
		if ov == nil {
			continue
		}
		d.required(o, ov, p, "audience")
		t.AudienceOverrides = append(t.AudienceOverrides, AudienceOverride{Host: d.str(ov["host"], p+".host"),
			Port: uint32(d.uint(ov["port"], p+".port", 1<<32-1)), Path: d.str(ov["path"], p+".path"),
			Audience: d.str(ov["audience"], p+".audience"), Scopes: d.strList(ov["scopes"], p+".scopes", false)})
	}
	return t
}

func (d *decoder) endpoint(n *yaml.Node, path string) Endpoint {
	var e Endpoint
	vals := d.object(n, path, "an endpoint", endpointFields)
	if vals == nil {
		return e
	}
	d.required(n, vals, path, "host")
	e.Host = d.str(vals["host"], path+".host")
	e.Port = uint32(d.uint(vals["port"], path+".port", 1<<32-1))
	e.Protocol = d.str(vals["protocol"], path+".protocol")
	e.TLS = d.str(vals["tls"], path+".tls")
	e.Access = d.str(vals["access"], path+".access")
	e.Enforcement = d.str(vals["enforcement"], path+".enforcement")
	if r, ok := vals["rules"]; ok && !isNull(r) {
		e.RulesSet = true
		for i, it := range d.seq(r, path+".rules") {
			p := fmt.Sprintf("%s.rules[%d]", path, i)
			rv := d.object(it, p, "a rule", ruleFields)
			var rule Rule
			if a := rv["allow"]; a != nil && !isNull(a) {
				m := d.match(a, p+".allow")
				rule.Allow = &m
			}
			e.Rules = append(e.Rules, rule)
		}
	}
	e.AllowedIPs = d.strList(vals["allowed_ips"], path+".allowed_ips", false)
	e.Ports = d.u32List(vals["ports"], path+".ports")
	if r, ok := vals["deny_rules"]; ok && !isNull(r) {
		e.DenyRulesSet = true
		for i, it := range d.seq(r, path+".deny_rules") {
			e.DenyRules = append(e.DenyRules, d.match(it, fmt.Sprintf("%s.deny_rules[%d]", path, i)))
		}
	}
	e.AllowEncodedSlash = d.boolean(vals["allow_encoded_slash"], path+".allow_encoded_slash")
	e.WebsocketCredentialRewrite = d.boolean(vals["websocket_credential_rewrite"], path+".websocket_credential_rewrite")
	e.RequestBodyCredentialRewrite = d.boolean(vals["request_body_credential_rewrite"], path+".request_body_credential_rewrite")
	e.AllowUninspectedCredentials = d.boolean(vals["allow_uninspected_credentials"], path+".allow_uninspected_credentials")
	e.PersistedQueries = d.str(vals["persisted_queries"], path+".persisted_queries")
	keys, ops := d.mapEntries(vals["graphql_persisted_queries"], path+".graphql_persisted_queries")
	for i, k := range keys {
		p := join(path+".graphql_persisted_queries", k)
		ov := d.object(ops[i], p, "a persisted query", graphqlFields)
		if e.GraphQLPersistedQueries == nil {
			e.GraphQLPersistedQueries = map[string]openshell.GraphQLOperation{}
		}
		e.GraphQLPersistedQueries[k] = openshell.GraphQLOperation{OperationType: d.str(ov["operation_type"], p+".operation_type"),
			OperationName: d.str(ov["operation_name"], p+".operation_name"), Fields: d.strList(ov["fields"], p+".fields", false)}
	}
	e.GraphQLMaxBodyBytes = uint32(d.uint(vals["graphql_max_body_bytes"], path+".graphql_max_body_bytes", 1<<32-1))
	e.JSONRPCMaxBodyBytes = uint32(d.uint(vals["json_rpc_max_body_bytes"], path+".json_rpc_max_body_bytes", 1<<32-1))
	if m := vals["mcp"]; m != nil && !isNull(m) {
		mv := d.object(m, path+".mcp", "mcp", mcpFields)
		e.MCP = &MCPOptions{StrictToolNames: d.optBool(mv["strict_tool_names"], path+".mcp.strict_tool_names"),
			AllowAllKnownMCPMethods: d.optBool(mv["allow_all_known_mcp_methods"], path+".mcp.allow_all_known_mcp_methods")}
	}
	e.Path = d.str(vals["path"], path+".path")
	e.CredentialSigning = d.str(vals["credential_signing"], path+".credential_signing")
	e.SigningService = d.str(vals["signing_service"], path+".signing_service")
	e.SigningRegion = d.str(vals["signing_region"], path+".signing_region")
	return e
}

func (d *decoder) match(n *yaml.Node, path string) Match {
	var m Match
	vals := d.object(n, path, "a rule", matchFields)
	if vals == nil {
		return m
	}
	m.Method = d.str(vals["method"], path+".method")
	m.Path = d.str(vals["path"], path+".path")
	m.Command = d.str(vals["command"], path+".command")
	m.Query = d.matcherMap(vals["query"], path+".query")
	m.OperationType = d.str(vals["operation_type"], path+".operation_type")
	m.OperationName = d.str(vals["operation_name"], path+".operation_name")
	m.Fields = d.strList(vals["fields"], path+".fields", false)
	m.Params = d.matcherMap(vals["params"], path+".params")
	if t := vals["tool"]; t != nil && !isNull(t) {
		q := d.matcher(t, path+".tool")
		m.Tool = &q
	}
	return m
}

func (d *decoder) matcherMap(n *yaml.Node, path string) map[string]openshell.QueryMatch {
	keys, vals := d.mapEntries(n, path)
	if keys == nil {
		return nil
	}
	out := map[string]openshell.QueryMatch{}
	for i, k := range keys {
		out[k] = d.matcher(vals[i], join(path, k))
	}
	return out
}

// matcher decodes L7QueryMatcherProfile: a glob string, or {glob, any}
// (untagged, profiles.rs:339-363 @ v0.0.111).
func (d *decoder) matcher(n *yaml.Node, path string) openshell.QueryMatch {
	r := d.resolve(n, path)
	if r == nil {
		return openshell.QueryMatch{}
	}
	if r.Kind == yaml.ScalarNode {
		s, _ := d.untaggedStr(r, path)
		return openshell.QueryMatch{Glob: s}
	}
	if r.Kind != yaml.MappingNode {
		d.errorf(r, path, CodeType, "write a glob string or {any: [...]}", "data did not match any variant of the matcher: got %s", describe(r))
		return openshell.QueryMatch{}
	}
	vals := d.object(r, path, "a matcher", matcherFields)
	var q openshell.QueryMatch
	if g := vals["glob"]; g != nil {
		q.Glob, _ = d.untaggedStr(g, path+".glob")
	}
	q.Any = d.strList(vals["any"], path+".any", true)
	return q
}

// binary decodes BinaryProfile: a path string or {path, harness} (untagged,
// profiles.rs:786-818 @ v0.0.111).
func (d *decoder) binary(n *yaml.Node, path string) Binary {
	r := d.resolve(n, path)
	if r == nil {
		return Binary{}
	}
	d.pos[path] = position{r.Line, r.Column}
	if r.Kind == yaml.ScalarNode {
		s, _ := d.untaggedStr(r, path)
		return Binary{Path: s}
	}
	if r.Kind != yaml.MappingNode {
		d.errorf(r, path, CodeType, "write a path, or {path: ...}", "a binary must be a path or {path, harness}, got %s", describe(r))
		return Binary{}
	}
	vals := d.object(r, path, "a binary", binaryFields)
	d.required(r, vals, path, "path")
	var b Binary
	if p := vals["path"]; p != nil {
		b.Path, _ = d.untaggedStr(p, path+".path")
	}
	b.Harness = d.boolean(vals["harness"], path+".harness")
	return b
}
