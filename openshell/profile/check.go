package profile

import (
	"fmt"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/mod/semver"

	"github.com/fullsend-ai/agent-sandbox/openshell"
)

// checker reports the findings of validate_profile_set for one profile.
type checker struct {
	version string
	p       *Profile
	diags   []openshell.Diagnostic
}

func (c *checker) has(since string) bool { return semver.Compare(c.version, since) >= 0 }

// at reports at path's position in the profile (or its nearest decoded
// ancestor).
func (c *checker) at(path string, sev openshell.Severity, code, hint, format string, args ...any) {
	line, col := c.p.Position(path)
	c.diags = append(c.diags, openshell.Diagnostic{File: c.p.File, Line: line, Column: col, Path: EscapeControls(path),
		Severity: sev, Code: code, Message: EscapeControls(fmt.Sprintf(format, args...)), Hint: EscapeControls(hint)})
}

func (c *checker) errorf(path, code, hint, format string, args ...any) {
	c.at(path, openshell.SeverityError, code, hint, format, args...)
}

// Position returns the line and column of path in the profile's file, or of
// its nearest decoded ancestor (1, 1 when none was decoded).
func (p *Profile) Position(path string) (int, int) {
	for path != "" {
		if pos, ok := p.pos[path]; ok {
			return pos.line, pos.col
		}
		i := strings.LastIndexAny(path, ".[")
		if i < 0 {
			break
		}
		path = path[:i]
	}
	return 1, 1
}

// NormalizeID is normalize_profile_id (profiles.rs:1472-1480 @ v0.0.111):
// trimmed, lowercased, and valid lowercase kebab-case, or false.
func NormalizeID(s string) (string, bool) {
	id := strings.ToLower(strings.TrimSpace(s))
	if id == "" || strings.HasPrefix(id, "-") || strings.HasSuffix(id, "-") {
		return "", false
	}
	for _, part := range strings.Split(id, "-") {
		if part == "" {
			return "", false
		}
		for _, b := range []byte(part) {
			if !(b >= 'a' && b <= 'z' || b >= '0' && b <= '9') {
				return "", false
			}
		}
	}
	return id, true
}

// CheckSet runs validate_profile_set (profiles.rs:1496-2066 @ v0.0.111,
// profiles.rs:1083-1370 @ v0.0.83) over profiles, gated by version: ids
// unique across the set, then each profile's credentials, discovery,
// endpoints and binaries. Profiles that are not the built-in catalog also
// meet the gateway's conflict check (builtin ids cannot be overwritten).
func CheckSet(profiles []*Profile, version string) []openshell.Diagnostic {
	var out []openshell.Diagnostic
	ids := map[string]bool{}
	for _, p := range profiles {
		c := &checker{version: version, p: p}
		c.checkID(ids)
		c.checkCredentials()
		c.checkEndpoints()
		for i, b := range p.Binaries {
			if strings.TrimSpace(b.Path) == "" {
				c.errorf(fmt.Sprintf("binaries[%d]", i), CodeBinary, "name an executable path or glob", "binary path must not be empty")
			}
		}
		out = append(out, c.diags...)
	}
	return out
}

func (c *checker) checkID(ids map[string]bool) {
	raw := c.p.ID
	id := strings.TrimSpace(raw)
	norm, ok := NormalizeID(raw)
	switch {
	case id == "":
		c.errorf("id", CodeID, "give the profile a lowercase kebab-case id", "provider profile id is required")
		return
	case !ok || norm != raw:
		c.errorf("id", CodeID, "use only a-z, 0-9 and '-', e.g. "+strconvQuote(suggestID(raw)),
			"provider profile id must be lowercase kebab-case using only a-z, 0-9, and '-'")
	case ids[id]:
		c.errorf("id", CodeDuplicateID, "give each profile its own id", "duplicate provider profile id: %s", id)
	default:
		ids[id] = true
	}
	// profile_conflict_diagnostics runs on the normalized id, beside
	// validate_profile_set: grpc/provider.rs:2932-2946 @ v0.0.111 ("managed
	// by source 'builtin'"), provider.rs:1631-1643 @ v0.0.83 ("is
	// built-in"). The catalog's own files are not imports.
	if ok && !c.p.Builtin && IsBuiltinID(norm, c.version) {
		c.errorf("id", CodeBuiltinID, "rename it (e.g. "+strconvQuote("my-"+norm)+") or name the built-in profile "+strconvQuote(norm)+" instead of shipping a copy",
			"provider profile '%s' is built-in at OpenShell %s and cannot be overwritten: import and lint refuse it", norm, c.version)
	}
}

