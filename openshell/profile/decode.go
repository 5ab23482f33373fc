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

	"github.com/fullsend-ai/agent-sandbox/internal/didyoumean"
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
	root := d.document(data)
	if root == nil {
		return nil, d.diags
	}
	return d.profile(root), d.diags
}

// document parses data as one YAML document and returns its root, or nil
// (reported) when data is empty or not YAML. A second document is
// reported; the first is still decoded.
func (d *decoder) document(data []byte) *yaml.Node {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); errors.Is(err, io.EOF) {
		d.errorf(nil, "", CodeSyntax, "a profile needs at least id and display_name", "profile is empty")
		return nil
	} else if err != nil {
		d.errorf(&yaml.Node{Line: openshell.YAMLErrorLine(err), Column: 1}, "", CodeSyntax, "fix the YAML syntax", "%s", strings.TrimPrefix(err.Error(), "yaml: "))
		return nil
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		d.errorf(&extra, "", CodeSyntax, "one profile per file", "more than one YAML document")
	}
	if doc.Kind == yaml.DocumentNode && len(doc.Content) == 1 {
		return doc.Content[0]
	}
	return &doc
}

// profile decodes ProviderTypeProfile from root; nil when root is not a
// mapping.
func (d *decoder) profile(root *yaml.Node) *Profile {
	vals := d.object(root, "", "a profile", profileFields)
	if vals == nil {
		return nil
	}
	d.required(root, vals, "", "id", "display_name")
	p := &Profile{File: d.file}
	p.ID = d.str(vals["id"], "id")
	p.ResourceVersion = uint64(d.uint(vals["resource_version"], "resource_version", 1<<64-1))
	p.Annotations = d.strMap(vals["annotations"], "annotations")
	p.DisplayName = d.str(vals["display_name"], "display_name")
	p.Description = d.str(vals["description"], "description")
	p.Category = d.category(vals["category"])
	p.Credentials = items(d, vals["credentials"], "credentials", d.credential)
	p.Endpoints = items(d, vals["endpoints"], "endpoints", d.endpoint)
	p.Binaries = items(d, vals["binaries"], "binaries", d.binary)
	p.InferenceCapable = d.boolean(vals["inference_capable"], "inference_capable")
	if n := vals["discovery"]; present(n) {
		dv := d.object(n, "discovery", "discovery", discoveryFields)
		p.Discovery = d.strList(dv["credentials"], "discovery.credentials", false)
	}
	p.Source = d.str(vals["source"], "source")
	p.Scope = d.str(vals["scope"], "scope")
	p.pos = d.pos
	return p
}

// object checks that n is a mapping for a struct with fields and returns the
// value of each known key. Unknown keys and keys newer than the target are
// trap warnings (serde drops them); a key twice is an error (serde's
// "duplicate field"). It returns nil when n is not a mapping.
func (d *decoder) object(n *yaml.Node, path, what string, fields []field) map[string]*yaml.Node {
	n = d.resolve(n, path)
	switch {
	case n == nil:
		return nil
	case isEmptyPlain(n):
		return map[string]*yaml.Node{}
	case n.Kind != yaml.MappingNode:
		d.errorf(n, path, CodeType, "", "%s must be a mapping, got %s", what, describe(n))
		return nil
	}
	vals := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := d.resolve(n.Content[i], path), n.Content[i+1]
		if k == nil {
			continue
		}
		sub := join(path, k.Value)
		if _, dup := vals[k.Value]; dup {
			d.errorf(k, sub, CodeDuplicateKey, "keep one", "duplicate field %q", k.Value)
			continue
		}
		if d.known(k, sub, what, fields) {
			vals[k.Value] = v
			d.record(sub, k, v)
		}
	}
	if path != "" {
		d.pos[path] = position{n.Line, n.Column}
	}
	return vals
}

// known reports whether the key k (at sub) of what is a field of the
// target release's struct; serde drops any other key, a trap warning.
func (d *decoder) known(k *yaml.Node, sub, what string, fields []field) bool {
	key := k.Value
	f, ok := lookup(fields, key)
	switch {
	case !ok:
		d.trapf(k, sub, CodeUnknownField, unknownFieldHint(fields, key), "unknown field %q in %s: OpenShell %s ignores it", key, what, d.version)
		return false
	case !d.has(f.since):
		d.trapf(k, sub, CodeFieldTooNew, "target OpenShell "+f.since+" or later, or remove it",
			"field %q appears at OpenShell %s: OpenShell %s ignores it", key, f.since, d.version)
		return false
	}
	return true
}

// unknownFieldHint says what to do about an unknown key of a struct with
// fields.
func unknownFieldHint(fields []field, key string) string {
	switch key {
	case "<<":
		return "OpenShell does not apply YAML merge keys: write the fields out"
	case "credential_binding":
		return "a credential_binding names a concrete provider and belongs in the sandbox policy, not a profile (grpc/provider.rs:2894-2903 @ v0.0.111)"
	}
	if s := suggestField(fields, key); s != "" {
		return fmt.Sprintf("did you mean %s?", s)
	}
	return "remove it, or fix its spelling"
}

