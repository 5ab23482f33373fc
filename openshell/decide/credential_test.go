package decide

import (
	"testing"

	"github.com/fullsend-ai/agent-sandbox/openshell"
	"github.com/fullsend-ai/agent-sandbox/openshell/validate"
)

// credentialPolicy has the endpoint shapes the credential guard tells
// apart, each in its own policy for api.example.com:443 (the same host,
// so every matching policy's endpoints are gathered, as
// endpoint_credential_guards does).
const credentialPolicy = `version: 1
filesystem_policy: {include_workdir: true, read_only: [/usr], read_write: [/tmp]}
landlock: {compatibility: best_effort}
process: {run_as_user: sandbox, run_as_group: sandbox}
network_policies:
  l4:
    endpoints: [{host: l4.example.com, port: 443}]
    binaries: [{path: /usr/bin/curl}]
  optin:
    endpoints: [{host: optin.example.com, port: 443, allow_uninspected_credentials: true}]
    binaries: [{path: /usr/bin/curl}]
  rest:
    endpoints: [{host: rest.example.com, port: 443, protocol: rest, enforcement: enforce, access: read-only}]
    binaries: [{path: /usr/bin/curl}]
  skip:
    endpoints: [{host: skip.example.com, port: 443, protocol: rest, enforcement: enforce, access: read-only, tls: skip}]
    binaries: [{path: /usr/bin/curl}]
  tcp:
    endpoints: [{host: tcp.example.com, port: 443, protocol: tcp}]
    binaries: [{path: /usr/bin/curl}]
  both-l4:
    endpoints: [{host: both.example.com, port: 443}]
    binaries: [{path: /usr/bin/curl}]
  both-rest:
    endpoints: [{host: both.example.com, port: 443, protocol: rest, enforcement: enforce, access: read-only}]
    binaries: [{path: /usr/bin/curl}]
`

// TestDecideCredentialGuard: a tunnel that would carry provider
// credentials uninspected is refused after the destination check
// (proxy.rs:2024 @ v0.0.111; EndpointCredentialGuard::blocks_connect,
// l7/mod.rs:351; the upstream unit test
// parse_endpoint_credential_guard_handles_l4_and_opt_in, l7/mod.rs:1828).
// v0.0.83 has no guard and no provider_credentialed stamp.
func TestDecideCredentialGuard(t *testing.T) {
	p, err := openshell.Unmarshal([]byte(credentialPolicy))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		version, req, want, why string
	}{
		{"v0.0.111", "CONNECT l4.example.com:443 from /usr/bin/curl credentialed l4", "deny", "credentialed endpoint requires L7 inspection"},
		{"v0.0.111", "GET https://l4.example.com/x from /usr/bin/curl credentialed l4", "deny", "raw tunnel"},
		{"v0.0.111", "CONNECT l4.example.com:443 from /usr/bin/curl", "allow", ""},
		{"v0.0.111", "CONNECT l4.example.com:443 from /usr/bin/curl credentialed rest", "allow", ""},
		{"v0.0.111", "CONNECT optin.example.com:443 from /usr/bin/curl credentialed optin", "allow", ""},
		{"v0.0.111", "GET https://rest.example.com/x from /usr/bin/curl credentialed rest", "allow", ""},
		{"v0.0.111", "CONNECT skip.example.com:443 from /usr/bin/curl credentialed skip", "deny", "tls: skip"},
		// has_l7_protocol is the presence of protocol: tcp counts.
		{"v0.0.111", "CONNECT tcp.example.com:443 from /usr/bin/curl credentialed tcp", "allow", ""},
		// One credentialed L4 endpoint among the gathered ones is enough.
		{"v0.0.111", "CONNECT both.example.com:443 from /usr/bin/curl credentialed both-l4 credentialed both-rest", "deny", "both-l4"},
		{"v0.0.111", "CONNECT both.example.com:443 from /usr/bin/curl credentialed both-rest", "allow", ""},
		{"v0.0.83", "CONNECT l4.example.com:443 from /usr/bin/curl credentialed l4", "allow", ""},
		// Past the guard, the requests meet the passthrough relay's strict
		// parser whether or not credentials are injected (l7/relay.rs:2614).
		{"v0.0.111", "GET https://optin.example.com/a%2Fb from /usr/bin/curl credentialed optin", "deny", "allow_encoded_slash: true"},
		{"v0.0.111", "GET https://optin.example.com/a/b from /usr/bin/curl credentialed optin", "allow", ""},
		{"v0.0.111", "GET https://tcp.example.com/a%2Fb from /usr/bin/curl credentialed tcp", "deny", "passthrough relay"},
		{"v0.0.83", "GET https://l4.example.com/a%2Fb from /usr/bin/curl credentialed l4", "deny", "passthrough relay"},
	}
	for _, tc := range tests {
		t.Run(tc.version+"/"+tc.req, func(t *testing.T) {
			d, err := New(p, tc.version)
			if err != nil {
				t.Fatal(err)
			}
			r := checkDecision(t, d, tc.req, tc.want, tc.why)
			if again, err := ParseRequest(r.String()); err != nil || again.String() != r.String() {
				t.Errorf("round trip %q -> %q, %v", r, again, err)
			}
		})
	}
}

// TestCredentialPolicyLoads: the fixture loads at v0.0.111, so the cases
// above are ones OpenShell can be asked.
func TestCredentialPolicyLoads(t *testing.T) {
	p, err := openshell.Unmarshal([]byte(credentialPolicy))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range validate.Policy(p, "v0.0.111") {
		if d.Severity == openshell.SeverityError {
			t.Errorf("does not load at v0.0.111: %s", d)
		}
	}
}