func suggestID(raw string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(raw)) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		default:
			if b.Len() > 0 && !strings.HasSuffix(b.String(), "-") {
				b.WriteByte('-')
			}
		}
	}
	return strings.Trim(b.String(), "-")
}

func strconvQuote(s string) string { return strconv.Quote(s) }

func (c *checker) checkCredentials() {
	p := c.p
	names := map[string]bool{}
	for i, cr := range p.Credentials {
		name := strings.TrimSpace(cr.Name)
		path := fmt.Sprintf("credentials[%d].name", i)
		if name == "" {
			c.errorf(path, CodeCredential, "name the credential", "credential name is required")
		} else if names[name] {
			c.errorf(path, CodeCredential, "give each credential its own name", "duplicate credential name: %s", name)
		}
		names[name] = true
	}
	// discovery.credentials, profiles.rs:1547-1572 @ v0.0.111 (v0.0.48 on).
	seen := map[string]bool{}
	for i, n := range p.Discovery {
		n = strings.TrimSpace(n)
		path := fmt.Sprintf("discovery.credentials[%d]", i)
		switch {
		case n == "":
			c.errorf(path, CodeDiscovery, "", "discovery credential name must not be empty")
		case seen[n]:
			c.errorf(path, CodeDiscovery, "", "duplicate discovery credential: %s", n)
		case !names[n]:
			c.errorf(path, CodeDiscovery, "name one of the profile's credentials", "unknown discovery credential: %s", n)
		}
		seen[n] = true
	}
	envs := map[string]bool{}
	for i, cr := range p.Credentials {
		base := fmt.Sprintf("credentials[%d]", i)
		for j, ev := range cr.EnvVars {
			path := fmt.Sprintf("%s.env_vars[%d]", base, j)
			t := strings.TrimSpace(ev)
			switch {
			case t == "":
				c.errorf(path, CodeCredential, "", "credential env var must not be empty")
			case c.reservedEnv(t):
				c.errorf(path, CodeCredential, "rename it: v<digits>_NAME and s<64 hex>_NAME are OpenShell's placeholder namespace",
					"credential env var '%s' uses reserved OpenShell placeholder revision namespace", ev)
			case envs[t]:
				c.errorf(path, CodeCredential, "each env var may feed one credential", "duplicate credential env var '%s'", ev)
			default:
				envs[t] = true
			}
		}
		c.checkAuthStyle(base, cr)
		if cr.Refresh != nil {
			c.checkRefresh(base, cr)
		}
		if cr.TokenGrant != nil {
			c.checkTokenGrant(base, cr)
		}
	}
}

// reservedEnv is uses_reserved_revision_namespace (openshell-core
// secrets.rs:759-790 @ v0.0.111; v0.0.73 adds the check, v0.0.109 the
// s<64 hex>_ stable form).
func (c *checker) reservedEnv(key string) bool {
	if !c.has("v0.0.73") {
		return false
	}
	envOK := func(s string) bool {
		if s == "" {
			return false
		}
		for _, b := range []byte(s) {
			if !(b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '_') {
				return false
			}
		}
		return true
	}
	if rest, ok := strings.CutPrefix(key, "v"); ok {
		if rev, env, ok := strings.Cut(rest, "_"); ok && rev != "" && allDigits(rev) && envOK(env) {
			return true
		}
	}
	if !c.has("v0.0.109") {
		return false
	}
	if rest, ok := strings.CutPrefix(key, "s"); ok {
		if h, env, ok := strings.Cut(rest, "_"); ok && len(h) == 64 && strings.Trim(h, "0123456789abcdef") == "" && envOK(env) {
			return true
		}
	}
	return false
}

