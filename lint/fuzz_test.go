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
