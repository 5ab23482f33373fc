package prover

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/fullsend-ai/agent-sandbox/internal/fixture"
	"github.com/fullsend-ai/agent-sandbox/openshell"
)

// openshellTestdata is OpenShell's prover testdata in ../shared/fixtures
// (crates/openshell-prover/testdata @ v0.0.111).
const openshellTestdata = "from-project/prover/testdata/openshell/"

// loadPolicy parses the fixture file name of openshellTestdata.
func loadPolicy(t *testing.T, name string) *openshell.Policy {
	t.Helper()
	return parse(t, string(fixture.ReadFile(t, openshellTestdata+name)))
}

func parse(t *testing.T, doc string) *openshell.Policy {
	t.Helper()
	p, err := openshell.Unmarshal([]byte(doc))
	if err != nil {
		t.Fatalf("parsing policy: %v", err)
	}
	return p
}

func openshellCredentials(t *testing.T) Credentials {
	t.Helper()
	c, err := ParseCredentials(fixture.ReadFile(t, openshellTestdata+"credentials.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func shorthand(fs []Finding) []string {
	var out []string
	for _, p := range Paths(fs) {
		out = append(out, p.String())
	}
	return out
}

// test_parse_policy (crates/openshell-prover/src/lib.rs:90-101 @ v0.0.111).
func TestParseOpenShellTestdata(t *testing.T) {
	p := loadPolicy(t, "policy.yaml")
	np, ok := p.NetworkPolicies["github_api"]
	if !ok || np.Name != "github-api" || len(np.Endpoints) != 2 || len(np.Binaries) < 4 {
		t.Fatalf("github_api = %+v", np)
	}
}

// test_findings_for_github_policy (lib.rs:181-220 @ v0.0.111) asserts that
// l7_bypass_credentialed fires and nothing outside the four categories
// does; the exact paths below follow from model.rs:329-373 and
// queries.rs:82-182: git bypasses L7 on both hosts; every HTTP-constructing
// binary reaches github.com (L4) with the PAT in scope; api.github.com is
// read-only L7, so no HTTP binary can send data there.
func TestOpenShellGitHubPolicy(t *testing.T) {
	got := shorthand(Check(loadPolicy(t, "policy.yaml"), openshellCredentials(t), DefaultRegistry()))
	want := []string{
		"l7_bypass_credentialed: api.github.com:443 via /usr/bin/git",
		"l7_bypass_credentialed: github.com:443 via /usr/bin/git",
		"credential_reach_expansion: github.com:443 via /usr/local/bin/claude",
		"credential_reach_expansion: github.com:443 via /usr/bin/curl",
		"credential_reach_expansion: github.com:443 via /usr/bin/gh",
		"credential_reach_expansion: github.com:443 via /sandbox/.uv/python/**/python3*",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("paths:\n got %q\nwant %q", got, want)
	}
}

// test_empty_policy_no_findings (lib.rs:296-313 @ v0.0.111).
func TestOpenShellEmptyPolicy(t *testing.T) {
	if got := Check(loadPolicy(t, "empty-policy.yaml"), openshellCredentials(t), DefaultRegistry()); len(got) != 0 {
		t.Fatalf("findings = %v", got)
	}
}

// test_wildcard_endpoint_covering_credential_host_emits_credential_reach
// (lib.rs:222-260 @ v0.0.111).
func TestOpenShellWildcardCredentialReach(t *testing.T) {
	p := parse(t, `version: 1
network_policies:
  github_wildcard:
    name: github-wildcard
    endpoints:
      - host: "*.github.com"
        port: 443
        protocol: rest
        enforcement: enforce
        access: read-write
    binaries:
      - path: /usr/bin/curl
`)
	got := shorthand(Check(p, openshellCredentials(t), DefaultRegistry()))
	if !slices.Contains(got, "credential_reach_expansion: *.github.com:443 via /usr/bin/curl") {
		t.Fatalf("paths = %q", got)
	}
}

// test_known_metadata_hostname_emits_link_local_finding (lib.rs:262-294),
// and the gateway's agent_authored_link_local_proposal_records_high_finding
// (crates/openshell-server/src/grpc/policy.rs:12193-12290 @ v0.0.111): no
// credentials at all.
func TestOpenShellLinkLocal(t *testing.T) {
	for _, host := range []string{"metadata.google.internal", "169.254.169.254"} {
		p := parse(t, `version: 1
network_policies:
  metadata:
    name: metadata
    endpoints:
      - host: "`+host+`"
        port: 80
    binaries:
      - path: /usr/bin/curl
`)
		got := shorthand(Check(p, nil, DefaultRegistry()))
		want := []string{"link_local_reach: " + host + ":80 via /usr/bin/curl"}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: paths = %q, want %q", host, got, want)
		}
	}
}

// The gateway's v1 calibration rows (crates/openshell-server/src/grpc/
// policy.rs @ v0.0.111), each a proposal merged into a policy that has only
// filesystem access, run through finding_delta against that baseline.
func TestOpenShellGatewayCalibration(t *testing.T) {
	github := Credentials{{Name: "github-pat", Type: "github", TargetHosts: []string{"api.github.com"}}}
	for _, tc := range []struct {
		name, doc string
		creds     Credentials
		want      []string
	}{
		{
			// agent_authored_exact_l7_proposal_gets_prover_pass_verdict (:10828-10932).
			name: "exact L7 PUT, no provider", creds: nil, want: nil,
			doc: `
      - host: api.github.com
        port: 443
        protocol: rest
        enforcement: enforce
        rules:
          - allow: {method: PUT, path: /repos/org/repo/contents/demo/file.md}`,
		},
		{
			// agent_authored_l4_proposal_with_credential_records_high_finding (:12001-12102).
			name: "L4 with a credential", creds: github,
			want: []string{"credential_reach_expansion: api.github.com:443 via /usr/bin/curl"},
			doc: `
      - host: api.github.com
        port: 443`,
		},
		{
			// agent_authored_l4_proposal_without_credential_emits_no_finding (:12104-12190).
			name: "L4 without a credential", creds: nil, want: nil,
			doc: `
      - host: example.com
        port: 443`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := parse(t, "version: 1\nfilesystem_policy:\n  read_write: [/sandbox]\n")
			head := parse(t, "version: 1\nfilesystem_policy:\n  read_write: [/sandbox]\nnetwork_policies:\n  proposal:\n    name: proposal\n    endpoints:"+tc.doc+"\n    binaries:\n      - path: /usr/bin/curl\n")
			reg := DefaultRegistry()
			got := shorthand(Delta(Check(base, tc.creds, reg), Check(head, tc.creds, reg)))
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("delta = %q, want %q", got, tc.want)
			}
		})
	}
}

