package resolve

import (
	"net/netip"
	"testing"

	"github.com/fullsend-ai/agent-sandbox/placeholder"
)

// route is /proc/net/route with a default gateway of 172.17.0.1 (as the
// runner's fixture).
const route = "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n" +
	"eth0\t00000000\t010011AC\t0003\t0\t0\t0\t00000000\t0\t0\t0\n" +
	"eth0\t000011AC\t00000000\t0001\t0\t0\t0\t0000FFFF\t0\t0\t0\n"

func TestParseDefaultGateway(t *testing.T) {
	for _, tc := range []struct {
		in, want string
	}{
		{route, "172.17.0.1"},
		{"Iface\tDestination\tGateway\tFlags\neth0\t00000000\t0101A8C0\t0003\n", "192.168.1.1"},
		{"Iface\tDestination\tGateway\tFlags\neth0\t0000A8C0\t00000000\t0001\n", ""}, // no default route
		{"Iface\tDestination\tGateway\tFlags\neth0\t00000000\t00000000\t0001\n", ""}, // default without gateway
		{"Iface\tDestination\tGateway\tFlags\neth0\t00000000\tZZ\t0003\n", ""},       // garbage
	} {
		got, err := ParseDefaultGateway([]byte(tc.in))
		if tc.want == "" {
			if err == nil {
				t.Errorf("%q: got %s, want an error", tc.in, got)
			}
			continue
		}
		if err != nil || got != netip.MustParseAddr(tc.want) {
			t.Errorf("%q: %v %v, want %s", tc.in, got, err, tc.want)
		}
	}
}

func TestGitLabPayloadIID(t *testing.T) {
	for _, tc := range []struct{ name, payload, want string }{
		{"issue", `{"object_kind":"issue","object_attributes":{"iid":7}}`, "7"},
		{"merge request without an iid", `{"object_kind":"merge_request","object_attributes":{"title":"x"}}`, ""},
		{"note on an issue", `{"object_kind":"note","issue":{"iid":"12"},"merge_request":{"iid":13}}`, "12"},
		{"note on a merge request", `{"object_kind":"note","issue":{},"merge_request":{"iid":13}}`, "13"},
		{"note without an iid", `{"object_kind":"note","merge_request":{}}`, ""},
		{"push", `{"object_kind":"push","object_attributes":{"iid":7}}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := ParseGitLabPayload([]byte(tc.payload))
			if err != nil {
				t.Fatal(err)
			}
			if got := p.IID(); got != tc.want {
				t.Errorf("IID() = %q, want %q", got, tc.want)
			}
		})
	}
}

func FuzzParseGitHubEvent(f *testing.F) {
	for _, s := range []string{`{"issue":{"number":42}}`, `{"number":"7"}`, `{"inputs":{"issue_number":"31"}}`,
		`{"pull_request":{"number":1e3}}`, `{"issue":{"number":-1}}`, `[]`, `{"inputs":{"issue":null}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ev, err := ParseGitHubEvent(data)
		if err != nil {
			return
		}
		n, err := ev.IssueNumber()
		if err != nil || n == "" {
			return
		}
		// Whatever the payload, a number handed on must pass the typed rule.
		if verr := placeholder.Validate(placeholder.IssueNumber, n); verr != nil {
			t.Fatalf("IssueNumber %q from %q fails validation: %v", n, data, verr)
		}
	})
}

func FuzzParseGitLabPayload(f *testing.F) {
	for _, s := range []string{`{"object_kind":"issue","object_attributes":{"iid":12}}`,
		`{"object_kind":"note","merge_request":{"iid":"4"}}`, `{"object_kind":"push"}`, `null`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := ParseGitLabPayload(data)
		if err != nil {
			return
		}
		if n := p.IID(); n != "" {
			if verr := placeholder.Validate(placeholder.IssueNumber, n); verr != nil {
				t.Fatalf("IID %q from %q fails validation: %v", n, data, verr)
			}
		}
	})
}

func FuzzParseDefaultGateway(f *testing.F) {
	f.Add([]byte(route))
	f.Add([]byte("Iface Destination Gateway Flags\nx 00000000 FFFFFFFF 2\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		a, err := ParseDefaultGateway(data)
		if err == nil && (!a.Is4() || a.IsUnspecified()) {
			t.Fatalf("gateway %v from %q", a, data)
		}
	})
}
