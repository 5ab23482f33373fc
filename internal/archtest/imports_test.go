package archtest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
)

const module = "github.com/fullsend-ai/agent-sandbox"

// The third-party modules docs/architecture.md names in its boundaries. A
// name with a dot in its first element is a module path and matches every
// package of that module; any other name is a package of this module,
// relative to its root, and matches that package only ("x/..." matches x and
// the packages below it).
const (
	cue    = "cuelang.org/go"
	opa    = "github.com/open-policy-agent/opa"
	cosign = "github.com/sigstore/cosign"
)

// governed are the third-party modules an "imports only" sentence speaks
// of: the document lists this module's packages and these three, and says
// nothing of the other libraries a package uses (yaml.v3,
// go-containerregistry, ...).
var governed = []string{cue, opa, cosign}

// kind is the sort of boundary one sentence states.
type kind int

const (
	// importsOnly: "X imports A and B" / "imports A only". The direct
	// imports of X among this module's packages and the governed modules
	// are a subset of names.
	importsOnly kind = iota
	// stdlibOnly: "X is a leaf" / "imports the standard library only". X
	// depends (transitively) on nothing outside the standard library but
	// the libraries names lists ("imports only L, which has no
	// dependencies").
	stdlibOnly
	// neverImports: "X must never import A" / "never links A". No
	// transitive dependency of X matches a name.
	neverImports
	// neverImportsDirectly: "X must never import A directly". No direct
	// import of X matches a name (X may link A through another package).
	neverImportsDirectly
	// importedOnlyBy: "only A imports X". Every package of this module that
	// imports X directly matches a name. X may be a governed module.
	importedOnlyBy
	// testOnly: "only _test.go files import X" / "X holds only tests". Every
	// package of this module that imports X is itself test-only (a subject
	// of a testOnly claim): X is in no binary and no library.
	testOnly
	// inOrder: "no stage imports a later one". The subjects are in the
	// order data flows; none depends (transitively) on one after it.
	inOrder
)

// claim is one boundary: a kind and the names it speaks of.
type claim struct {
	kind  kind
	names []string
}

func only(names ...string) claim        { return claim{importsOnly, names} }
func leaf(libs ...string) claim         { return claim{stdlibOnly, libs} }
func never(names ...string) claim       { return claim{neverImports, names} }
func neverDirect(names ...string) claim { return claim{neverImportsDirectly, names} }
func onlyBy(names ...string) claim      { return claim{importedOnlyBy, names} }
func tests() claim                      { return claim{kind: testOnly} }
func ordered() claim                    { return claim{kind: inOrder} }

// rule is one sentence of docs/architecture.md about imports: says quotes it
// (or its distinctive part) as written, pkgs are its subjects, is the
// boundaries it states. A rule whose says is no longer in the document
// fails, and so does a boundary sentence of the document that no rule
// quotes, so the document and this table change together.
type rule struct {
	says string
	pkgs []string
	is   []claim
}

// pkg is one package of the import graph.
type pkg struct {
	std     bool
	imports []string // full import paths, test files not counted
}

// graph is `go list -deps` of the module: this module's packages and
// everything they link, by full import path.
type graph map[string]pkg

// full turns a document name into an import path prefix or path.
func full(name string) string {
	first, _, _ := strings.Cut(name, "/")
	if strings.Contains(first, ".") {
		return name
	}
	return module + "/" + name
}

// matches reports whether the import path p is the package (or module)
// the document name denotes.
func matches(name, p string) bool {
	first, _, _ := strings.Cut(name, "/")
	if strings.Contains(first, ".") {
		return p == name || strings.HasPrefix(p, name+"/")
	}
	if tree, ok := strings.CutSuffix(name, "/..."); ok {
		return p == full(tree) || strings.HasPrefix(p, full(tree)+"/")
	}
	return p == full(name)
}

func matchesAny(names []string, p string) bool {
	for _, n := range names {
		if matches(n, p) {
			return true
		}
	}
	return false
}

// own reports whether p is a package of this module.
func own(p string) bool { return p == module || strings.HasPrefix(p, module+"/") }

// short names a package as the document does.
func short(p string) string { return strings.TrimPrefix(p, module+"/") }

// deps returns the transitive dependencies of p, p excluded, sorted.
func (g graph) deps(p string) []string {
	seen := map[string]bool{p: true}
	var out []string
	var walk func(string)
	walk = func(q string) {
		for _, i := range g[q].imports {
			if !seen[i] {
				seen[i] = true
				out = append(out, i)
				walk(i)
			}
		}
	}
	walk(p)
	sort.Strings(out)
	return out
}