// finding_delta's suppression (policy.rs:647-670 @ v0.0.111, README.md:55-60):
// a new credentialed reach is one credential_reach_expansion, not also one
// capability_expansion per method; a method added where the reach existed
// is one capability_expansion path.
func TestDeltaSuppression(t *testing.T) {
	creds := Credentials{{Name: "forge", TargetHosts: []string{"api.github.com"}}}
	doc := func(rules string) *openshell.Policy {
		return parse(t, `version: 1
network_policies:
  gh:
    name: gh
    endpoints:
      - host: api.github.com
        port: 443
        protocol: rest
        enforcement: enforce
        rules:`+rules+`
    binaries:
      - path: /usr/bin/gh
`)
	}
	reg := DefaultRegistry()
	get := doc("\n          - allow: {method: GET, path: /x}")
	post := doc("\n          - allow: {method: GET, path: /x}\n          - allow: {method: POST, path: /x}")
	both := doc("\n          - allow: {method: GET, path: /x}\n          - allow: {method: POST, path: /x}\n          - allow: {method: DELETE, path: /x}")
	if got, want := shorthand(Delta(Check(get, creds, reg), Check(post, creds, reg))), []string{"credential_reach_expansion: api.github.com:443 via /usr/bin/gh"}; !reflect.DeepEqual(got, want) {
		t.Errorf("GET -> GET+POST: %q, want %q", got, want)
	}
	if got, want := shorthand(Delta(Check(post, creds, reg), Check(both, creds, reg))), []string{"capability_expansion: DELETE on api.github.com:443 via /usr/bin/gh"}; !reflect.DeepEqual(got, want) {
		t.Errorf("GET+POST -> +DELETE: %q, want %q", got, want)
	}
	if got := Delta(Check(both, creds, reg), Check(post, creds, reg)); len(got) != 0 {
		t.Errorf("narrowing yields %v", got)
	}
}

// is_link_local and is_known_metadata_hostname tests (queries.rs:307-346 @
// v0.0.111), plus the Go-only spellings Rust's parser refuses.
func TestLinkLocal(t *testing.T) {
	for _, h := range []string{"169.254.169.254", "169.254.0.1", "169.254.255.255", "fe80::1", "fe80::abcd:ef01"} {
		if !IsLinkLocal(h) {
			t.Errorf("IsLinkLocal(%q) = false", h)
		}
	}
	for _, h := range []string{"8.8.8.8", "10.0.0.1", "192.168.1.1", "::1", "2001:db8::1", "api.github.com", "", "::ffff:169.254.1.1", "fe80::1%eth0"} {
		if IsLinkLocal(h) {
			t.Errorf("IsLinkLocal(%q) = true", h)
		}
	}
	for _, h := range []string{"metadata.google.internal", "METADATA.GOOGLE.INTERNAL", "metadata.google.internal.", " metadata.google.internal.. "} {
		if !IsMetadataHost(h) {
			t.Errorf("IsMetadataHost(%q) = false", h)
		}
	}
	for _, h := range []string{"api.github.com", "", "metadata.google.internal.x"} {
		if IsMetadataHost(h) {
			t.Errorf("IsMetadataHost(%q) = true", h)
		}
	}
}

