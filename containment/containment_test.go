package containment

import (
	"fmt"
	"strings"
	"testing"

	"github.com/fullsend-ai/agent-sandbox/bundle"
	"github.com/fullsend-ai/agent-sandbox/openshell"
)

// ep is a REST endpoint on port 443 with rules ("GET /x").
func ep(host string, rules ...string) openshell.Endpoint {
	e := openshell.Endpoint{Host: host, Port: 443, Protocol: openshell.ProtocolREST, Enforcement: openshell.EnforcementEnforce,
		From: []bundle.Source{{File: "agents/a.md", Line: 7, Reason: "sandbox.endpoints"}}}
	for _, r := range rules {
		m, p, _ := strings.Cut(r, " ")
		e.Rules = append(e.Rules, openshell.Rule{Allow: openshell.Match{Method: m, Path: p}})
	}
	return e
}

// l4 is an uninspected endpoint on port 443.
func l4(host string) openshell.Endpoint { return openshell.Endpoint{Host: host, Port: 443} }

// np is a network policy for bins (comma separated).
func np(bins string, eps ...openshell.Endpoint) openshell.NetworkPolicy {
	n := openshell.NetworkPolicy{Name: "n", Endpoints: eps}
	for _, b := range strings.Split(bins, ",") {
		n.Binaries = append(n.Binaries, openshell.Binary{Path: b})
	}
	return n
}

// pol is a policy of network policies (key, policy pairs) with the
// compiler's process and filesystem settings.
func pol(kv ...any) *openshell.Policy {
	p := &openshell.Policy{Version: 1,
		FilesystemPolicy: &openshell.FilesystemPolicy{IncludeWorkdir: true, ReadOnly: []string{"/usr"}, ReadWrite: []string{"/tmp"}},
		Landlock:         &openshell.Landlock{Compatibility: openshell.LandlockBestEffort},
		Process:          &openshell.Process{RunAsUser: "sandbox", RunAsGroup: "sandbox"},
		NetworkPolicies:  map[string]openshell.NetworkPolicy{}}
	for i := 0; i < len(kv); i += 2 {
		p.NetworkPolicies[kv[i].(string)] = kv[i+1].(openshell.NetworkPolicy)
	}
	return p
}

func withFS(p *openshell.Policy, ro, rw []string) *openshell.Policy {
	p.FilesystemPolicy.ReadOnly, p.FilesystemPolicy.ReadWrite = ro, rw
	return p
}

const curl = "/usr/bin/curl"