// record notes the position of the value v of key k at path, and of the
// key itself (path#key, the first occurrence).
func (d *decoder) record(path string, k, v *yaml.Node) {
	d.pos[path] = position{v.Line, v.Column}
	if _, ok := d.pos[path+"#key"]; !ok {
		d.pos[path+"#key"] = position{k.Line, k.Column}
	}
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
		if norm(f.name) == norm(key) || didyoumean.Distance(f.name, key) == 1 {
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
	if r := vals["refresh"]; present(r) {
		c.Refresh = d.refresh(r, path+".refresh")
	}
	if t := vals["token_grant"]; present(t) {
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
	r.Material = someItems(d, vals["material"], path+".material", d.material)
	r.AdditionalOutputs = someItems(d, vals["additional_outputs"], path+".additional_outputs", d.output)
	return r
}

// material decodes CredentialRefreshMaterialProfile; false when n is not a
// mapping.
func (d *decoder) material(n *yaml.Node, path string) (Material, bool) {
	vals := d.object(n, path, "refresh material", materialFields)
	if vals == nil {
		return Material{}, false
	}
	d.required(n, vals, path, "name")
	return Material{Name: d.str(vals["name"], path+".name"), Description: d.str(vals["description"], path+".description"),
		Required: d.boolean(vals["required"], path+".required"), Secret: d.boolean(vals["secret"], path+".secret")}, true
}

// output decodes CredentialRefreshOutputProfile; false when n is not a
// mapping.
func (d *decoder) output(n *yaml.Node, path string) (Output, bool) {
	vals := d.object(n, path, "an additional output", outputFields)
	if vals == nil {
		return Output{}, false
	}
	d.required(n, vals, path, "output", "credential")
	return Output{Output: d.str(vals["output"], path+".output"), Credential: d.str(vals["credential"], path+".credential")}, true
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
	t.AudienceOverrides = someItems(d, vals["audience_overrides"], path+".audience_overrides", d.audienceOverride)
	return t
}

// audienceOverride decodes TokenGrantAudienceOverrideProfile; false when n
// is not a mapping.
func (d *decoder) audienceOverride(n *yaml.Node, path string) (AudienceOverride, bool) {
	vals := d.object(n, path, "an audience override", overrideFields)
	if vals == nil {
		return AudienceOverride{}, false
	}
	d.required(n, vals, path, "audience")
	return AudienceOverride{Host: d.str(vals["host"], path+".host"),
		Port: uint32(d.uint(vals["port"], path+".port", 1<<32-1)), Path: d.str(vals["path"], path+".path"),
		Audience: d.str(vals["audience"], path+".audience"), Scopes: d.strList(vals["scopes"], path+".scopes", false)}, true
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
	if r := vals["rules"]; present(r) {
		e.RulesSet = true
		e.Rules = items(d, r, path+".rules", d.rule)
	}
	e.AllowedIPs = d.strList(vals["allowed_ips"], path+".allowed_ips", false)
	e.Ports = d.u32List(vals["ports"], path+".ports")
	if r := vals["deny_rules"]; present(r) {
		e.DenyRulesSet = true
		e.DenyRules = items(d, r, path+".deny_rules", d.match)
	}
	e.AllowEncodedSlash = d.boolean(vals["allow_encoded_slash"], path+".allow_encoded_slash")
	e.WebsocketCredentialRewrite = d.boolean(vals["websocket_credential_rewrite"], path+".websocket_credential_rewrite")
	e.RequestBodyCredentialRewrite = d.boolean(vals["request_body_credential_rewrite"], path+".request_body_credential_rewrite")
	e.AllowUninspectedCredentials = d.boolean(vals["allow_uninspected_credentials"], path+".allow_uninspected_credentials")
	e.PersistedQueries = d.str(vals["persisted_queries"], path+".persisted_queries")
	e.GraphQLPersistedQueries = d.persistedQueries(vals["graphql_persisted_queries"], path+".graphql_persisted_queries")
	e.GraphQLMaxBodyBytes = uint32(d.uint(vals["graphql_max_body_bytes"], path+".graphql_max_body_bytes", 1<<32-1))
	e.JSONRPCMaxBodyBytes = uint32(d.uint(vals["json_rpc_max_body_bytes"], path+".json_rpc_max_body_bytes", 1<<32-1))
	if m := vals["mcp"]; present(m) {
		e.MCP = d.mcpOptions(m, path+".mcp")
	}
	e.Path = d.str(vals["path"], path+".path")
	e.CredentialSigning = d.str(vals["credential_signing"], path+".credential_signing")
	e.SigningService = d.str(vals["signing_service"], path+".signing_service")
	e.SigningRegion = d.str(vals["signing_region"], path+".signing_region")
	return e
}

// rule decodes L7RuleProfile: an optional allow.
func (d *decoder) rule(n *yaml.Node, path string) Rule {
	var r Rule
	vals := d.object(n, path, "a rule", ruleFields)
	if a := vals["allow"]; present(a) {
		m := d.match(a, path+".allow")
		r.Allow = &m
	}
	return r
}

// persistedQueries decodes graphql_persisted_queries, a map of operations.
func (d *decoder) persistedQueries(n *yaml.Node, path string) map[string]openshell.GraphQLOperation {
	keys, ops := d.mapEntries(n, path)
	if keys == nil {
		return nil
	}
	out := map[string]openshell.GraphQLOperation{}
	for i, k := range keys {
		p := join(path, k)
		ov := d.object(ops[i], p, "a persisted query", graphqlFields)
		out[k] = openshell.GraphQLOperation{OperationType: d.str(ov["operation_type"], p+".operation_type"),
			OperationName: d.str(ov["operation_name"], p+".operation_name"), Fields: d.strList(ov["fields"], p+".fields", false)}
	}
	return out
}

// mcpOptions decodes McpOptionsProfile.
func (d *decoder) mcpOptions(n *yaml.Node, path string) *MCPOptions {
	vals := d.object(n, path, "mcp", mcpFields)
	return &MCPOptions{StrictToolNames: d.optBool(vals["strict_tool_names"], path+".strict_tool_names"),
		AllowAllKnownMCPMethods: d.optBool(vals["allow_all_known_mcp_methods"], path+".allow_all_known_mcp_methods")}
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
	if t := vals["tool"]; present(t) {
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
