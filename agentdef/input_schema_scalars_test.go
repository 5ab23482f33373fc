package agentdef

import (
	"strings"
	"testing"

	"cuelang.org/go/cue"
	"gopkg.in/yaml.v3"
)

// The value syntaxes shared by the CUE input schema and the parser, compared
// string by string (see input_schema_test.go for the document-level checks).

// scalarCheck is one value syntax both sides check: the Go parser's
// function and the CUE definition (a path in the input package).
type scalarCheck struct {
	name string
	cue  string
	goOK func(s string) bool
}

func scalarChecks() []scalarCheck {
	// A file deep enough that relative paths with a few '..' stay inside
	// the project (leaving it is a Go-only check).
	const deep = "a/b/c/d/e/f/SKILL.md"
	node := func(s string) *yaml.Node {
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s, Line: 1, Column: 1}
	}
	ok := func(d *decoder) bool { return d.nerr == 0 }
	return []scalarCheck{
		{"agent name", "#ClaudeAgent.name", agentIDRE.MatchString},
		{"skill name", "#SkillName", func(s string) bool { return len(s) > 0 && len(s) <= maxSkillName && skillNameRE.MatchString(s) }},
		{"identifier", "#Ident", identRE.MatchString},
		{"non-blank", "#NonBlank", func(s string) bool { return strings.TrimSpace(s) != "" }},
		{"claude model", "#ClaudeAgent.model", modelRE.MatchString},
		{"opencode model", "#OpenCodeAgent.model", func(s string) bool {
			prov, id, found := strings.Cut(s, "/")
			return found && prov != "" && id != "" && modelRE.MatchString(s)
		}},
		{"host", "#Host", func(s string) bool { d := newDecoder(deep); return d.host(node(s), "host", s) }},
		{"allowed_ips", "#AllowedIP", func(s string) bool {
			d := newDecoder(deep)
			return d.allowedIP(stringItem{value: s, node: node(s), field: "allowed_ips"})
		}},
		{"absolute path", "#AbsPath", func(s string) bool { _, err := checkAbsPath(s, true); return err == nil }},
		{"policy path", "#PolicyPath", func(s string) bool { d := newDecoder(deep); return d.relPath(node(s), "policy") }},
		{"rule", "#Rule", func(s string) bool { d := newDecoder(deep); _, good := d.rule(node(s), "rule"); return good && ok(d) }},
		{"dependency", "#Dependency", func(s string) bool {
			d := newDecoder(deep)
			d.dependencies(&yaml.Node{Kind: yaml.SequenceNode, Content: []*yaml.Node{node(s)}})
			return ok(d)
		}},
	}
}

