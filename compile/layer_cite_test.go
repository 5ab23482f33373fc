package compile

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// narrowPulls is an expectation file for agent a: gh may not read another
// repository's pull requests.
const narrowPulls = `agent: a
set: {OWNER: acme, REPO_NAME: widgets, GCP_PROJECT: my-project-123, GCP_REGION: us-east5}
tests:
  - name: other repositories stay closed
    request: GET https://api.github.com/repos/evil/exfil/pulls from /usr/bin/gh
    expect: deny
`

// ownProfile is a project profile, written here, that reads all of
// api.github.com for gh: its endpoint is on line 6.
const ownProfile = `id: wide-reader
display_name: Wide reader
category: source_control
binaries: ["/usr/bin/gh"]
endpoints:
  - host: api.github.com
    port: 443
    protocol: rest
    access: read-only
    enforcement: enforce
`

// layerCases are agents whose provider layer grants what their
// expectations deny.
var layerCases = []struct {
	name, providers string
	files           map[string]string
}{
	{"builtin", "[github]", map[string]string{"agents/a.policytest.yaml": narrowPulls}},
	{"project", "[wide-reader]", map[string]string{"agents/a.policytest.yaml": narrowPulls, "profiles/wide-reader.yaml": ownProfile}},
}

// TestExpectationCitesLayer: an expectation a provider layer breaks fails
// the compile with the layer, its provider and profile, and the profile's
// position (file:line for a project profile; the upstream file, the
// element and the catalog for a built-in) in the message, and a hint to
// narrow the profile or drop the provider (testdata/layer/*.golden).
func TestExpectationCitesLayer(t *testing.T) {
	for _, tc := range layerCases {
		t.Run(tc.name, func(t *testing.T) {
			dir := profileProject(t, "Read, Bash(gh pr list:*)", tc.providers, tc.files)
			_, err := CompileDir(context.Background(), dir, ProjectOptions{})
			var f *Failure
			if !errors.As(err, &f) {
				t.Fatalf("compile: %v, want a failure", err)
			}
			var b strings.Builder
			for _, d := range f.Diagnostics {
				if d.Field == "tests" || d.Field == "sandbox.providers" {
					b.WriteString(d.String() + "\n")
				}
			}
			checkText(t, filepath.Join("testdata", "layer", tc.name+".golden"), b.String())
		})
	}
}

// checkText compares got with the golden file (rewritten with -update).
func checkText(t *testing.T, golden, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test ./compile -update)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs (run go test ./compile -update):\ngot:\n%s\nwant:\n%s", golden, got, want)
	}
}
