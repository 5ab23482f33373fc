package policydiff

import (
	"fmt"
	"strings"
	"testing"
)

// Every setting endpointPair grades, changed on one endpoint (the same
// grant unit on both sides), and the filesystem, landlock and process
// changes of (*differ).filesystem: action, field, risk and categories of
// each change, in order. The rows pin the grading the split into one
// function per setting keeps.
func TestEndpointSettingChanges(t *testing.T) {
	const bin = "      - path: /usr/bin/curl\n"
	ep := func(extra string) string {
		return "      - host: api.example.com\n" + extra
	}
	rest := "        port: 443\n        protocol: rest\n        enforcement: enforce\n        access: read-only\n"
	for _, tc := range []struct{ name, base, head, want string }{
		{"another port", ep(rest), ep(strings.Replace(rest, "443", "8443", 1)),
			"change endpoint.ports medium []"},
		{"a port added", ep(rest), ep(strings.Replace(rest, "port: 443", "ports: [443, 8443]", 1)),
			"widen endpoint.ports medium []"},
		{"a port removed", ep(strings.Replace(rest, "port: 443", "ports: [443, 8443]", 1)), ep(rest),
			"narrow endpoint.ports info []"},
		{"L7 off", ep(rest), ep(strings.Replace(rest, "protocol: rest", "protocol: tcp", 1)),
			"widen endpoint.protocol medium []"},
		{"L7 on", ep("        port: 443\n"), ep(rest),
			"widen endpoint.access medium []; narrow endpoint.enforcement info []; narrow endpoint.protocol info []"},
		{"another L7 protocol", ep(rest), ep(strings.Replace(rest, "rest", "websocket", 1)),
			"change endpoint.protocol low []"},
		{"audit", ep(rest), ep(strings.Replace(rest, "enforce\n", "audit\n", 1)),
			"widen endpoint.enforcement critical [enforcement_audit]"},
		{"enforce", ep(strings.Replace(rest, "enforce\n", "audit\n", 1)), ep(rest),
			"narrow endpoint.enforcement info []"},
		{"read-write", ep(rest), ep(strings.Replace(rest, "read-only", "read-write", 1)),
			"widen endpoint.access high [capability_expansion]"},
		{"read-only", ep(strings.Replace(rest, "read-only", "read-write", 1)), ep(rest),
			"narrow endpoint.access info []"},
		{"tls skip", ep(rest), ep(rest + "        tls: skip\n"),
			"widen endpoint.tls medium []"},
		{"tls skip off", ep(rest + "        tls: skip\n"), ep(rest),
			"narrow endpoint.tls info []"},
		{"tls other", ep(rest), ep(rest + "        tls: terminate\n"),
			"change endpoint.tls low []"},
		{"allowed_ips added", ep(rest), ep(rest + "        allowed_ips: [203.0.113.7]\n"),
			"widen endpoint.allowed_ips medium []"},
		{"allowed_ips removed", ep(rest + "        allowed_ips: [203.0.113.7]\n"), ep(rest),
			"narrow endpoint.allowed_ips medium []"},
		{"allowed_ips replaced", ep(rest + "        allowed_ips: [203.0.113.7]\n"), ep(rest + "        allowed_ips: [10.0.0.0/8]\n"),
			"change endpoint.allowed_ips critical [private_allowed_ips]"},
		{"encoded slash on", ep(rest), ep(rest + "        allow_encoded_slash: true\n"),
			"widen endpoint.allow_encoded_slash medium []"},
		{"encoded slash off", ep(rest + "        allow_encoded_slash: true\n"), ep(rest),
			"narrow endpoint.allow_encoded_slash info []"},
		{"uninspected credentials on", ep(rest), ep(rest + "        allow_uninspected_credentials: true\n"),
			"widen endpoint.allow_uninspected_credentials high [allow_uninspected_credentials]"},
		{"uninspected credentials off", ep(rest + "        allow_uninspected_credentials: true\n"), ep(rest),
			"narrow endpoint.allow_uninspected_credentials info []"},
		{"credential binding", ep(rest), ep(rest + "        credential_binding: {provider: github}\n"),
			"change endpoint.credential_binding medium []"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Compare(side(t, "network", map[string]string{"a": policy(tc.base, bin)}),
				side(t, "network", map[string]string{"a": policy(tc.head, bin)}), Options{})
			got := changeSummary(r)
			if got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

// changeSummary is "action kind.field risk [categories]" per change.
func changeSummary(r *Result) string {
	var parts []string
	for _, a := range r.Agents {
		for _, c := range a.Changes {
			parts = append(parts, fmt.Sprintf("%s %s.%s %s %v", c.Action, c.Kind, c.Field, c.Risk, c.Categories))
		}
	}
	return strings.Join(parts, "; ")
}
