package archtest

import (
	"slices"
	"strings"
	"testing"
)

// synthetic builds a graph from "pkg: import import" lines; names are
// document names (module-relative or a third-party path), "std:" marks
// standard-library packages.
func synthetic(lines ...string) graph {
	g := graph{}
	for _, l := range lines {
		name, imports, _ := strings.Cut(l, ":")
		std := false
		if s, ok := strings.CutPrefix(name, "std "); ok {
			name, std = s, true
		}
		p := pkg{std: std}
		for _, i := range strings.Fields(imports) {
			if strings.HasPrefix(i, "std/") {
				p.imports = append(p.imports, strings.TrimPrefix(i, "std/"))
				continue
			}
			p.imports = append(p.imports, full(i))
		}
		if std {
			g[name] = p
		} else {
			g[full(name)] = p
		}
	}
	return g
}

// healthy is a small module that keeps every rule of healthyRules.
var healthy = []string{
	"std fmt:",
	"std strings:",
	"bundle: std/fmt",
	"openshell: bundle std/strings",
	"runner: openshell bundle gopkg.in/yaml.v3",
	"gopkg.in/yaml.v3: std/fmt",
	"compile: openshell policycue",
	"policycue: cuelang.org/go/cue openshell",
	"cuelang.org/go/cue: std/fmt",
	"sign: github.com/sigstore/cosign/v2/pkg/oci",
	"github.com/sigstore/cosign/v2/pkg/oci: std/fmt",
	"verify: sign",
	"cmd/fullsend: compile runner verify internal/testtool",
	"internal/testtool: std/fmt",
	"internal/e2e:",
}

var healthyRules = []rule{
	{says: "bundle is a leaf", pkgs: []string{"bundle"}, is: []claim{leaf()}},
	{says: "runner imports only", pkgs: []string{"runner"}, is: []claim{only("bundle", "openshell"), never(cue, "compile")}},
	{says: "only cmd imports compile", pkgs: []string{"compile"}, is: []claim{onlyBy("cmd/fullsend")}},
	{says: "only sign imports cosign", pkgs: []string{cosign}, is: []claim{onlyBy("sign")}},
	{says: "verify not directly", pkgs: []string{"verify"}, is: []claim{neverDirect(cosign)}},
	{says: "stages in order", pkgs: []string{"compile", "sign", "verify", "runner"}, is: []claim{ordered()}},
	{says: "e2e holds tests", pkgs: []string{"internal/e2e"}, is: []claim{only(), tests()}},
	{says: "nothing imports cmd", pkgs: []string{"cmd/fullsend"}, is: []claim{onlyBy()}},
}

// TestCheck breaks each kind of boundary once in a synthetic graph and
// wants the violation it causes among those reported (one broken import
// may break several rows); the healthy graph has none.
func TestCheck(t *testing.T) {
	tests := []struct {
		name    string
		replace string // a line of healthy to replace, by its package name
		with    string
		extra   []rule
		want    string // a substring of one violation; "" for none at all
	}{
		{name: "healthy"},
		{name: "leaf importing the module", replace: "bundle", with: "bundle: openshell", want: "bundle depends on openshell; the document says it depends on the standard library only"},
		{name: "leaf importing a library", replace: "bundle", with: "bundle: gopkg.in/yaml.v3", want: "bundle depends on gopkg.in/yaml.v3"},
		{name: "leaf with its named library", replace: "internal/e2e", with: "internal/e2e: gopkg.in/yaml.v3", extra: []rule{{says: "x", pkgs: []string{"internal/e2e"}, is: []claim{leaf("gopkg.in/yaml.v3")}}}},
		{name: "leaf with more than its named library", replace: "internal/e2e", with: "internal/e2e: gopkg.in/yaml.v3 std/fmt bundle", extra: []rule{{says: "x", pkgs: []string{"internal/e2e"}, is: []claim{leaf("gopkg.in/yaml.v3")}}}, want: "internal/e2e depends on bundle; the document says it depends on the standard library only (and [gopkg.in/yaml.v3])"},
		{name: "imports more than listed", replace: "runner", with: "runner: openshell bundle verify", want: "runner imports verify; the document says it imports only [bundle openshell]"},
		{name: "imports a governed module not listed", replace: "runner", with: "runner: openshell github.com/open-policy-agent/opa/v1/rego", want: "runner imports github.com/open-policy-agent/opa/v1/rego; the document says it imports only"},
		{name: "other libraries are not governed", replace: "runner", with: "runner: openshell golang.org/x/mod/semver"},
		{name: "never, transitively", replace: "openshell", with: "openshell: bundle policycue", want: "runner depends on cuelang.org/go (1 packages: cuelang.org/go/cue, ...)"},
		{name: "importer not allowed", replace: "runner", with: "runner: openshell compile", want: "runner imports compile; the document says only [cmd/fullsend] may"},
		{name: "module importer not allowed", replace: "verify", with: "verify: sign github.com/sigstore/cosign/v2/pkg/oci", want: "verify imports github.com/sigstore/cosign/v2/pkg/oci directly; the document says it must not"},
		{name: "later stage", replace: "sign", with: "sign: github.com/sigstore/cosign/v2/pkg/oci bundle runner", want: "sign depends on runner, a later stage"},
		{name: "test-only imported by code", replace: "runner", with: "runner: openshell internal/e2e", extra: []rule{{says: "only tests use testtool", pkgs: []string{"internal/testtool"}, is: []claim{tests()}}}, want: "cmd/fullsend imports internal/testtool; the document says only tests use it"},
		{name: "nothing imports cmd", replace: "runner", with: "runner: openshell cmd/fullsend", want: "runner imports cmd/fullsend; the document says only [] may"},
		{name: "documented package missing", extra: []rule{{says: "ghost", pkgs: []string{"ghost"}, is: []claim{leaf()}}}, want: "ghost: no such package"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lines := slices.Clone(healthy)
			if tt.replace != "" {
				i := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, tt.replace+":") })
				if i < 0 {
					t.Fatalf("no line %s", tt.replace)
				}
				lines[i] = tt.with
			}
			got := check(synthetic(lines...), append(slices.Clone(healthyRules), tt.extra...), nil)
			var hits []string
			for _, e := range got {
				if tt.want != "" && strings.Contains(e, tt.want) {
					hits = append(hits, e)
				}
			}
			switch {
			case tt.want == "" && len(got) > 0:
				t.Errorf("want no violation, got %q", got)
			case tt.want != "" && len(hits) == 0:
				t.Errorf("want a violation containing %q, got %q", tt.want, got)
			}
		})
	}
}