// host_patterns_overlap tests (crates/openshell-prover/src/credentials.rs:
// 406-500 @ v0.0.111), through ForHost: a credential targets b, the policy
// names a (glob's TestCredentialHostUpstream replays them both ways).
func TestForHost(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{"API.GITHUB.COM.", "api.github.com", true},
		{"api.github.com", "uploads.github.com", false},
		{"*.github.com", "api.github.com", true},
		{"*.github.com", "github.com", false},
		{"*.github.com", "deep.api.github.com", false},
		{"api-*.github.com", "api-v3.github.com", true},
		{"api-*.github.com", "uploads.github.com", false},
		{"api.*.github.com", "api.v3.github.com", true},
		{"*.s3.*.amazonaws.com", "bucket.s3.us-east-1.amazonaws.com", true},
		{"s3.*.amazonaws.com", "s3.eu-west-1.amazonaws.com", true},
		{"s3.*.amazonaws.com", "s3.amazonaws.com", false},
		{"*.s3.*.amazonaws.com", "bucket.s3.dualstack.us-east-1.amazonaws.com", false},
		{"api.*.github.com", "api.v3.gitlab.com", false},
		{"**.github.com", "api.github.com", true},
		{"**.github.com", "deep.api.github.com", true},
		{"**.github.com", "github.com", false},
		{"", "github.com", false},
		// OpenShell drops every trailing dot (trim_end_matches, :169-171).
		{"api.github.com..", "api.github.com", true},
	} {
		set := Credentials{{Name: "c", TargetHosts: []string{tc.b}}}
		if got := set.Credentialed(tc.a); got != tc.want {
			t.Errorf("Credentialed(%q) with a credential for %q = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
	// wildcard_policy_host_finds_credentialed_concrete_target (:479-489).
	set := Credentials{{Name: "github-pat", TargetHosts: []string{"api.github.com"}}}
	if got := set.ForHost("*.github.com"); len(got) != 1 || got[0].Name != "github-pat" {
		t.Errorf("ForHost(*.github.com) = %v", got)
	}
}

// The registry is OpenShell's: git, ssh and nc bypass L7; an unlisted
// binary (git-remote-https included, whatever policy-advisor.mdx:176 says)
// is unknown: it can exfiltrate and construct HTTP, and bypasses nothing.
func TestRegistry(t *testing.T) {
	reg := DefaultRegistry()
	var bypass []string
	for _, b := range []string{"/usr/local/bin/claude", "/usr/bin/curl", "/usr/bin/gh", "/usr/bin/git", "/usr/bin/nc", "/usr/local/bin/node", "/usr/local/bin/python3.13", "/usr/bin/ssh", "/usr/bin/wget", "/usr/lib/git-core/git-remote-https"} {
		c := reg.Lookup(b)
		if !c.CanExfiltrate {
			t.Errorf("%s cannot exfiltrate", b)
		}
		if c.BypassesL7() {
			bypass = append(bypass, b)
		}
	}
	if want := []string{"/usr/bin/git", "/usr/bin/nc", "/usr/bin/ssh"}; !reflect.DeepEqual(bypass, want) {
		t.Errorf("bypass L7: %q, want %q", bypass, want)
	}
	u := reg.Lookup("/opt/tool")
	if !u.CanExfiltrate || !u.CanConstructHTTP || u.BypassesL7() {
		t.Errorf("unknown = %+v", u)
	}
	if reg.Lookup("/usr/bin/git").CanConstructHTTP {
		t.Error("git constructs HTTP")
	}
}

func TestParseCredentials(t *testing.T) {
	if _, err := ParseCredentials([]byte("credentials:\n  - name: x\n    target_host: [a]\n")); err == nil {
		t.Error("a misspelt key was accepted")
	}
	if _, err := ParseCredentials([]byte("credentials:\n  - name: x\n")); err == nil {
		t.Error("a credential without hosts was accepted")
	}
	if d := DefaultCredentials(); !d.Credentialed("host.docker.internal") || !d.Credentialed("us-east5-aiplatform.googleapis.com") || d.Credentialed("example.com") {
		t.Errorf("default credentials = %v", d)
	}
}

func FuzzParseCredentials(f *testing.F) {
	// A seed from the fixtures when they are beside the checkout.
	if data, err := os.ReadFile(filepath.Join("..", fixture.Root, openshellTestdata, "credentials.yaml")); err == nil {
		f.Add(data)
	}
	f.Add(defaultCredentials)
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := ParseCredentials(b)
		if err != nil {
			return
		}
		for _, x := range c {
			_ = c.Credentialed(x.Name)
		}
	})
}
