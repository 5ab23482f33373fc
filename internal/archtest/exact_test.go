package archtest

import (
	"regexp"
	"slices"
	"strings"
	"testing"
)

// importsStart finds where the list of an "imports" sentence begins: "It
// imports", "`x` imports" or "`x` (what it is) imports", "only" after it
// left out.
var importsStart = regexp.MustCompile("(?:\\b[Ii]t|`[^`]+`(?: \\([^)]*\\))?) imports (?:only )?")

// aside finds the parenthesised asides of a list, which name what an
// import is for, not another import.
var aside = regexp.MustCompile(`\s*\([^)]*\)`)

// listEnd finds where the list ends: "only", the start of a "must never"
// clause, an apposition ("only L, a library ..."), or the end of the
// clause or sentence.
var listEnd = regexp.MustCompile(`\bonly\b|;|:|, which|, a |, so |,? and must|,? must|,? and never|\.(?: |$)`)

// backticked finds the names of a list.
var backticked = regexp.MustCompile("`([^`]+)`")

// listedImports returns the names an "imports" sentence lists (CUE and OPA
// by their module; the standard library is no name), and whether it has
// such a list.
func listedImports(says string) ([]string, bool) {
	loc := importsStart.FindStringIndex(says)
	if loc == nil || strings.HasSuffix(strings.ToLower(says[:loc[0]]), "only ") {
		return nil, false // "only `x` imports `y`" speaks of y's importers
	}
	list := aside.ReplaceAllString(says[loc[1]:], "")
	if end := listEnd.FindStringIndex(list); end != nil {
		list = list[:end[0]]
	}
	if strings.HasPrefix(list, "everything") {
		return nil, false // cmd/fullsend: "imports everything above"
	}
	var names []string
	for _, b := range backticked.FindAllStringSubmatch(list, -1) {
		names = append(names, b[1])
	}
	list = backticked.ReplaceAllString(list, "")
	for word, module := range map[string]string{"CUE": cue, "OPA": opa} {
		if strings.Contains(list, word) {
			names = append(names, module)
		}
	}
	slices.Sort(names)
	return names, true
}

// exactMismatch returns, for each rule quoting an "imports ... only"
// sentence, what is wrong: no row states the list, or the row's list
// differs from the sentence's.
func exactMismatch(rules []rule) []string {
	var bad []string
	for _, r := range rules {
		listed, ok := listedImports(r.says)
		if !ok {
			continue
		}
		i := slices.IndexFunc(r.is, func(c claim) bool { return c.kind == importsOnly || c.kind == stdlibOnly })
		if len(r.pkgs) == 0 || i < 0 {
			bad = append(bad, "no row checks "+quote(r.says))
			continue
		}
		stated := slices.Sorted(slices.Values(r.is[i].names))
		if !slices.Equal(stated, listed) {
			bad = append(bad, "row checks "+strings.Join(stated, ", ")+", the document lists "+strings.Join(listed, ", ")+" in "+quote(r.says))
		}
	}
	return bad
}

func quote(s string) string { return "\"" + s + "\"" }

// TestImportsSentencesExact: every "It imports X, Y only" sentence of
// docs/architecture.md is checked by its row with exactly the names it
// lists.
func TestImportsSentencesExact(t *testing.T) {
	for _, b := range exactMismatch(rules) {
		t.Error(b)
	}
}

// TestExactMismatch: a list that differs from its row, and a sentence of
// a row that checks nothing, are reported; a matching row is not.
func TestExactMismatch(t *testing.T) {
	for _, tc := range []struct {
		name string
		r    rule
		want string
	}{
		{"matches", rule{says: "It imports `b` and `a` only.", pkgs: []string{"x"}, is: []claim{only("a", "b")}}, ""},
		{"only first", rule{says: "It imports only `a`, which is small.", pkgs: []string{"x"}, is: []claim{only("a")}}, ""},
		{"row lists less", rule{says: "It imports `a`, `b` and `c` only.", pkgs: []string{"x"}, is: []claim{only("a", "b")}}, "row checks a, b, the document lists a, b, c"},
		{"row lists more", rule{says: "It imports `a` only.", pkgs: []string{"x"}, is: []claim{only("a", "b")}}, "row checks a, b, the document lists a"},
		{"no row", rule{says: "It imports `a` only."}, "no row checks"},
		{"importers", rule{says: "Only `a` imports `b`.", pkgs: []string{"b"}, is: []claim{onlyBy("a")}}, ""},
		{"apposition and aside", rule{says: "`x` (y) imports only `a` (for z), a library OPA links.", pkgs: []string{"x"}, is: []claim{leaf("a")}}, ""},
		{"CUE and OPA", rule{says: "It imports `a`, CUE and OPA only.", pkgs: []string{"x"}, is: []claim{only("a", cue, opa)}}, ""},
		{"row with never only", rule{says: "It imports `a`; it must never import `b`.", pkgs: []string{"x"}, is: []claim{never("b")}}, "no row checks"},
		{"no list", rule{says: "It must never import `a`.", pkgs: []string{"x"}, is: []claim{never("a")}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := strings.Join(exactMismatch([]rule{tc.r}), "\n")
			if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}