// scalarCorpus holds edge cases of every value syntax above.
var scalarCorpus = []string{
	"", " ", "\t", "\u00a0", "\u2003", "\u0085", "\v", "a", "a ", " a", "A", "7", "-a", "a-", "a--b", "a-b", "a_b", "a.b",
	strings.Repeat("a", 64), strings.Repeat("a", 65), "é", "sonnet", "sonnet[1m]", "claude-sonnet-4-6@default",
	"anthropic/claude-sonnet-4-5", "anthropic/", "/x", "a/b/c", "claude sonnet", "x:y",
	// hosts and addresses
	"api.github.com", "API.github.com", "a.example.com.", "*.example.com", "**.example.com", "*.com", "*", "**",
	"a_b.example.com", "-a.example.com", "a-.example.com", "localhost", "192.0.2.1", "::1", "fe80::1%eth0", "FE80::1",
	"10.0.0.0/8", "10.0.0.1/33", "fd00::/8", "a.example.com:443", "user@a.example.com", "a b.com",
	"{{HOST_IP}}", "{{ HOST_IP }}", "{{FORGE_HOST}}", "{{OWNER}}", "{{HOST_IP}}/32", "x{{HOST_IP}}", "{{HOST_IP", "{{host_ip}}",
	strings.Repeat("a", 63) + ".com", strings.Repeat("a", 64) + ".com", strings.Repeat("a.", 126) + "a", strings.Repeat("a.", 127) + "a",
	// paths
	"/", "//", "/a/b", "/a/../b", "/a/./b", "/a/..b", "/..", "/.", "/a/", "a/b", "/a\tb", "/a\x7fb", "/\u0085",
	"/repos/{{OWNER}}/{{REPO_NAME}}/issues/{{ISSUE_NUMBER}}", "/{{BRANCH}}", "/{{OWNER", "/{{{OWNER}}}", "/{{OWNER}}}", "/{x}", "/{",
	"/" + strings.Repeat("a", 4095), "/" + strings.Repeat("a", 4096), "/a?b",
	"policies/a.yaml", "../a.yaml", "../../../../../../a.yaml", "\\a", "a\\b", "https://x/a.yaml", "p/{{OWNER}}.yaml",
	// rules
	"GET /", "GET /repos/**", "get /x", "GET x", "GET", "GET  /x", " GET /x ", "GET\t/x", "GET /x y", "GET /x?y", "GET /a/../b",
	"GET /a/..", "GET /a/.. ", "DELETE /{{OWNER}}", "GET /{{HOST_IP}}", "PATCH /a/.", "TRACE /x", "GET /x\n",
	// dependencies
	"other", "../other/SKILL.md", "..", "./x", "/abs", "http://x.example.com/s", "ftp://x/y", "a://b",
	"https://x.example.com/s#sha256=" + strings.Repeat("0f", 32), "https://x.example.com/s#sha256=" + strings.Repeat("0F", 32),
	"https://x.example.com/s", "https://u@x.example.com/s#sha256=" + strings.Repeat("0f", 32), "https:///s#sha256=" + strings.Repeat("0f", 32),
	"https://x.example.com#sha256=" + strings.Repeat("0f", 32), "https://x.example.com/s?q=1#sha256=" + strings.Repeat("0f", 32),
}

// cueScalar compiles the CUE side of a scalar check.
func cueScalar(t testing.TB, path string) cue.Value {
	t.Helper()
	pkg, err := inputSchema()
	if err != nil {
		t.Fatal(err)
	}
	def, field, _ := strings.Cut(path, ".")
	v := pkg.LookupPath(cue.ParsePath(def))
	if field != "" {
		v = v.LookupPath(cue.MakePath(cue.Str(field).Optional()))
		if !v.Exists() {
			v = pkg.LookupPath(cue.ParsePath(def)).LookupPath(cue.MakePath(cue.Str(field).Required()))
		}
	}
	if !v.Exists() {
		t.Fatalf("input schema has no %s", path)
	}
	return v
}

func cueAccepts(v cue.Value, s string) bool {
	return v.Unify(v.Context().Encode(s)).Validate(cue.Concrete(true)) == nil
}

// TestInputSchemaScalarsAgree: for every value syntax, the Go parser and
// the schema give the same verdict on each string of the corpus.
func TestInputSchemaScalarsAgree(t *testing.T) {
	for _, sc := range scalarChecks() {
		t.Run(sc.name, func(t *testing.T) {
			v := cueScalar(t, sc.cue)
			for _, s := range scalarCorpus {
				if g, c := sc.goOK(s), cueAccepts(v, s); g != c {
					t.Errorf("%q: Go ok=%v, CUE ok=%v", s, g, c)
				}
			}
		})
	}
}

// FuzzInputSchemaScalarsAgree searches for strings the Go parser and the
// schema judge differently.
func FuzzInputSchemaScalarsAgree(f *testing.F) {
	for _, s := range scalarCorpus {
		f.Add(s)
	}
	checks := scalarChecks()
	f.Fuzz(func(t *testing.T, s string) {
		for _, sc := range checks {
			if g, c := sc.goOK(s), cueAccepts(cueScalar(t, sc.cue), s); g != c {
				t.Errorf("%s %q: Go ok=%v, CUE ok=%v", sc.name, s, g, c)
			}
		}
	})
}
