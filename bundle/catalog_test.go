package bundle

import (
	"errors"
	"fmt"
	"path/filepath"
	"testing"
)

// Only a catalog inside the project is recorded, as a slash path from its
// root, and a manifest naming one outside is refused.
func TestRecordCatalog(t *testing.T) {
	proj := t.TempDir()
	for _, tc := range []struct{ catalog, want string }{
		{"", ""},
		{filepath.Join(proj, "org-catalog"), "org-catalog"},
		{filepath.Join(proj, "org", "catalog"), "org/catalog"},
		{proj, ""},
		{filepath.Dir(proj), ""},
		{filepath.Join(filepath.Dir(proj), "elsewhere"), ""},
	} {
		if got := RecordCatalog(proj, tc.catalog); got != tc.want {
			t.Errorf("RecordCatalog(%q) = %q, want %q", tc.catalog, got, tc.want)
		}
	}
	for _, tc := range []struct {
		catalog string
		ok      bool
	}{
		{"org-catalog", true}, {"org/catalog", true}, {"../org", false}, {"/etc", false}, {".", false}, {"a/../../b", false},
	} {
		data := fmt.Sprintf(`{"schema": %q, "openshell_version": "v0.0.111", "agents": {}, "catalog": %q}`, ManifestSchema, tc.catalog)
		m, err := DecodeManifest([]byte(data))
		if tc.ok != (err == nil) || (err != nil && !errors.Is(err, ErrManifest)) {
			t.Errorf("catalog %q: %v", tc.catalog, err)
		}
		if tc.ok && m.CatalogIn("p") != filepath.Join("p", filepath.FromSlash(tc.catalog)) {
			t.Errorf("CatalogIn: %q", m.CatalogIn("p"))
		}
	}
}
