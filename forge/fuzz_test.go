package forge

import (
	"strconv"
	"strings"
	"testing"
)

func FuzzMatch(f *testing.F) {
	for _, r := range Routes() {
		f.Add(r.Method, strings.NewReplacer("{owner}", "acme", "{repo}", "widgets", "{number}", "42").Replace(r.Path))
	}
	f.Add("GET", "/repos/a/b/issues/../1")
	f.Add("POST", "/repos/a%2F/b/issues/1/labels")
	f.Fuzz(func(t *testing.T, method, path string) {
		rt, p, _, err := Match(method, path)
		if err != nil {
			return
		}
		if rt.Method != method {
			t.Fatalf("matched %s for method %s", rt.Method, method)
		}
		// A match must render back to exactly the input path.
		back := strings.NewReplacer("{owner}", p.Owner, "{repo}", p.Repo, "{number}", strconv.Itoa(p.Number)).Replace(rt.Path)
		if back != path {
			t.Fatalf("path %q matched %s but renders back as %q", path, rt.Path, back)
		}
		if strings.Contains(path, "..") && (p.Owner == ".." || p.Repo == "..") {
			t.Fatalf("dot-dot segment accepted: %q", path)
		}
	})
}

func FuzzScopeSearch(f *testing.F) {
	for _, s := range []string{"crash on start", `"a b" is:open label:"x y"`, "repo:o/r x", "a OR b", `"unbalanced`, "org:o", "-repo:o/r", "label:bug\u00a0repo:x/y", "x\u3000y\u200bz"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, q string) {
		out, err := ScopeSearch(q, "o", "r")
		if err != nil {
			return
		}
		if !strings.HasSuffix(out, "repo:o/r") {
			t.Fatalf("scoped query %q does not end with the repo", out)
		}
		toks, err := searchTokens(out)
		if err != nil {
			t.Fatalf("scoped query %q does not re-tokenize: %v", out, err)
		}
		repos := 0
		for _, tk := range toks {
			if tk.quoted {
				continue
			}
			switch tk.text {
			case "OR", "AND", "NOT":
				t.Fatalf("boolean operator survived in %q", out)
			}
			key, _, isQual := strings.Cut(strings.ToLower(strings.TrimPrefix(tk.text, "-")), ":")
			if !isQual {
				continue
			}
			switch key {
			case "repo":
				repos++
			case "org", "user", "owner":
				t.Fatalf("scope qualifier survived in %q", out)
			}
		}
		if repos != 1 {
			t.Fatalf("%d repo qualifiers in %q", repos, out)
		}
		// Scoping is idempotent.
		again, err := ScopeSearch(out, "o", "r")
		if len(out) <= maxSearchBytes && (err != nil || again != out) {
			t.Fatalf("rescoping %q gave %q, %v", out, again, err)
		}
	})
}

func FuzzDecodeBodies(f *testing.F) {
	for _, s := range []string{`{"body":"hi"}`, `["bug"]`, `{"labels":["bug","x"]}`, `{"body":1}`, `[]`, `{"body":"a"} x`} {
		f.Add([]byte(s))
	}
	sc := testScope()
	f.Fuzz(func(t *testing.T, b []byte) {
		if c, err := sc.decodeComment(b); err == nil {
			if strings.TrimSpace(c) == "" || len(c) > sc.maxComment() {
				t.Fatalf("accepted comment %q", c)
			}
		}
		if ls, err := sc.decodeLabels(b); err == nil {
			if len(ls) == 0 {
				t.Fatal("accepted no labels")
			}
			for _, l := range ls {
				found := false
				for _, a := range sc.Labels {
					found = found || a == l
				}
				if !found {
					t.Fatalf("accepted label %q outside the allowlist", l)
				}
			}
		}
	})
}