// importers returns this module's packages that import p directly, sorted.
func (g graph) importers(match func(string) bool) map[string][]string {
	out := map[string][]string{}
	for q, info := range g {
		if !own(q) {
			continue
		}
		for _, i := range info.imports {
			if match(i) {
				out[q] = append(out[q], i)
			}
		}
	}
	return out
}

// check returns every boundary of rules that g breaks, one line each.
// Imports of a package in pending are not counted (it is being deleted).
func check(g graph, rules []rule, pending []string) []string {
	testOnlyPkgs := map[string]bool{}
	for _, r := range rules {
		for _, c := range r.is {
			if c.kind == testOnly {
				for _, p := range r.pkgs {
					testOnlyPkgs[full(p)] = true
				}
			}
		}
	}
	var errs []string
	fail := func(r rule, format string, args ...any) {
		errs = append(errs, fmt.Sprintf(format, args...)+fmt.Sprintf("\n\tdocs/architecture.md: %q", r.says))
	}
	for _, r := range rules {
		for n, subject := range r.pkgs {
			p := full(subject)
			info, ok := g[p]
			if !ok && !strings.Contains(strings.SplitN(subject, "/", 2)[0], ".") {
				fail(r, "%s: no such package; the document describes a package the module does not have", subject)
				continue
			}
			for _, c := range r.is {
				switch c.kind {
				case importsOnly:
					for _, i := range info.imports {
						if (own(i) || matchesAny(governed, i)) && !matchesAny(c.names, i) && !matchesAny(pending, i) {
							fail(r, "%s imports %s; the document says it imports only %v", subject, short(i), c.names)
						}
					}
				case stdlibOnly:
					for _, d := range g.deps(p) {
						if !g[d].std && !matchesAny(pending, d) && !matchesAny(c.names, d) {
							fail(r, "%s depends on %s; the document says it depends on the standard library only (and %v)", subject, short(d), c.names)
							break
						}
					}
				case neverImports:
					for _, n := range c.names {
						var hits []string
						for _, d := range g.deps(p) {
							if matches(n, d) {
								hits = append(hits, short(d))
							}
						}
						if len(hits) > 0 {
							fail(r, "%s depends on %s (%d packages: %s, ...); the document says it must never", subject, n, len(hits), hits[0])
						}
					}
				case neverImportsDirectly:
					for _, i := range info.imports {
						if matchesAny(c.names, i) {
							fail(r, "%s imports %s directly; the document says it must not", subject, short(i))
						}
					}
				case importedOnlyBy:
					for q, what := range g.importers(func(i string) bool { return matches(subject, i) }) {
						if !matchesAny(c.names, q) {
							fail(r, "%s imports %s; the document says only %v may", short(q), short(what[0]), c.names)
						}
					}
				case inOrder:
					for _, later := range r.pkgs[n+1:] {
						for _, d := range g.deps(p) {
							if matches(later, d) {
								fail(r, "%s depends on %s, a later stage", subject, later)
							}
						}
					}
				case testOnly:
					for q := range g.importers(func(i string) bool { return i == p }) {
						if !testOnlyPkgs[q] {
							fail(r, "%s imports %s; the document says only tests use it", short(q), subject)
						}
					}
				}
			}
		}
	}
	sort.Strings(errs)
	return errs
}

// undocumented returns this module's packages that no rule has as a subject
// and that allowed does not list (a name there covers its subpackages).
func undocumented(g graph, rules []rule, allowed []string) []string {
	described := map[string]bool{}
	for _, r := range rules {
		for _, p := range r.pkgs {
			described[full(p)] = true
		}
	}
	var out []string
	for p := range g {
		if !own(p) || described[p] {
			continue
		}
		ok := false
		for _, a := range allowed {
			if matches(a+"/...", p) {
				ok = true
			}
		}
		if !ok {
			out = append(out, short(p))
		}
	}
	sort.Strings(out)
	return out
}

// boundaryWords finds the sentences of the document that state a boundary.
var boundaryWords = regexp.MustCompile(`\b(imports?|imported|links?|linked|leaf|depends?)\b`)