// checkAuthStyle is profiles.rs:1600-1657 @ v0.0.111 (path auth from v0.0.58).
func (c *checker) checkAuthStyle(base string, cr Credential) {
	style := strings.ToLower(strings.TrimSpace(cr.AuthStyle))
	switch {
	case style == "" || style == "basic":
	case style == "bearer" || style == "header":
		if strings.TrimSpace(cr.HeaderName) == "" {
			c.errorf(base+".header_name", CodeCredential, "e.g. header_name: authorization", "header_name is required for %s auth", style)
		}
	case style == "path" && c.has("v0.0.58"):
		t := strings.TrimSpace(cr.PathTemplate)
		if t == "" {
			c.errorf(base+".path_template", CodeCredential, "e.g. path_template: /bot{credential}", "path_template is required for path auth")
		} else if n := strings.Count(t, "{credential}"); n != 1 {
			c.errorf(base+".path_template", CodeCredential, "", "path_template should contain {credential} exactly once, %s contains {credential} %d times", t, n)
		}
	case style == "query":
		if strings.TrimSpace(cr.QueryParam) == "" {
			c.errorf(base+".query_param", CodeCredential, "", "query_param is required for query auth")
		}
	default:
		c.errorf(base+".auth_style", CodeCredential, "one of basic, bearer, header, path, query", "unsupported auth_style: %s", cr.AuthStyle)
	}
}

// The refresh strategy tables of profiles.rs:702-766 @ v0.0.111.
var (
	gatewayMintable = map[string]bool{"oauth2_refresh_token": true, "oauth2_client_credentials": true,
		"google_service_account_jwt": true, "aws_sts_assume_role": true}
	requiredOutputs = map[string][]string{"aws_sts_assume_role": {"secret_access_key", "session_token"}}
	primaryEnvKey   = map[string]string{"aws_sts_assume_role": "AWS_ACCESS_KEY_ID"}
	outputEnvKey    = map[[2]string]string{{"aws_sts_assume_role", "secret_access_key"}: "AWS_SECRET_ACCESS_KEY",
		{"aws_sts_assume_role", "session_token"}: "AWS_SESSION_TOKEN"}
)

// checkRefresh is profiles.rs:1659-1831 @ v0.0.111 (additional_outputs and
// the strategy output tables from v0.0.86).
func (c *checker) checkRefresh(base string, cr Credential) {
	r := cr.Refresh
	path := base + ".refresh"
	c.checkRefreshFields(path, r)
	if !c.has("v0.0.86") {
		return
	}
	strategy := r.Strategy
	if strategy == "" {
		strategy = "unspecified"
	}
	required := requiredOutputs[r.Strategy]
	if len(required) == 0 && len(r.AdditionalOutputs) > 0 {
		c.errorf(path+".additional_outputs", CodeRefresh, "", "strategy %s does not support additional_outputs", strategy)
	}
	seen, mapped := map[string]bool{}, map[string]bool{}
	for i, o := range r.AdditionalOutputs {
		op := fmt.Sprintf("%s.additional_outputs[%d]", path, i)
		id, cred := strings.TrimSpace(o.Output), strings.TrimSpace(o.Credential)
		if id == "" {
			c.errorf(op+".output", CodeRefresh, "", "refresh additional output id is required")
			continue
		}
		if seen[id] {
			c.errorf(op+".output", CodeRefresh, "", "duplicate refresh additional output: %s", id)
		}
		seen[id] = true
		if slices.Contains(required, id) {
			mapped[id] = true
		} else if len(required) > 0 {
			c.errorf(op+".output", CodeRefresh, "", "strategy %s does not produce output '%s'", strategy, id)
		}
		c.checkOutputCredential(op+".credential", r.Strategy, id, cred)
	}
	for _, k := range required {
		if !mapped[k] {
			c.errorf(path+".additional_outputs", CodeRefresh, "", "strategy %s requires additional output '%s'", strategy, k)
		}
	}
	if want, ok := primaryEnvKey[r.Strategy]; ok && (len(cr.EnvVars) != 1 || cr.EnvVars[0] != want) {
		c.errorf(base+".env_vars", CodeRefresh, "", "strategy %s requires primary credential to map to env var %s", strategy, want)
	}
}

// checkRefreshFields checks the strategy, the two durations and the
// material names of a refresh block at path.
func (c *checker) checkRefreshFields(path string, r *Refresh) {
	if r.Strategy == "" {
		c.errorf(path+".strategy", CodeRefresh, "e.g. strategy: oauth2_refresh_token", "refresh strategy is required")
	}
	if r.RefreshBeforeSeconds < 0 {
		c.errorf(path+".refresh_before_seconds", CodeRefresh, "", "refresh_before_seconds must be greater than or equal to 0")
	}
	if r.MaxLifetimeSeconds < 0 {
		c.errorf(path+".max_lifetime_seconds", CodeRefresh, "", "max_lifetime_seconds must be greater than or equal to 0")
	}
	names := map[string]bool{}
	for i, m := range r.Material {
		n := strings.TrimSpace(m.Name)
		mp := fmt.Sprintf("%s.material[%d].name", path, i)
		if n == "" {
			c.errorf(mp, CodeRefresh, "", "refresh material name is required")
		} else if names[n] {
			c.errorf(mp, CodeRefresh, "", "duplicate refresh material name: %s", n)
		}
		names[n] = true
	}
}

