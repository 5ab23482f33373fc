package profile

import (
	"fmt"
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
	// An empty id, a leading or trailing '-' and "--" all leave an empty part.
	for _, part := range strings.Split(id, "-") {
		if part == "" || !onlyBytes(part, lowerAlnum) {
			return "", false
		}
	}
	return id, true
}

// The byte sets of ids, env var names and HTTP header names.
const (
	lowerAlnum = "abcdefghijklmnopqrstuvwxyz0123456789"
	envBytes   = lowerAlnum + "ABCDEFGHIJKLMNOPQRSTUVWXYZ_"
	// tokenBytes are RFC 9110's tchar.
	tokenBytes = lowerAlnum + "ABCDEFGHIJKLMNOPQRSTUVWXYZ!#$%&'*+-.^_`|~"
)

// onlyBytes reports whether every byte of s is one of set (ASCII).
func onlyBytes(s, set string) bool { return strings.Trim(s, set) == "" }

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

// endpointValid is endpoint_is_valid (profiles.rs:2068-2079 @ v0.0.111): a
// host, and ports (else port) in 1..65535.
func endpointValid(e Endpoint) bool {
	ports := e.Ports
	if len(ports) == 0 {
		ports = []uint32{e.Port}
	}
	return strings.TrimSpace(e.Host) != "" && !slices.ContainsFunc(ports, func(p uint32) bool { return p < 1 || p > 65535 })
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
		if c.has("v0.0.110") && credentialed {
			c.checkUninspected(base, e)
		}
	}
}

// checkUninspected is profiles.rs:2033-2053 @ v0.0.111 (v0.0.110 on): an
// endpoint of a credentialed profile is L7-inspected (a protocol, TLS not
// skipped) unless it opts out with allow_uninspected_credentials.
func (c *checker) checkUninspected(base string, e Endpoint) {
	l4 := strings.TrimSpace(e.Protocol) == ""
	if e.AllowUninspectedCredentials || !l4 && !strings.EqualFold(strings.TrimSpace(e.TLS), "skip") {
		return
	}
	mode := "tls: skip"
	if l4 {
		mode = "L4-only"
	}
	c.errorf(base+".allow_uninspected_credentials", CodeUninspected,
		"set protocol: rest (or another L7 protocol) so the proxy injects credentials, or set allow_uninspected_credentials: true",
		"credentialed endpoint '%s:%d' uses %s; configure L7 inspection or explicitly set allow_uninspected_credentials: true", e.Host, e.Port, mode)
}

// checkL7 is the endpoint half of validate_profile_set from v0.0.92
// (profiles.rs:1871-2031 @ v0.0.111) with validate_l7_endpoint_semantics
// (openshell-policy/src/l7_validate.rs:105-184 @ v0.0.111).
func (c *checker) checkL7(base string, e Endpoint) {
	c.checkEmptyRuleLists(base, e)
	allowAll := e.MCP.allowAllKnownMethods()
	for _, msg := range l7Semantics(c.version, e.Protocol, e.Access, len(e.Rules) > 0, len(e.DenyRules) > 0, e.deniesAll(), allowAll) {
		c.errorf(base, CodeEndpointL7, "", "%s", msg)
	}
	if c.has("v0.0.111") {
		c.checkTCPFields(base, e)
	}
	if e.Protocol == "mcp" {
		c.checkMCP(base, e, allowAll)
		return
	}
	if e.MCP != nil {
		c.errorf(base+".mcp", CodeEndpointMCP, "", "mcp options are only valid for protocol mcp")
	}
	for j, r := range e.Rules {
		if r.Allow != nil {
			c.rejectMCPMatchers(fmt.Sprintf("%s.rules[%d].allow", base, j), r.Allow)
		}
	}
	for j := range e.DenyRules {
		c.rejectMCPMatchers(fmt.Sprintf("%s.deny_rules[%d]", base, j), &e.DenyRules[j])
	}
}

// checkEmptyRuleLists reports `rules: []` and `deny_rules: []`.
func (c *checker) checkEmptyRuleLists(base string, e Endpoint) {
	if e.RulesSet && len(e.Rules) == 0 {
		c.errorf(base+".rules", CodeEndpointL7, "use `access: full` or remove rules", "rules list cannot be empty (would deny all traffic). Use `access: full` or remove rules.")
	}
	if e.DenyRulesSet && len(e.DenyRules) == 0 {
		c.errorf(base+".deny_rules", CodeEndpointL7, "remove it", "deny_rules list cannot be empty (would have no effect). Remove it if no denials are needed.")
	}
}

// checkTCPFields is validate_explicit_tcp_additional_fields
// (l7_validate.rs:58-73, v0.0.111): protocol tcp carries no L7 field.
func (c *checker) checkTCPFields(base string, e Endpoint) {
	if !strings.EqualFold(e.Protocol, "tcp") {
		return
	}
	if f := additionalL7Fields(e); len(f) > 0 {
		c.errorf(base, CodeEndpointL7, "remove those fields", "protocol tcp does not support L7-only fields: %s; remove those fields", strings.Join(f, ", "))
	}
}

// rejectMCPMatchers reports the MCP-only matchers (tool, params) of a rule
// at loc on an endpoint whose protocol is not mcp.
func (c *checker) rejectMCPMatchers(loc string, m *Match) {
	if m.Tool != nil {
		c.errorf(loc+".tool", CodeEndpointMCP, "", "MCP tool matching is only valid for protocol mcp")
	}
	if len(m.Params) > 0 {
		c.errorf(loc+".params", CodeEndpointMCP, "", "params matching is only valid for protocol mcp")
	}
}