// sentences splits the prose of the document's sections named in sections
// into sentences (list items and paragraphs end one; code blocks are
// skipped), each with its whitespace collapsed. skip drops the paragraphs
// that open with one of its names in bold (`**`name`**`).
func sentences(doc string, sections, skip []string) []string {
	var out []string
	in, code := false, false
	var para []string
	flush := func() {
		text := strings.Join(strings.Fields(strings.Join(para, " ")), " ")
		para = nil
		for _, s := range skip {
			if strings.HasPrefix(text, "**`"+s+"`**") {
				return
			}
		}
		for text != "" {
			end := len(text)
			for i := 0; i+2 < len(text); i++ {
				if text[i] == '.' && text[i+1] == ' ' && strings.ContainsAny(text[i+2:i+3], "ABCDEFGHIJKLMNOPQRSTUVWXYZ`*(") {
					end = i + 1
					break
				}
			}
			out = append(out, text[:end])
			text = strings.TrimSpace(text[end:])
		}
	}
	for _, line := range strings.Split(doc, "\n") {
		if strings.HasPrefix(line, "#") {
			flush()
			in = slices.Contains(sections, strings.TrimSpace(strings.TrimLeft(line, "#")))
			continue
		}
		if strings.HasPrefix(line, "```") {
			code = !code
			continue
		}
		if !in || code {
			continue
		}
		switch {
		case strings.TrimSpace(line) == "":
			flush()
		case strings.HasPrefix(line, "- "):
			flush()
			para = append(para, strings.TrimPrefix(line, "- "))
		default:
			para = append(para, line)
		}
	}
	flush()
	return out
}

// docMismatch returns the rules whose says the document no longer holds and
// the boundary sentences of the document that no rule quotes.
func docMismatch(doc string, rules []rule, sections, skip []string) (stale, unquoted []string) {
	flat := strings.Join(strings.Fields(doc), " ")
	for _, r := range rules {
		if !strings.Contains(flat, r.says) {
			stale = append(stale, r.says)
		}
	}
	for _, s := range sentences(doc, sections, skip) {
		if !boundaryWords.MatchString(s) {
			continue
		}
		quoted := false
		for _, r := range rules {
			if strings.Contains(s, r.says) {
				quoted = true
				break
			}
		}
		if !quoted {
			unquoted = append(unquoted, s)
		}
	}
	return stale, unquoted
}

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

// moduleGraph reads the import graph of every package of the module, the
// fake openshell CLI under testdata included, and of everything they link.
func moduleGraph(t *testing.T) graph {
	t.Helper()
	lines := goList(t, "-deps", "-f", `{{.ImportPath}} {{.Standard}} {{join .Imports " "}}`, module+"/...", module+"/testdata/openshell-fake")
	g := graph{}
	for _, line := range lines {
		f := strings.Fields(line)
		if len(f) < 2 {
			t.Fatalf("go list printed %q", line)
		}
		g[f[0]] = pkg{std: f[1] == "true", imports: f[2:]}
	}
	// "C" is cgo's pseudo-package, which go list names as an import (of
	// runtime/cgo, and of os/user through archive/tar) but does not list:
	// it is the toolchain's, so it counts as the standard library.
	g["C"] = pkg{std: true}
	if n := len(g.importers(func(string) bool { return true })); n < 20 {
		t.Fatalf("go list found only %d packages of the module importing anything", n)
	}
	return g
}

// TestArchitectureDocument checks every import boundary docs/architecture.md
// states (the rules table, one row per sentence) against the import graph
// that `go list` reports, test files not counted; it fails when a package
// breaks a boundary, when a row no longer quotes the document, when a
// boundary sentence has no row, and when a package of the module is in no
// row (a new package is documented with its boundaries, then added here).
func TestArchitectureDocument(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	stale, unquoted := docMismatch(string(doc), rules, docSections, allowedUndocumented)
	for _, s := range stale {
		t.Errorf("the rules table quotes a sentence docs/architecture.md no longer has: %q", s)
	}
	for _, s := range unquoted {
		t.Errorf("docs/architecture.md states a boundary the rules table does not check; add a row quoting it: %q", s)
	}
	g := moduleGraph(t)
	for _, e := range check(g, rules, pendingRemoval) {
		t.Error(e)
	}
	for _, p := range undocumented(g, rules, append(slices.Clone(allowedUndocumented), pendingRemoval...)) {
		t.Errorf("package %s is not described in docs/architecture.md: add a paragraph with its boundaries and a row to the rules table", p)
	}
}
