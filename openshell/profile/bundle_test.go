package profile

import (
	"errors"
	"io/fs"
	"testing"

	"github.com/fullsend-ai/agent-sandbox/bundle"
)

// TestAttachments: a bundle's providers resolve in order, built-ins from
// the catalog and project profiles from the verified bytes only.
func TestAttachments(t *testing.T) {
	files := map[string][]byte{"profiles/acme.yaml": []byte("id: acme\ndisplay_name: Acme\nendpoints:\n  - host: api.acme.example\n    port: 443\n    protocol: rest\n    access: read-only\n    enforcement: enforce\nbinaries: [/usr/bin/curl]\n")}
	refs := []bundle.ProviderRef{
		{Name: "gh", Profile: "github", Builtin: true},
		{Name: "acme-ro", Profile: "acme", File: "profiles/acme.yaml"},
	}
	atts, err := Attachments(refs, files, "v0.0.111")
	if err != nil {
		t.Fatal(err)
	}
	if len(atts) != 2 || atts[0].Provider != "gh" || atts[0].Profile.ID != "github" || !atts[0].Profile.Builtin ||
		atts[1].Provider != "acme-ro" || atts[1].Profile.ID != "acme" || atts[1].Profile.Builtin {
		t.Errorf("attachments %+v", atts)
	}
	if _, err := Attachments(refs[1:], nil, "v0.0.111"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a profile outside the verified bytes: %v, want fs.ErrNotExist", err)
	}
	if _, err := Attachments([]bundle.ProviderRef{{Name: "x", Profile: "no-such", Builtin: true}}, nil, "v0.0.111"); err == nil {
		t.Error("an unknown built-in resolved")
	}
}