// TestCheckPendingRemoval: imports of a package being deleted are not
// counted against "imports only" or a leaf.
func TestCheckPendingRemoval(t *testing.T) {
	g := synthetic(append(slices.Clone(healthy), "runner: openshell internal/yamlblock", "internal/yamlblock: std/fmt")...)
	if got := check(g, healthyRules, []string{"internal/yamlblock"}); len(got) > 0 {
		t.Errorf("pending removal counted: %q", got)
	}
	if got := check(g, healthyRules, nil); len(got) != 1 {
		t.Errorf("without pending removal want one violation, got %q", got)
	}
}

// TestUndocumented: a package no row names fails, unless allowed (with its
// subpackages); packages outside the module never do.
func TestUndocumented(t *testing.T) {
	g := synthetic(append(slices.Clone(healthy), "suggest:", "prover/registry:", "newpkg:")...)
	rules := append(slices.Clone(healthyRules),
		rule{says: "x", pkgs: []string{"openshell", "policycue", "internal/testtool"}})
	got := undocumented(g, rules, []string{"suggest", "prover"})
	if want := []string{"newpkg"}; !slices.Equal(got, want) {
		t.Errorf("undocumented = %q, want %q", got, want)
	}
}

// TestDocMismatch: a row quoting a sentence the document no longer has,
// and a boundary sentence with no row, are both reported; prose without
// boundary words, code blocks, other sections and paragraphs of allowed
// packages are not.
func TestDocMismatch(t *testing.T) {
	doc := "# T\n\n## Packages\n\n**`a`** owns x. It imports `b` only;\nit must never import `c`. It is round.\n\n" +
		"**`new`** owns y. It imports `a` only.\n\n" +
		"- `d` is a leaf.\n- `e` is blue.\n\n```sh\ngo list imports\n```\n\n## Other\n\nIt imports `z`.\n"
	rules := []rule{
		{says: "It imports `b` only; it must never import `c`."},
		{says: "a sentence that is gone"},
	}
	stale, unquoted := docMismatch(doc, rules, []string{"Packages"}, []string{"new"})
	if want := []string{"a sentence that is gone"}; !slices.Equal(stale, want) {
		t.Errorf("stale = %q, want %q", stale, want)
	}
	if want := []string{"`d` is a leaf."}; !slices.Equal(unquoted, want) {
		t.Errorf("unquoted = %q, want %q", unquoted, want)
	}
}

// TestRulesNameRealClaims keeps the table honest: every row with subjects
// states at least one boundary, and every name a claim uses is either a
// governed module or a package of this module (a typo would make a
// "never" vacuous).
func TestRulesNameRealClaims(t *testing.T) {
	g := moduleGraph(t)
	for _, r := range rules {
		if len(r.pkgs) > 0 && len(r.is) == 0 {
			t.Errorf("row %q names packages but states no boundary", r.says)
		}
		for _, c := range r.is {
			for _, n := range c.names {
				if slices.Contains(governed, n) || slices.Contains(pendingRemoval, n) {
					continue
				}
				if _, ok := g[full(n)]; !ok {
					t.Errorf("row %q names %s, which is no package of the module", r.says, n)
				}
			}
		}
	}
}
