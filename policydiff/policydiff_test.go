package policydiff

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/fullsend-ai/agent-sandbox/bundle"
	"github.com/fullsend-ai/agent-sandbox/openshell"
	"github.com/fullsend-ai/agent-sandbox/prover"
)

func side(t *testing.T, tier string, docs map[string]string) *Side {
	t.Helper()
	m := &bundle.Manifest{OpenShellVersion: "v0.0.111", Agents: map[string]bundle.ManifestAgent{}}
	pols := map[string]Compiled{}
	for name, doc := range docs {
		p, err := openshell.Unmarshal([]byte(doc))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		pols[name] = Compiled{Policy: p}
		m.Agents[name] = bundle.ManifestAgent{Policy: name + ".yaml", Source: "agents/" + name + ".md", Tier: tier}
	}
	s, err := NewSide("test", "", m, pols, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

const head = "version: 1\nnetwork_policies:\n  p:\n    name: p\n    endpoints:\n"

func policy(endpoint, binaries string) string {
	return head + endpoint + "    binaries:\n" + binaries
}

const forgeEP = "      - host: api.github.com\n        port: 443\n        protocol: rest\n        enforcement: enforce\n        rules:\n          - allow: {method: GET, path: /repos/o/r}\n"

// The risk table's rows beyond the acceptance tests (which run on
// testdata/triage in cmd/fullsend), each from a base/head pair of policies.
func TestRiskTable(t *testing.T) {
	bin := func(p ...string) string {
		var b strings.Builder
		for _, x := range p {
			b.WriteString("      - path: " + x + "\n")
		}
		return b.String()
	}
	for _, tc := range []struct {
		name         string
		base, head   string
		action, kind string
		risk         string
		category     string
		prover       string
	}{
		{"git beside gh on a credentialed host", policy(forgeEP, bin("/usr/bin/gh")), policy(forgeEP, bin("/usr/bin/gh", "/usr/bin/git")),
			"add", "binary", RiskCritical, prover.L7BypassCredentialed, "l7_bypass_credentialed: api.github.com:443 via /usr/bin/git"},
		{"curl on an uncredentialed host", policy(strings.ReplaceAll(forgeEP, "api.github.com", "example.com"), bin("/usr/bin/gh")),
			policy(strings.ReplaceAll(forgeEP, "api.github.com", "example.com"), bin("/usr/bin/gh", "/usr/bin/curl")),
			"add", "binary", RiskHigh, CatRawBinary, ""},
		{"enforce to audit", policy(forgeEP, bin("/usr/bin/gh")), policy(strings.Replace(forgeEP, "enforce\n", "audit\n", 1), bin("/usr/bin/gh")),
			"widen", "endpoint", RiskCritical, CatAudit, ""},
		{"tls skip on a credentialed host", policy(forgeEP, bin("/usr/bin/gh")), policy(strings.Replace(forgeEP, "        enforcement", "        tls: skip\n        enforcement", 1), bin("/usr/bin/gh")),
			"widen", "endpoint", RiskCritical, prover.L7BypassCredentialed, ""},
		{"metadata endpoint", policy(forgeEP, bin("/usr/bin/gh")), policy(forgeEP+"      - host: 169.254.169.254\n        port: 80\n", bin("/usr/bin/gh")),
			"add", "endpoint", RiskCritical, prover.LinkLocalReach, "link_local_reach: 169.254.169.254:80 via /usr/bin/gh"},
		{"database port", policy(forgeEP, bin("/usr/bin/gh")), policy(forgeEP+"      - host: db.example.com\n        port: 5432\n", bin("/usr/bin/gh")),
			"add", "endpoint", RiskMedium, CatDatabasePort, ""},
		{"access read-write", policy(forgeEP, bin("/usr/bin/gh")), policy(strings.Replace(forgeEP, "        rules:\n          - allow: {method: GET, path: /repos/o/r}\n", "        access: read-write\n", 1), bin("/usr/bin/gh")),
			"widen", "endpoint", RiskHigh, prover.CapabilityExpansion, "credential_reach_expansion: api.github.com:443 via /usr/bin/gh"},
		{"binary removed", policy(forgeEP, bin("/usr/bin/gh", "/usr/bin/curl")), policy(forgeEP, bin("/usr/bin/gh")),
			"remove", "binary", RiskInfo, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Compare(side(t, "network", map[string]string{"a": tc.base}), side(t, "network", map[string]string{"a": tc.head}), Options{})
			var found *Change
			for i := range r.Agents[0].Changes {
				c := &r.Agents[0].Changes[i]
				if c.Action == tc.action && c.Kind == tc.kind {
					found = c
				}
			}
			if found == nil {
				t.Fatalf("no %s %s in %+v", tc.action, tc.kind, r.Agents[0].Changes)
			}
			if found.Risk != tc.risk || (tc.category != "" && !slices.Contains(found.Categories, tc.category)) {
				t.Fatalf("change %+v, want risk %s category %s", *found, tc.risk, tc.category)
			}
			var paths []string
			for _, p := range found.Prover {
				paths = append(paths, p.String())
			}
			if tc.prover != "" && !slices.Contains(paths, tc.prover) {
				t.Fatalf("prover %q, want %q", paths, tc.prover)
			}
		})
	}
}

// Hostile text from a PR (a hand-edited bundle has no frontmatter
// validator) renders literally in Markdown and on one line in text.
func TestMarkdownLiteral(t *testing.T) {
	evil := "/x/`a|b`<img src=x onerror=alert(1)>[l](http://e)\n::error::pwn"
	r := &Result{Schema: Schema, Base: SideRef{Ref: "base"}, Head: SideRef{Ref: "head"}, OpenShellVersion: "v0.0.111",
		Summary: Summary{MaxRisk: RiskLow, ByRisk: map[string]int{RiskLow: 1}},
		Agents: []AgentDiff{{Agent: "a<b>|c", Status: "changed", Changes: []Change{{ID: "a/C1", Action: ActionAdd, Kind: "rule",
			Host: "h.example.com", Port: 443, After: "allow GET " + evil, Risk: RiskLow, Categories: []string{},
			From: []bundle.Source{{File: "agents/`x`|.md", Line: 3, Reason: evil}}}}}}}
	var md bytes.Buffer
	if err := r.Write(&md, "markdown", WriteOptions{Marker: "p --> <x>"}); err != nil {
		t.Fatal(err)
	}
	out := md.String()
	// Outside code spans (where GFM renders everything literally) no
	// HTML, link or line-start command may appear.
	prose := stripCodeSpans(out)
	for _, bad := range []string{"<img", "](http", "\n::error", "<b>", "--> <x>"} {
		if strings.Contains(prose, bad) {
			t.Errorf("markdown prose holds %q:\n%s", bad, prose)
		}
	}
	if first, _, _ := strings.Cut(out, "\n"); first != "<!-- fullsend-policy-diff project=p_--___x_ -->" {
		t.Errorf("marker line %q", first)
	}
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "|") && strings.Count(strings.ReplaceAll(l, `\|`, ""), "|") != 7 {
			t.Errorf("a table row has extra cells: %s", l)
		}
	}
	var text bytes.Buffer
	if err := r.Write(&text, "text", WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(text.String(), "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "::") {
			t.Errorf("text line starts a workflow command: %q", l)
		}
	}
	var gh bytes.Buffer
	if err := r.Write(&gh, "github", WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(gh.String(), "\n"); n != 2 {
		t.Errorf("github output has %d lines:\n%s", n, gh.String())
	}
}