func TestCheck(t *testing.T) {
	gh := np(curl, ep("api.github.com", "GET /repos/**", "POST /repos/*/issues"))
	tests := []struct {
		name          string
		child, parent *openshell.Policy
		// want lists each violation as "kind element: reason fragment".
		want []string
	}{
		{name: "identical", child: pol("gh", gh), parent: pol("gh", gh)},
		{name: "child narrower path and method", child: pol("gh", np(curl, ep("api.github.com", "GET /repos/o/r/*"))), parent: pol("gh", gh)},
		{name: "child GET covered by parent *", child: pol("k", np(curl, ep("x.example.com", "GET /a"))), parent: pol("k", np(curl, ep("x.example.com", "* /**")))},
		{name: "access preset covered", child: pol("k", np(curl, openshell.Endpoint{Host: "x.example.com", Port: 443, Protocol: "rest", Enforcement: "enforce", Access: "read-only"})),
			parent: pol("k", np(curl, ep("x.example.com", "GET /**", "HEAD /**", "OPTIONS /**")))},
		{name: "wider host", child: pol("d", np(curl, ep("docs.example.com", "GET /**"))), parent: pol("gh", gh),
			want: []string{"network network_policies.d.endpoints[0]: the parent has no endpoint for docs.example.com:443"}},
		{name: "wider path glob", child: pol("gh", np(curl, ep("api.github.com", "GET /**"))), parent: pol("gh", gh),
			want: []string{"network network_policies.gh.endpoints[0].rules[0]: no rule of the parent's endpoints"}},
		{name: "wider path: star over double star", child: pol("gh", np(curl, ep("api.github.com", "POST /repos/**/issues"))), parent: pol("gh", gh),
			want: []string{"network network_policies.gh.endpoints[0].rules[0]: no rule"}},
		{name: "extra binary", child: pol("gh", np("/usr/bin/python3", ep("api.github.com", "GET /repos/x"))), parent: pol("gh", gh),
			want: []string{"network network_policies.gh.endpoints[0]: the parent lets only /usr/bin/curl reach"}},
		{name: "binary glob covers literal", child: pol("gh", np("/usr/bin/git", ep("api.github.com", "GET /repos/x"))),
			parent: pol("gh", np("/usr/bin/*", ep("api.github.com", "GET /repos/**")))},
		{name: "extra method", child: pol("gh", np(curl, ep("api.github.com", "DELETE /repos/o/r"))), parent: pol("gh", gh),
			want: []string{"network network_policies.gh.endpoints[0].rules[0]: no rule"}},
		{name: "provider layer in child only", child: pol("gh", gh, "_provider_pypi", np(curl, ep("pypi.org", "GET /simple/**"))), parent: pol("gh", gh),
			want: []string{"network network_policies._provider_pypi.endpoints[0]: the parent has no endpoint for pypi.org:443"}},
		{name: "filesystem write in child only", child: withFS(pol("gh", gh), []string{"/usr"}, []string{"/tmp", "/data"}),
			parent: withFS(pol("gh", gh), []string{"/usr", "/data"}, []string{"/tmp"}),
			want:   []string{"filesystem filesystem_policy.read_write[1]: no read-write path of the parent"}},
		{name: "filesystem under parent dir", child: withFS(pol(), []string{"/usr/lib"}, []string{"/tmp/x"}), parent: pol()},
		{name: "wildcard host covered", child: pol("k", np(curl, ep("*.api.example.com", "GET /x"))), parent: pol("k", np(curl, ep("**.example.com", "GET /x")))},
		{name: "double star host not under single star", child: pol("k", np(curl, ep("**.example.com", "GET /x"))), parent: pol("k", np(curl, ep("*.example.com", "GET /x"))),
			want: []string{"network network_policies.k.endpoints[0]: the parent has no endpoint"}},
		{name: "exact host under wildcard reaches private addresses", child: pol("k", np(curl, ep("api.example.com", "GET /x"))), parent: pol("k", np(curl, ep("*.example.com", "GET /x"))),
			want: []string{"network network_policies.k.endpoints[0]: the parent has no endpoint naming api.example.com:443 exactly"}},
		{name: "L4 child under L7 parent", child: pol("k", np(curl, l4("api.github.com"))), parent: pol("gh", gh),
			want: []string{"network network_policies.k.endpoints[0]: the child's endpoint lets every request through"}},
		{name: "L4 child under L4 parent", child: pol("k", np(curl, l4("api.github.com"))), parent: pol("k", np(curl, l4("api.github.com")))},
		{name: "L7 child under L4 parent", child: pol("gh", gh), parent: pol("k", np(curl, l4("api.github.com")))},
		{name: "parent deny rule", child: pol("gh", gh), parent: pol("gh", np(curl, func() openshell.Endpoint {
			e := ep("api.github.com", "GET /repos/**", "POST /repos/*/issues")
			e.DenyRules = []openshell.Match{{Method: "GET", Path: "/repos/secret/**"}}
			return e
		}())), want: []string{"network network_policies.gh.endpoints[0]: the parent's network_policies.gh.endpoints[0] (api.github.com) could take part"}},
		{name: "placeholder paths on both sides", child: pol("k", np(curl, ep("api.github.com", "GET /repos/{{OWNER}}/{{REPO_NAME}}/issues"))),
			parent: pol("k", np(curl, ep("api.github.com", "GET /repos/{{OWNER}}/**")))},
		{name: "placeholder host is not its example", child: pol("k", np(curl, ep("api.github.com", "GET /x"))), parent: pol("k", np(curl, ep("{{FORGE_HOST}}", "GET /x"))),
			want: []string{"network network_policies.k.endpoints[0]: the parent has no endpoint for api.github.com:443"}},
		{name: "process user", child: func() *openshell.Policy { p := pol(); p.Process.RunAsUser = "root"; return p }(), parent: pol(),
			want: []string{"process process: the child runs as root:sandbox"}},
		{name: "landlock required by parent", child: pol(), parent: func() *openshell.Policy {
			p := pol()
			p.Landlock.Compatibility = openshell.LandlockHardRequirement
			return p
		}(), want: []string{"process landlock.compatibility: the parent requires Landlock"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vs, err := Check(tt.child, tt.parent, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(vs) != len(tt.want) {
				t.Fatalf("got %d violations, want %d:\n%s", len(vs), len(tt.want), render(vs))
			}
			for i, v := range vs {
				got := fmt.Sprintf("%s %s: %s", v.Kind, v.Element, v.Reason)
				if !strings.HasPrefix(got, tt.want[i]) {
					t.Errorf("violation %d:\n got %s\nwant %s...", i, got, tt.want[i])
				}
			}
		})
	}
}

func render(vs []Violation) string {
	var b strings.Builder
	for _, v := range vs {
		fmt.Fprintf(&b, "  %s %s\n", v.Kind, v)
	}
	return b.String()
}
