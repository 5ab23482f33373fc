package archtest

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/fullsend-ai/agent-sandbox"

// goList runs `go list` with the arguments and returns its non-empty output
// lines. `go test` puts the go command that runs it first on PATH.
func goList(t *testing.T, args ...string) []string {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to read the import graph: %v", err)
	}
	out, err := exec.Command(gobin, append([]string{"list"}, args...)...).Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			t.Fatalf("go list %v: %v\n%s", args, err, ee.Stderr)
		}
		t.Fatalf("go list %v: %v", args, err)
	}
	var lines []string
	for _, l := range strings.Split(string(out), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	return lines
}

// TestBundleReadersLinkNoPolicyEngines checks that the packages which only
// read a compiled bundle (or the OpenShell model) pull in neither CUE nor
// OPA: evaluating CUE or Rego is compile's and lint's business.
func TestBundleReadersLinkNoPolicyEngines(t *testing.T) {
	for _, pkg := range []string{"runner", "image", "spawn", "publish", "bundle", "cienv", "openshell", "placeholder", "report", "prover", "policydiff", "suggest", "denial"} {
		t.Run(pkg, func(t *testing.T) {
			deps := goList(t, "-deps", module+"/"+pkg)
			for _, banned := range []string{"cuelang.org/go", "github.com/open-policy-agent/opa", module + "/compile", module + "/policycue", module + "/lint"} {
				var hits []string
				for _, dep := range deps {
					if dep == banned || strings.HasPrefix(dep, banned+"/") {
						hits = append(hits, dep)
					}
				}
				if len(hits) > 0 {
					t.Errorf("%s depends on %s (%d packages: %s ...)", pkg, banned, len(hits), hits[0])
				}
			}
		})
	}
}

// TestLeaves checks that the packages any other package may use import the
// standard library only: the compiled bundle, the CI-environment adapter,
// the secret rule set (generated from gitleaks' configuration rather than
// importing gitleaks) and the OpenShell denial parsers and kind table (the
// runner's and suggest's one owner of the kind names).
func TestLeaves(t *testing.T) {
	for _, pkg := range []string{"bundle", "cienv", "secretscan", "denial"} {
		deps := goList(t, "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", module+"/"+pkg)
		if !slices.Equal(deps, []string{module + "/" + pkg}) {
			t.Errorf("%s depends on %v outside the standard library; it must stay a leaf", pkg, deps)
		}
	}
}

// TestDirectImports checks who may import whom: only cmd/fullsend imports
// compile (everyone else reads its output through bundle), and only sign
// imports cosign. Test files are not counted.
func TestDirectImports(t *testing.T) {
	rules := []struct {
		imported string
		only     []string
	}{
		{module + "/compile", []string{module + "/cmd/fullsend"}},
		{"github.com/sigstore/cosign", []string{module + "/sign"}},
	}
	lines := goList(t, "-f", "{{.ImportPath}} {{join .Imports \" \"}}", module+"/...")
	if len(lines) < 10 {
		t.Fatalf("go list found only %d packages: %v", len(lines), lines)
	}
	for _, line := range lines {
		fields := strings.Fields(line)
		pkg, imports := fields[0], fields[1:]
		for _, r := range rules {
			if slices.Contains(r.only, pkg) {
				continue
			}
			for _, imp := range imports {
				if imp == r.imported || strings.HasPrefix(imp, r.imported+"/") {
					t.Errorf("%s imports %s; only %v may", pkg, imp, r.only)
				}
			}
		}
	}
}