// A bundle whose policy does not match its manifest is refused.
func TestReadBundleChecksDigests(t *testing.T) {
	fsys := fstest.MapFS{
		"manifest.json": {Data: []byte(`{"schema":"` + bundle.ManifestSchema + `","openshell_version":"v0.0.111","agents":{"a":{"policy":"a.yaml","policy_sha256":"00","source":"agents/a.md","sources":[],"runtime":"claude","tier":"network","runtime_flags":{}}}}`)},
		"a.yaml":        {Data: []byte("version: 1\n")},
	}
	if _, err := ReadBundle("bundle:x", fsys); err == nil || !strings.Contains(err.Error(), "bundle:x") {
		t.Fatalf("err = %v", err)
	}
}

// Flips lists policy-test verdicts that differ between the sides.
func TestFlips(t *testing.T) {
	allow := policy(forgeEP, "      - path: /usr/bin/gh\n")
	deny := policy(strings.ReplaceAll(forgeEP, "/repos/o/r", "/repos/o/other"), "      - path: /usr/bin/gh\n")
	fsys := fstest.MapFS{"agents/a.policytest.yaml": {Data: []byte("agent: a\ntests:\n  - name: reads the repo\n    request: GET https://api.github.com/repos/o/r from /usr/bin/gh\n    expect: allow\n")}}
	flips, err := Flips(fsys, side(t, "network", map[string]string{"a": allow}), side(t, "network", map[string]string{"a": deny}), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(flips) != 1 || flips[0].Before != "allow" || flips[0].After != "deny" || flips[0].Name != "reads the repo" {
		t.Fatalf("flips = %+v", flips)
	}
}

func TestParseInput(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	for _, tc := range []struct{ arg, kind string }{{"git:main", InputGit}, {"bundle:x/policies", InputBundle}, {dir, InputDir}} {
		in, err := ParseInput(ctx, dir, tc.arg)
		if err != nil || in.Kind != tc.kind {
			t.Errorf("%s: %+v %v", tc.arg, in, err)
		}
	}
	for _, bad := range []string{"git:-x", "git:", "", "/no/such/dir"} {
		if _, err := ParseInput(ctx, dir, bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func FuzzParseInput(f *testing.F) {
	for _, s := range []string{"git:HEAD", "bundle:p", "git:--upload-pack=x", "git:a\nb"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, arg string) {
		if !strings.HasPrefix(arg, "git:") && !strings.HasPrefix(arg, "bundle:") {
			return // other arguments ask git or the filesystem
		}
		in, err := ParseInput(t.Context(), t.TempDir(), arg)
		if err == nil && in.Kind == InputGit && (strings.HasPrefix(in.Value, "-") || strings.ContainsAny(in.Value, "\x00\n")) {
			t.Fatalf("%q: unsafe revision accepted", arg)
		}
	})
}

// stripCodeSpans removes GFM code spans: a run of n backticks up to the
// next run of exactly n.
func stripCodeSpans(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		if s[i] != '`' {
			b.WriteByte(s[i])
			i++
			continue
		}
		n := 0
		for i+n < len(s) && s[i+n] == '`' {
			n++
		}
		j := i + n
		end := -1
		for k := j; k < len(s); {
			if s[k] != '`' {
				k++
				continue
			}
			m := 0
			for k+m < len(s) && s[k+m] == '`' {
				m++
			}
			if m == n {
				end = k + m
				break
			}
			k += m
		}
		if end < 0 {
			b.WriteString(s[i:j])
			i = j
			continue
		}
		b.WriteString("CODE")
		i = end
	}
	return b.String()
}

// An added agent lists all its grants; a removed one is one change.
func TestAgentAddedRemoved(t *testing.T) {
	doc := policy(forgeEP, "      - path: /usr/bin/gh\n")
	r := Compare(side(t, "network", map[string]string{"old": doc}), side(t, "network", map[string]string{"new": doc}), Options{})
	if len(r.Agents) != 2 || r.Agents[0].Agent != "new" || r.Agents[0].Status != "added" || r.Agents[1].Status != "removed" || len(r.Agents[1].Changes) != 1 {
		t.Fatalf("agents = %+v", r.Agents)
	}
	if r.Agents[0].Changes[0].Kind != "agent" || r.Summary.Removed != 0 {
		t.Fatalf("first change %+v summary %+v", r.Agents[0].Changes[0], r.Summary)
	}
}

// Grants only the runtime's baseline causes are capped at low; one with a
// frontmatter cause keeps its risk.
func TestCapBaseline(t *testing.T) {
	base := []bundle.Source{{File: "agents/a.md", Line: 2, Reason: "runtime claude via anthropic (profile anthropic)"}}
	c := Change{Action: ActionAdd, Kind: "rule", Risk: RiskHigh, From: base}
	if c.capBaseline(); c.Risk != RiskLow {
		t.Errorf("baseline rule risk %s", c.Risk)
	}
	c = Change{Action: ActionAdd, Kind: "rule", Risk: RiskHigh, From: append(base, bundle.Source{File: "agents/a.md", Line: 9, Reason: "sandbox rule POST /x"})}
	if c.capBaseline(); c.Risk != RiskHigh {
		t.Errorf("declared rule risk %s", c.Risk)
	}
}

// The same policy under two OpenShell versions: from v0.0.110 a tunnel that
// would carry provider credentials to an L4 endpoint is refused
// (proxy.rs:2024-2066 @ v0.0.111), so the case flips allow -> deny.
func TestFlipsAcrossVersions(t *testing.T) {
	l4 := policy("      - host: api.github.com\n        port: 443\n", "      - path: /usr/bin/gh\n")
	fsys := fstest.MapFS{"agents/a.policytest.yaml": {Data: []byte("agent: a\ntests:\n  - name: credentialed raw tunnel\n    request: CONNECT api.github.com:443 from /usr/bin/gh credentialed p\n    expect: deny\n")}}
	base, head := side(t, "network", map[string]string{"a": l4}), side(t, "network", map[string]string{"a": l4})
	base.OpenShellVersion = "v0.0.83"
	flips, err := Flips(fsys, base, head, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(flips) != 1 || flips[0].Before != "allow" || flips[0].After != "deny" {
		t.Fatalf("flips = %+v", flips)
	}
}

// TestSpawnWideningRow: a spawn widening the head declares is a change of
// its own, graded high under spawn_widening; one it drops is a removal.
func TestSpawnWideningRow(t *testing.T) {
	doc := policy(forgeEP, "      - path: /usr/bin/gh\n")
	for _, tc := range []struct {
		name          string
		before, after []string
		action, risk  string
	}{
		{"declared", nil, []string{"helper network docs.example.com"}, ActionAdd, RiskHigh},
		{"another host", []string{"helper network a.example.com"}, []string{"helper network a.example.com", "helper network b.example.com"}, ActionAdd, RiskHigh},
		{"dropped", []string{"helper process"}, nil, ActionRemove, RiskInfo},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base, head := side(t, "network", map[string]string{"a": doc}), side(t, "network", map[string]string{"a": doc})
			set := func(s *Side, w []string) { s.Agents["a"].Manifest.SpawnWidening = w }
			set(base, tc.before)
			set(head, tc.after)
			r := Compare(base, head, Options{})
			var got []Change
			for _, c := range r.Agents[0].Changes {
				if c.Kind == "spawn widening" {
					got = append(got, c)
				}
			}
			if len(got) != 1 || got[0].Action != tc.action || got[0].Risk != tc.risk {
				t.Fatalf("spawn widening changes = %+v, want one %s at %s", got, tc.action, tc.risk)
			}
			if tc.action == ActionAdd && !slices.Contains(got[0].Categories, CatSpawnWidening) {
				t.Errorf("categories %q lack %s", got[0].Categories, CatSpawnWidening)
			}
		})
	}
}