// checkOutputCredential checks the credential (named cred) that receives a
// strategy's additional output id: it exists, has no refresh of its own and
// one env var, the one the strategy's table names.
func (c *checker) checkOutputCredential(loc, strategy, id, cred string) {
	var sib *Credential
	for k := range c.p.Credentials {
		if c.p.Credentials[k].Name == cred {
			sib = &c.p.Credentials[k]
			break
		}
	}
	if sib == nil {
		c.errorf(loc, CodeRefresh, "", "refresh additional output '%s' references unknown credential '%s'", id, cred)
		return
	}
	if sib.Refresh != nil {
		c.errorf(loc, CodeRefresh, "", "credential '%s' is a refresh output and must not declare its own refresh", cred)
	}
	if len(sib.EnvVars) != 1 {
		c.errorf(loc, CodeRefresh, "", "refresh output credential '%s' must declare exactly one env var", cred)
		return
	}
	if want, ok := outputEnvKey[[2]string{strategy, id}]; ok && sib.EnvVars[0] != want {
		c.errorf(loc, CodeRefresh, "", "refresh output '%s' must map to env var %s, found %s", id, want, sib.EnvVars[0])
	}
}

// checkTokenGrant is profiles.rs:1835-1868 and 2283-2396 @ v0.0.111 (v0.0.61
// on), with the audience_overrides ambiguity check (audience.go).
func (c *checker) checkTokenGrant(base string, cr Credential) {
	path := base + ".token_grant"
	defer c.checkAudienceOverrides(base, cr)
	u, err := url.Parse(cr.TokenGrant.TokenEndpoint)
	switch {
	case err != nil || !u.IsAbs() || u.Host == "" && u.Opaque != "":
		c.errorf(path+".token_endpoint", CodeTokenGrant, "e.g. https://sts.example.com/token", "token_endpoint must be an absolute URL")
	case u.Scheme == "https":
	case u.Scheme == "http" && (loopbackHost(u.Hostname()) || k8sServiceHost(u.Hostname())):
	default:
		c.errorf(path+".token_endpoint", CodeTokenGrant, "use https", "token_endpoint must use https, except http for loopback or in-cluster service hosts")
	}
	style := strings.ToLower(strings.TrimSpace(cr.AuthStyle))
	if style != "" && style != "bearer" && style != "header" {
		c.errorf(path, CodeTokenGrant, "", "token_grant credentials support auth_style bearer or header")
		return
	}
	header := strings.TrimSpace(cr.HeaderName)
	if header == "" && style != "header" {
		header = "Authorization"
	}
	if header == "" {
		return
	}
	for _, b := range []byte(header) {
		if !(b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", b) >= 0) {
			c.errorf(base+".header_name", CodeTokenGrant, "", "token_grant header_name is not a valid HTTP header name")
			return
		}
	}
	switch strings.ToLower(header) {
	case "host", "content-length", "transfer-encoding", "connection":
		c.errorf(base+".header_name", CodeTokenGrant, "", "token_grant header_name may not override HTTP framing or connection headers")
	}
}

