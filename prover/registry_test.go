package prover

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/fullsend-ai/agent-sandbox/internal/fixture"
	"github.com/fullsend-ai/agent-sandbox/openshell"
)

// upstreamBinary is the part of a registry file of OpenShell's
// (crates/openshell-prover/registry/binaries/*.yaml @ v0.0.111) the
// prover's facts come from.
type upstreamBinary struct {
	Binary      string `yaml:"binary"`
	Description string `yaml:"description"`
	Protocols   []struct {
		BypassesL7 bool `yaml:"bypasses_l7"`
	} `yaml:"protocols"`
	CanExfiltrate    bool `yaml:"can_exfiltrate"`
	CanConstructHTTP bool `yaml:"can_construct_http"`
}

// upstreamRegistry decodes every registry file of OpenShell's from
// ../shared/fixtures into a registry, as load_binary_registry_from_dir does
// (registry.rs:253-273 @ v0.0.111).
func upstreamRegistry(t *testing.T) ([]Capability, *Registry) {
	t.Helper()
	dir := fixture.Path(t, "from-project/prover/registry/binaries")
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no registry files in %s: %v", dir, err)
	}
	var caps []Capability
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var b upstreamBinary
		if err := yaml.Unmarshal(data, &b); err != nil || b.Binary == "" {
			t.Fatalf("%s: %v (binary %q)", f, err, b.Binary)
		}
		c := Capability{Binary: b.Binary, Description: b.Description, CanExfiltrate: b.CanExfiltrate, CanConstructHTTP: b.CanConstructHTTP}
		for _, p := range b.Protocols {
			c.L7Bypass = c.L7Bypass || p.BypassesL7
		}
		caps = append(caps, c)
	}
	return caps, NewRegistry(caps...)
}

// TestRegistryMatchesUpstream: the catalog lists the binaries OpenShell's
// registry files list, with the same facts, and none is a glob (so
// get_or_unknown's glob step never applies).
func TestRegistryMatchesUpstream(t *testing.T) {
	caps, _ := upstreamRegistry(t)
	def := DefaultRegistry()
	var want []string
	for _, c := range caps {
		want = append(want, c.Binary)
		if got := def.Lookup(c.Binary); got != c {
			t.Errorf("%s: catalog %+v, upstream %+v", c.Binary, got, c)
		}
		if strings.ContainsAny(c.Binary, "*?[") {
			t.Errorf("%s is a glob: Lookup would have to match it", c.Binary)
		}
	}
	got := def.Binaries()
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("catalog binaries %v, upstream %v", got, want)
	}
}

// TestRegistryGradesAlike: the prover's findings with the catalog and with
// the registry decoded from OpenShell's files are the same, on OpenShell's
// prover testdata and on a policy that gives every registry binary and an
// unknown one read-write reach to credentialed hosts over L7 and L4.
func TestRegistryGradesAlike(t *testing.T) {
	caps, upstream := upstreamRegistry(t)
	var bins []string
	for _, c := range caps {
		bins = append(bins, "{path: "+c.Binary+"}")
	}
	bins = append(bins, "{path: /opt/unknown}")
	all := parse(t, fmt.Sprintf(`version: 1
network_policies:
  l7:
    name: l7
    endpoints: [{host: api.github.com, port: 443, protocol: rest, enforcement: enforce, access: read-write}]
    binaries: [%[1]s]
  l4:
    name: l4
    endpoints: [{host: github.com, port: 443}, {host: 169.254.169.254, port: 80}]
    binaries: [%[1]s]
`, strings.Join(bins, ", ")))
	creds := openshellCredentials(t)
	for name, p := range map[string]*openshell.Policy{"policy.yaml": loadPolicy(t, "policy.yaml"), "every binary": all} {
		a, b := Check(p, creds, DefaultRegistry()), Check(p, creds, upstream)
		if len(a) == 0 || !reflect.DeepEqual(a, b) {
			t.Errorf("%s: catalog findings %q, upstream %q", name, shorthand(a), shorthand(b))
		}
	}
}
