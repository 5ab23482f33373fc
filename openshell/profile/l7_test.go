package profile

import (
	"slices"
	"testing"
)

// l7Semantics reports validate_l7_endpoint_semantics's errors in the
// source's order (l7_validate.rs:105-184 @ v0.0.111), including the
// branches the profile corpus does not reach.
func TestL7Semantics(t *testing.T) {
	const (
		rulesOrAccess = "protocol requires rules or access to define allowed traffic"
		mutual        = "rules and access are mutually exclusive"
		denyAll       = "rules would deny all traffic (no allow clause found). Use `access: full` or add allow clauses to rules."
		denyNeedsL7   = "deny_rules require protocol (L7 inspection must be enabled)"
		denyNeedsBase = "deny_rules require rules or access to define the base allow set"
	)
	type flags struct{ rules, deny, denyAll, allowAll bool }
	for _, tc := range []struct {
		name, version, protocol, access string
		f                               flags
		want                            []string
	}{
		{"rest with rules", "v0.0.111", "rest", "", flags{rules: true}, nil},
		{"rest bare", "v0.0.111", "rest", "", flags{}, []string{rulesOrAccess}},
		{"unknown at v0.0.111", "v0.0.111", "ftp", "", flags{},
			[]string{"unknown protocol 'ftp' (expected tcp, rest, websocket, graphql, sql, json-rpc, or mcp)"}},
		{"unknown before v0.0.111", "v0.0.92", "ftp", "", flags{},
			[]string{"unknown protocol 'ftp' (expected rest, websocket, graphql, sql, json-rpc, or mcp)"}},
		{"tcp before v0.0.111 is unknown", "v0.0.92", "tcp", "", flags{},
			[]string{"unknown protocol 'tcp' (expected rest, websocket, graphql, sql, json-rpc, or mcp)"}},
		{"tcp with L7 fields", "v0.0.111", "tcp", "full", flags{},
			[]string{"protocol tcp does not support access, rules, or deny_rules; remove those L7 fields"}},
		{"rules and access", "v0.0.111", "REST", "full", flags{rules: true}, []string{mutual}},
		{"mcp access preset", "v0.0.111", "mcp", "read-only", flags{},
			[]string{"protocol mcp does not support access presets; use rules/deny_rules or set mcp.allow_all_known_mcp_methods: true for an allow-all MCP policy"}},
		{"json-rpc access preset", "v0.0.111", "json-rpc", "full", flags{},
			[]string{`protocol json-rpc does not support access presets; use explicit rules with allow.method such as "*"`}},
		{"json-rpc bare", "v0.0.111", "json-rpc", "", flags{},
			[]string{"protocol json-rpc requires explicit rules with allow.method"}},
		{"mcp bare", "v0.0.111", "mcp", "", flags{},
			[]string{"protocol mcp requires rules when mcp.allow_all_known_mcp_methods is false"}},
		{"mcp allow all", "v0.0.111", "mcp", "", flags{allowAll: true, denyAll: true}, nil},
		{"deny all", "v0.0.111", "rest", "", flags{rules: true, denyAll: true}, []string{denyAll}},
		{"deny without protocol", "v0.0.111", "", "", flags{deny: true}, []string{denyNeedsL7, denyNeedsBase}},
		{"deny on bare rest", "v0.0.111", "rest", "", flags{deny: true}, []string{rulesOrAccess, denyNeedsBase}},
		{"deny on mcp", "v0.0.111", "mcp", "", flags{rules: true, deny: true}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := l7Semantics(tc.version, tc.protocol, tc.access, tc.f.rules, tc.f.deny, tc.f.denyAll, tc.f.allowAll)
			if !slices.Equal(got, tc.want) {
				t.Errorf("got %q\nwant %q", got, tc.want)
			}
		})
	}
}
