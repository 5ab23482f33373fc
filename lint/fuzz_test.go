package lint

import (
	"testing"
)

// FuzzParseWaiver: --waive values never panic and accepted waivers always
// have an id and a reason.
func FuzzParseWaiver(f *testing.F) {
	f.Add("FS003@triage:network_policies.x.endpoints[0]=L4 by design")
	f.Add("FS001=because")
	f.Add("=x")
	f.Fuzz(func(t *testing.T, s string) {
		w, err := ParseWaiver(s)
		if err == nil && (w.ID == "" || w.Reason == "") {
			t.Fatalf("accepted %q as %+v", s, w)
		}
	})
}

// FuzzHostAddr: endpoint hosts (hostile policy text) never panic the
// address and suffix parsers, and an address found is valid.
func FuzzHostAddr(f *testing.F) {
	for _, s := range []string{"2130706433", "0x7f.1", "[64:ff9b::a9fe:a9fe]", "0", "*.github.io", "fe80::1%eth0", "1.2.3.0x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if a, ok := HostAddr(s); ok && !a.IsValid() {
			t.Fatalf("HostAddr(%q) = invalid address", s)
		}
		_ = MultiTenantSuffix(s)
	})
}
