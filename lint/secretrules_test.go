package lint

import (
	"context"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/fullsend-ai/agent-sandbox/internal/regexsample"
	"github.com/fullsend-ai/agent-sandbox/secretscan"
	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
)

// TestSecretRulesUpToDate keeps rules/secretrules.rego equal to the Go rule
// set it is generated from.
func TestSecretRulesUpToDate(t *testing.T) {
	got, err := fs.ReadFile(BuiltinRules(), "secretrules.rego")
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(secretscan.RegoModule()) {
		t.Fatal("rules/secretrules.rego is stale: run `go generate ./lint`")
	}
}

// TestSecretScanMatchesRego runs FS018's Rego port of the scanner and the Go
// scanner (the forge proxy's) on the same strings and requires the same
// kinds of secret for each: samples of every rule's regex, the same split by
// a newline and by a zero-width space, and ordinary text.
func TestSecretScanMatchesRego(t *testing.T) {
	texts := secretCorpus(t)
	pq := secretsQuery(t)
	found := 0
	// Small documents, as policies are: every keyword in a document makes
	// its rules try every string of it.
	for batch := range slices.Chunk(texts, 12) {
		rs, err := pq.Eval(context.Background(), rego.EvalInput(map[string]any{"s": batch}))
		if err != nil {
			t.Fatal(err)
		}
		regoKinds := map[string][]string{}
		for _, pair := range rs[0].Bindings["x"].([]any) {
			p := pair.([]any)
			regoKinds[p[0].(string)] = append(regoKinds[p[0].(string)], p[1].(string))
		}
		for i, s := range batch {
			want := secretscan.Default().FindAll(s)
			slices.Sort(want)
			got := regoKinds[fmt.Sprintf("s[%d]", i)]
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Errorf("%q: Rego %v, Go %v", s, got, want)
			}
			if len(want) > 0 {
				found++
			}
		}
	}
	if found < len(secretscan.Rules()) {
		t.Fatalf("only %d of %d strings hold a secret: the corpus does not exercise the rules", found, len(texts))
	}
}

func secretsQuery(t *testing.T) rego.PreparedEvalQuery {
	t.Helper()
	var opts []func(*rego.Rego)
	for _, name := range []string{"lib.rego", "secrets.rego", "secretrules.rego"} {
		src, err := fs.ReadFile(BuiltinRules(), name)
		if err != nil {
			t.Fatal(err)
		}
		m, err := ast.ParseModuleWithOpts(name, string(src), ast.ParserOptions{ProcessAnnotation: true, RegoVersion: ast.RegoV1})
		if err != nil {
			t.Fatal(err)
		}
		opts = append(opts, rego.ParsedModule(m))
	}
	pq, err := rego.New(append(opts, rego.Query(`x := [[p, k] | some [p, k] in data.fullsend.rules.secrets.literal_secrets]`))...).
		PrepareForEval(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return pq
}

// secretCorpus returns two samples of every rule (a keyword, then a string
// generated from its regex), each also split by a newline and by a
// zero-width space, and the paragraphs of the lint guide.
func secretCorpus(t *testing.T) []string {
	r := rand.New(rand.NewPCG(5, 6))
	var texts []string
	for _, rule := range secretscan.Rules() {
		for range 2 {
			s, err := regexsample.String(rule.Regex, r, 2)
			if err != nil {
				t.Fatal(err)
			}
			if len(rule.Keywords) > 0 {
				s = rule.Keywords[r.IntN(len(rule.Keywords))] + " " + s
			}
			mid := len(s) / 2
			for mid < len(s) && s[mid]&0xC0 == 0x80 {
				mid++ // keep UTF-8 whole
			}
			texts = append(texts, s, s[:mid]+"\n"+s[mid:], s[:mid]+"\u200b"+s[mid:])
		}
	}
	doc, err := os.ReadFile("../docs/policy-lint.md")
	if err != nil {
		t.Fatal(err)
	}
	return append(texts, strings.Split(string(doc), "\n\n")...)
}

// TestSecretRulesData checks that the values the engine stores as
// data.fullsend.lib.secretrules equal rules/secretrules.rego's, which
// conftest and opa load.
func TestSecretRulesData(t *testing.T) {
	data, err := secretRulesData()
	if err != nil {
		t.Fatal(err)
	}
	parsed := mustParse(t, secretRulesFile)
	if len(parsed.Rules) != len(data) {
		t.Fatalf("the file has %d values, the data %d", len(parsed.Rules), len(data))
	}
	for _, r := range parsed.Rules {
		v, err := ast.InterfaceToValue(data[string(r.Head.Name)])
		if err != nil {
			t.Fatal(err)
		}
		if v.Compare(r.Head.Value.Value) != 0 {
			t.Errorf("%s differs between the stored data and the file", r.Head.Name)
		}
	}
}
