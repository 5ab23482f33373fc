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
			"change endpoint.ports 443->8443 medium []"},
		{"a port added", ep(rest), ep(strings.Replace(rest, "port: 443", "ports: [443, 8443]", 1)),
			"widen endpoint.ports 443->443,8443 medium []"},
		{"a port removed", ep(strings.Replace(rest, "port: 443", "ports: [443, 8443]", 1)), ep(rest),
			"narrow endpoint.ports 443,8443->443 info []"},
		{"L7 off", ep(rest), ep(strings.Replace(rest, "protocol: rest", "protocol: tcp", 1)),
			"widen endpoint.protocol rest->tcp medium []"},
		{"L7 on", ep("        port: 443\n"), ep(rest),
			"widen endpoint.access (none)->read-only medium []; narrow endpoint.enforcement (none)->enforce info []; narrow endpoint.protocol (none)->rest info []"},
		{"another L7 protocol", ep(rest), ep(strings.Replace(rest, "rest", "websocket", 1)),
			"change endpoint.protocol rest->websocket low []"},
		{"audit", ep(rest), ep(strings.Replace(rest, "enforce\n", "audit\n", 1)),
			"widen endpoint.enforcement enforce->audit critical [enforcement_audit]"},
		{"enforce", ep(strings.Replace(rest, "enforce\n", "audit\n", 1)), ep(rest),
			"narrow endpoint.enforcement audit->enforce info []"},
		{"read-write", ep(rest), ep(strings.Replace(rest, "read-only", "read-write", 1)),
			"widen endpoint.access read-only->read-write high [capability_expansion]"},
		{"read-only", ep(strings.Replace(rest, "read-only", "read-write", 1)), ep(rest),
			"narrow endpoint.access read-write->read-only info []"},
		{"tls skip", ep(rest), ep(rest + "        tls: skip\n"),
			"widen endpoint.tls (none)->skip medium []"},
		{"tls skip off", ep(rest + "        tls: skip\n"), ep(rest),
			"narrow endpoint.tls skip->(none) info []"},
		{"tls other", ep(rest), ep(rest + "        tls: terminate\n"),
			"change endpoint.tls (none)->terminate low []"},
		{"allowed_ips added", ep(rest), ep(rest + "        allowed_ips: [203.0.113.7]\n"),
			"widen endpoint.allowed_ips ->203.0.113.7 medium []"},
		{"allowed_ips removed", ep(rest + "        allowed_ips: [203.0.113.7]\n"), ep(rest),
			"narrow endpoint.allowed_ips 203.0.113.7-> medium []"},
		{"allowed_ips replaced", ep(rest + "        allowed_ips: [203.0.113.7]\n"), ep(rest + "        allowed_ips: [10.0.0.0/8]\n"),
			"change endpoint.allowed_ips 203.0.113.7->10.0.0.0/8 critical [private_allowed_ips]"},
		{"encoded slash on", ep(rest), ep(rest + "        allow_encoded_slash: true\n"),
			"widen endpoint.allow_encoded_slash false->true medium []"},
		{"encoded slash off", ep(rest + "        allow_encoded_slash: true\n"), ep(rest),
			"narrow endpoint.allow_encoded_slash true->false info []"},
		{"uninspected credentials on", ep(rest), ep(rest + "        allow_uninspected_credentials: true\n"),
			"widen endpoint.allow_uninspected_credentials false->true high [allow_uninspected_credentials]"},
		{"uninspected credentials off", ep(rest + "        allow_uninspected_credentials: true\n"), ep(rest),
			"narrow endpoint.allow_uninspected_credentials true->false info []"},
		{"credential binding", ep(rest), ep(rest + "        credential_binding: {provider: github}\n"),
			"change endpoint.credential_binding (none)->github medium []"},
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

// changeSummary is "action kind.field before->after risk [categories]" per
// change.
func changeSummary(r *Result) string {
	var parts []string
	for _, a := range r.Agents {
		for _, c := range a.Changes {
			parts = append(parts, fmt.Sprintf("%s %s.%s %s->%s %s %v", c.Action, c.Kind, c.Field, c.Before, c.After, c.Risk, c.Categories))
		}
	}
	return strings.Join(parts, "; ")
}

// The filesystem, landlock and process changes of (*differ).filesystem.
func TestFilesystemChanges(t *testing.T) {
	doc := func(fs string) string {
		return "version: 1\nfilesystem_policy:\n" + fs + "landlock:\n  compatibility: best_effort\nprocess:\n  run_as_user: sandbox\n  run_as_group: sandbox\n"
	}
	base := doc("  include_workdir: false\n  read_only: [/sandbox, /usr]\n  read_write: [/tmp]\n")
	for _, tc := range []struct{ name, base, head, want string }{
		{"workdir included", base, doc("  include_workdir: true\n  read_only: [/usr]\n  read_write: [/tmp]\n"),
			"widen filesystem.include_workdir read_only /sandbox->include_workdir (read_write /sandbox) medium []"},
		{"workdir excluded", doc("  include_workdir: true\n  read_only: [/usr]\n  read_write: [/tmp]\n"), base,
			"narrow filesystem.include_workdir include_workdir (read_write /sandbox)->read_only /sandbox info []"},
		{"workdir included, /sandbox kept", base, doc("  include_workdir: true\n  read_only: [/sandbox, /usr]\n  read_write: [/tmp]\n"),
			"widen filesystem.include_workdir false->true medium []"},
		{"paths added", base, doc("  include_workdir: false\n  read_only: [/sandbox, /usr, /opt]\n  read_write: [/tmp, /var/tmp]\n"),
			"add filesystem.read_only ->/opt medium []; add filesystem.read_write ->/var/tmp critical [write_outside_workspace]"},
		{"path removed", base, doc("  include_workdir: false\n  read_only: [/sandbox]\n  read_write: [/tmp]\n"),
			"remove filesystem.read_only /usr-> info []"},
		{"widened and narrowed", base, doc("  include_workdir: false\n  read_only: [/sandbox, /tmp]\n  read_write: [/usr]\n"),
			"narrow filesystem.read_only read_write /tmp->read_only /tmp info []; widen filesystem.read_write read_only /usr->read_write /usr critical [write_outside_workspace]"},
		{"landlock hard", base, strings.Replace(base, "best_effort", "hard_requirement", 1),
			"narrow landlock.compatibility best_effort->hard_requirement info []"},
		{"landlock best effort", strings.Replace(base, "best_effort", "hard_requirement", 1), base,
			"widen landlock.compatibility hard_requirement->best_effort medium []"},
		{"root", base, strings.Replace(base, "run_as_user: sandbox", "run_as_user: root", 1),
			"change process.run_as_user sandbox->root high []"},
		{"another group", base, strings.Replace(base, "run_as_group: sandbox", "run_as_group: users", 1),
			"change process.run_as_group sandbox->users medium []"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Compare(side(t, "network", map[string]string{"a": tc.base}), side(t, "network", map[string]string{"a": tc.head}), Options{})
			got := changeSummary(r)
			if got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}