func loopbackHost(h string) bool {
	h = strings.Trim(h, "[]")
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

func k8sServiceHost(h string) bool {
	labels := strings.Split(strings.ToLower(strings.TrimSuffix(h, ".")), ".")
	for _, l := range labels {
		if l == "" {
			return false
		}
	}
	return len(labels) == 3 && labels[2] == "svc" ||
		len(labels) == 5 && labels[2] == "svc" && labels[3] == "cluster" && labels[4] == "local"
}

// endpointValid is endpoint_is_valid (profiles.rs:2068-2079 @ v0.0.111).
func endpointValid(e Endpoint) bool {
	if strings.TrimSpace(e.Host) == "" {
		return false
	}
	if len(e.Ports) > 0 {
		for _, p := range e.Ports {
			if p < 1 || p > 65535 {
				return false
			}
		}
		return true
	}
	return e.Port >= 1 && e.Port <= 65535
}

func (c *checker) checkEndpoints() {
	credentialed := c.p.HasCredentialedEndpoints()
	for i, e := range c.p.Endpoints {
		base := fmt.Sprintf("endpoints[%d]", i)
		if !endpointValid(e) {
			c.errorf(base, CodeEndpoint, "give a host and a port (or ports) in 1..65535", "invalid endpoint '%s:%d'", e.Host, e.Port)
		}
		if c.has("v0.0.92") {
			c.checkL7(base, e)
		}
		// profiles.rs:2033-2053 @ v0.0.111 (v0.0.110 on).
		if c.has("v0.0.110") && credentialed && !e.AllowUninspectedCredentials &&
			(strings.TrimSpace(e.Protocol) == "" || strings.EqualFold(strings.TrimSpace(e.TLS), "skip")) {
			mode := "tls: skip"
			if strings.TrimSpace(e.Protocol) == "" {
				mode = "L4-only"
			}
			c.errorf(base+".allow_uninspected_credentials", CodeUninspected,
				"set protocol: rest (or another L7 protocol) so the proxy injects credentials, or set allow_uninspected_credentials: true",
				"credentialed endpoint '%s:%d' uses %s; configure L7 inspection or explicitly set allow_uninspected_credentials: true", e.Host, e.Port, mode)
		}
	}
}

// checkL7 is the endpoint half of validate_profile_set from v0.0.92
// (profiles.rs:1871-2031 @ v0.0.111) with validate_l7_endpoint_semantics
// (openshell-policy/src/l7_validate.rs:105-184 @ v0.0.111).
func (c *checker) checkL7(base string, e Endpoint) {
	if e.RulesSet && len(e.Rules) == 0 {
		c.errorf(base+".rules", CodeEndpointL7, "use `access: full` or remove rules", "rules list cannot be empty (would deny all traffic). Use `access: full` or remove rules.")
	}
	if e.DenyRulesSet && len(e.DenyRules) == 0 {
		c.errorf(base+".deny_rules", CodeEndpointL7, "remove it", "deny_rules list cannot be empty (would have no effect). Remove it if no denials are needed.")
	}
	allowAll := e.MCP != nil && e.MCP.AllowAllKnownMCPMethods != nil && *e.MCP.AllowAllKnownMCPMethods
	denyAll := len(e.Rules) > 0
	for _, r := range e.Rules {
		if r.Allow != nil && !r.Allow.effectivelyEmpty() {
			denyAll = false
		}
	}
	for _, msg := range l7Semantics(c.version, e.Protocol, e.Access, len(e.Rules) > 0, len(e.DenyRules) > 0, denyAll, allowAll) {
		c.errorf(base, CodeEndpointL7, "", "%s", msg)
	}
	// validate_explicit_tcp_additional_fields (l7_validate.rs:58-73, v0.0.111).
	if c.has("v0.0.111") && strings.EqualFold(e.Protocol, "tcp") {
		if f := additionalL7Fields(e); len(f) > 0 {
			c.errorf(base, CodeEndpointL7, "remove those fields", "protocol tcp does not support L7-only fields: %s; remove those fields", strings.Join(f, ", "))
		}
	}
	if e.Protocol == "mcp" {
		c.checkMCP(base, e, allowAll)
		return
	}
	if e.MCP != nil {
		c.errorf(base+".mcp", CodeEndpointMCP, "", "mcp options are only valid for protocol mcp")
	}
	for j, r := range e.Rules {
		if r.Allow == nil {
			continue
		}
		p := fmt.Sprintf("%s.rules[%d].allow", base, j)
		if r.Allow.Tool != nil {
			c.errorf(p+".tool", CodeEndpointMCP, "", "MCP tool matching is only valid for protocol mcp")
		}
		if len(r.Allow.Params) > 0 {
			c.errorf(p+".params", CodeEndpointMCP, "", "params matching is only valid for protocol mcp")
		}
	}
	for j, r := range e.DenyRules {
		p := fmt.Sprintf("%s.deny_rules[%d]", base, j)
		if r.Tool != nil {
			c.errorf(p+".tool", CodeEndpointMCP, "", "MCP tool matching is only valid for protocol mcp")
		}
		if len(r.Params) > 0 {
			c.errorf(p+".params", CodeEndpointMCP, "", "params matching is only valid for protocol mcp")
		}
	}
}
