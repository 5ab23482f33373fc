package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/fullsend-ai/agent-sandbox/internal/testtool"
	"github.com/fullsend-ai/agent-sandbox/policydiff"
)

// The acceptance tests of reference/day2-loop.md B.6, each on copies of
// testdata/triage edited as an author would edit the frontmatter.

func triageCopy(t *testing.T) string {
	t.Helper()
	dir := copyTree(t, filepath.Join("..", "..", "testdata", "triage"))
	// The committed bundle is irrelevant to a source diff; drop it so no
	// test reads it by accident.
	if err := os.RemoveAll(filepath.Join(dir, "policies")); err != nil {
		t.Fatal(err)
	}
	return dir
}

// edit replaces old with new exactly once in dir/file.
func edit(t *testing.T, dir, file, old, new string) {
	t.Helper()
	p := filepath.Join(dir, file)
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(data), old); n != 1 {
		t.Fatalf("%s: %q occurs %d times, want 1", file, old, n)
	}
	if err := os.WriteFile(p, []byte(strings.Replace(string(data), old, new, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
}

func lineOf(t *testing.T, dir, file, text string) int {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, file))
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range strings.Split(string(data), "\n") {
		if strings.Contains(l, text) {
			return i + 1
		}
	}
	t.Fatalf("%s: no line holds %q", file, text)
	return 0
}

func diffResult(t *testing.T, args ...string) *policydiff.Result {
	t.Helper()
	out, err := execCLI(t, append([]string{"policy", "diff", "-o", "json"}, args...)...)
	if err != nil {
		t.Fatalf("policy diff %v: %v\n%s", args, err, out)
	}
	var r policydiff.Result
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("decoding %s: %v", out, err)
	}
	return &r
}

func allChanges(r *policydiff.Result) []policydiff.Change {
	var out []policydiff.Change
	for _, a := range r.Agents {
		out = append(out, a.Changes...)
	}
	return out
}

func findChange(t *testing.T, r *policydiff.Result, match func(c policydiff.Change) bool) policydiff.Change {
	t.Helper()
	for _, c := range allChanges(r) {
		if match(c) {
			return c
		}
	}
	t.Fatalf("no such change in %+v", allChanges(r))
	return policydiff.Change{}
}

// B.6 #1: BASE = HEAD.
func TestPolicyDiffSame(t *testing.T) {
	base, head := triageCopy(t), triageCopy(t)
	out, err := execCLI(t, "policy", "diff", base, head, "--fail-on", "low")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(out, "Diff: 0 added, 0 widened, 0 narrowed, 0 removed, 0 changed, 0 moved; highest risk none.") {
		t.Fatalf("output:\n%s", out)
	}
}

// B.6 #2: comment-only, key-reordering and whitespace edits of every agent
// and skill file change no grant (the models are compared, and a line that
// only shifted is the same origin).
func TestPolicyDiffFormattingOnly(t *testing.T) {
	base, head := triageCopy(t), triageCopy(t)
	files, _ := filepath.Glob(filepath.Join(head, "agents", "*.md"))
	skills, _ := filepath.Glob(filepath.Join(head, "skills", "*", "SKILL.md"))
	for _, f := range append(files, skills...) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		s := string(data)
		lines := strings.Split(s, "\n")
		// lines[1] is "name: X": move it to the end of the frontmatter.
		end := slices.Index(lines[1:], "---") + 1
		if !strings.HasPrefix(lines[1], "name: ") || end <= 1 {
			t.Fatalf("%s: unexpected layout", f)
		}
		name := lines[1]
		fm := append(append([]string{"---", "# reviewed 2026-11-28"}, lines[2:end]...), "", "# the name last", name+"   ", "---")
		s = strings.Join(append(fm, lines[end+1:]...), "\n") + "\n\n"
		if err := os.WriteFile(f, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r := diffResult(t, base, head)
	if n := len(allChanges(r)); n != 0 {
		t.Fatalf("%d changes: %+v", n, allChanges(r))
	}
}

// writeRuleProjects returns a base where duplicate-detector may already
// write (tier full, a POST on labels: a POST on the forge proxy needs the
// full tier) and a head that adds the comments POST.
func writeRuleProjects(t *testing.T) (base, head string) {
	base, head = triageCopy(t), triageCopy(t)
	for _, d := range []string{base, head} {
		edit(t, d, "agents/duplicate-detector.md", "  tier: network\n", "  tier: full\n")
		edit(t, d, "agents/duplicate-detector.md", "        - GET /repos/{{OWNER}}/{{REPO_NAME}}/issues\n",
			"        - GET /repos/{{OWNER}}/{{REPO_NAME}}/issues\n        - POST /repos/{{OWNER}}/{{REPO_NAME}}/issues/{{ISSUE_NUMBER}}/labels\n")
	}
	// The triage tests say the detector never labels: this scenario has it
	// label, so its expectations go (policy compile would refuse them).
	for _, d := range []string{base, head} {
		if err := os.Remove(filepath.Join(d, "agents", "duplicate-detector.policytest.yaml")); err != nil {
			t.Fatal(err)
		}
	}
	edit(t, head, "agents/duplicate-detector.md", "/labels\n",
		"/labels\n        - POST /repos/{{OWNER}}/{{REPO_NAME}}/issues/{{ISSUE_NUMBER}}/comments\n")
	return base, head
}

// B.6 #3: a write rule added is exactly one change, at its line. (The page
// adds it to the network-tier agent; fullsend's tier cap refuses a POST
// below full, so both sides are at full already.)
func TestPolicyDiffAddWriteRule(t *testing.T) {
	base, head := writeRuleProjects(t)
	r := diffResult(t, base, head)
	cs := allChanges(r)
	if len(cs) != 1 {
		t.Fatalf("%d changes, want 1: %+v", len(cs), cs)
	}
	c := cs[0]
	if c.Action != "add" || c.Kind != "rule" || c.Risk != "high" || !slices.Equal(c.Categories, []string{"capability_expansion"}) {
		t.Fatalf("change = %+v", c)
	}
	line := lineOf(t, head, "agents/duplicate-detector.md", "/comments")
	if len(c.From) == 0 || c.From[0].File != "agents/duplicate-detector.md" || c.From[0].Line != line {
		t.Fatalf("from = %+v, want agents/duplicate-detector.md:%d", c.From, line)
	}
	if _, err := execCLI(t, "policy", "diff", base, head, "--fail-on", "high"); exitCode(err) != 1 {
		t.Fatalf("--fail-on high: %v (exit %d)", err, exitCode(err))
	}
	if out, err := execCLI(t, "policy", "diff", base, head, "--fail-on", "critical"); err != nil {
		t.Fatalf("--fail-on critical: %v\n%s", err, out)
	}
}

// B.6 #4: a placeholder segment widened to a glob is a high widen; the
// reverse an info narrow.
func TestPolicyDiffWidenNarrow(t *testing.T) {
	base, head := triageCopy(t), triageCopy(t)
	edit(t, head, "agents/duplicate-detector.md", "/issues/{{ISSUE_NUMBER}}\n", "/issues/*\n")
	isRule := func(c policydiff.Change) bool { return c.Kind == "rule" }
	if c := findChange(t, diffResult(t, base, head), isRule); c.Action != "widen" || c.Risk != "high" {
		t.Fatalf("widen: %+v", c)
	}
	if c := findChange(t, diffResult(t, head, base), isRule); c.Action != "narrow" || c.Risk != "info" {
		t.Fatalf("narrow: %+v", c)
	}
}

// B.6 #5: the tier raised to full is critical; an endpoint removed is an
// info remove.
func TestPolicyDiffTierAndRemove(t *testing.T) {
	base, head := triageCopy(t), triageCopy(t)
	edit(t, head, "agents/duplicate-detector.md", "  tier: network\n", "  tier: full\n")
	edit(t, head, "agents/duplicate-detector.md", "/issues\n", "/issues\n        - POST /repos/{{OWNER}}/{{REPO_NAME}}/issues/{{ISSUE_NUMBER}}/comments\n")
	r := diffResult(t, base, head)
	if c := findChange(t, r, func(c policydiff.Change) bool { return c.Kind == "tier" }); c.Action != "widen" || c.Risk != "critical" || c.After != "full" {
		t.Fatalf("tier: %+v", c)
	}
	if r.Summary.MaxRisk != "critical" {
		t.Fatalf("max risk %s", r.Summary.MaxRisk)
	}
	base, head = triageCopy(t), triageCopy(t)
	edit(t, head, "agents/completeness-assessor.md", "  - WebFetch(domain:developer.mozilla.org)\n", "")
	r = diffResult(t, base, head)
	c := findChange(t, r, func(c policydiff.Change) bool { return c.Kind == "endpoint" })
	if c.Action != "remove" || c.Risk != "info" || c.Host != "developer.mozilla.org" {
		t.Fatalf("remove: %+v", c)
	}
	if r.Summary.MaxRisk != "info" {
		t.Fatalf("max risk %s: %+v", r.Summary.MaxRisk, allChanges(r))
	}
}

// B.6 #6: a wildcard host and private allowed_ips are critical.
func TestPolicyDiffCriticalNetwork(t *testing.T) {
	for _, tc := range []struct{ name, decl, category string }{
		{"wildcard host", "    - host: \"*.example.com\"\n      rules:\n        - GET /v1/x\n", "wildcard_host"},
		{"private allowed_ips", "    - host: internal.example.com\n      allowed_ips: [\"10.0.0.0/8\"]\n      rules:\n        - GET /v1/y\n", "private_allowed_ips"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base, head := triageCopy(t), triageCopy(t)
			edit(t, head, "agents/duplicate-detector.md", "/issues\n", "/issues\n"+tc.decl)
			c := findChange(t, diffResult(t, base, head), func(c policydiff.Change) bool { return c.Kind == "endpoint" && c.Action == "add" })
			if c.Risk != "critical" || !slices.Contains(c.Categories, tc.category) {
				t.Fatalf("%+v", c)
			}
		})
	}
}

// B.6 #7: the same rule moved from the agent to its skill is one move.
func TestPolicyDiffMove(t *testing.T) {
	base, head := triageCopy(t), triageCopy(t)
	edit(t, head, "agents/duplicate-detector.md", "        - GET /repos/{{OWNER}}/{{REPO_NAME}}/issues\n", "")
	edit(t, head, "skills/duplicate-detector/SKILL.md", "      rules:\n", "      rules:\n        - GET /repos/{{OWNER}}/{{REPO_NAME}}/issues\n")
	r := diffResult(t, base, head)
	cs := allChanges(r)
	if len(cs) != 1 || cs[0].Action != "move" || cs[0].Risk != "info" || cs[0].Kind != "rule" {
		t.Fatalf("changes: %+v", cs)
	}
	if cs[0].From[0].File != "skills/duplicate-detector/SKILL.md" || cs[0].Was[0].File != "agents/duplicate-detector.md" {
		t.Fatalf("from %+v was %+v", cs[0].From, cs[0].Was)
	}
}

// B.6 #8: a literal that became a placeholder is one change on the rule.
func TestPolicyDiffPlaceholder(t *testing.T) {
	base, head := triageCopy(t), triageCopy(t)
	edit(t, base, "agents/duplicate-detector.md", "GET /repos/{{OWNER}}/{{REPO_NAME}}/issues\n", "GET /repos/acme/{{REPO_NAME}}/issues\n")
	cs := allChanges(diffResult(t, base, head))
	if len(cs) != 1 || cs[0].Action != "change" || cs[0].Kind != "rule" ||
		cs[0].Before != "allow GET /repos/acme/{{REPO_NAME}}/issues" || cs[0].After != "allow GET /repos/{{OWNER}}/{{REPO_NAME}}/issues" {
		t.Fatalf("changes: %+v", cs)
	}
}

// B.6 #9: a head that does not compile fails the diff, names the head and
// prints no report.
func TestPolicyDiffHeadFails(t *testing.T) {
	base, head := triageCopy(t), triageCopy(t)
	edit(t, head, "agents/duplicate-detector.md", "tools: Bash(curl *)\n", "tools: Bash(curl *\n")
	out, err := execCLI(t, "policy", "diff", base, head, "-o", "json")
	if exitCode(err) != 1 || !errors.Is(err, policydiff.ErrSide) || !strings.Contains(err.Error(), "head ("+head+")") ||
		!strings.Contains(err.Error(), "agents/duplicate-detector.md") {
		t.Fatalf("err = %v (exit %d)", err, exitCode(err))
	}
	if out != "" {
		t.Fatalf("partial output: %q", out)
	}
}

// B.6 #10: the Markdown comment has the marker on line 1 and is the same
// bytes run after run (hostile text is covered in package policydiff).
func TestPolicyDiffMarkdownComment(t *testing.T) {
	base, head := writeRuleProjects(t)
	var got [2][]byte
	for i := range got {
		file := filepath.Join(t.TempDir(), "comment.md")
		if out, err := execCLI(t, "policy", "diff", base, head, "--dir", "proj-->x", "--comment-file", file); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		got[i], _ = os.ReadFile(file)
	}
	if !bytes.Equal(got[0], got[1]) {
		t.Fatal("two runs differ")
	}
	first, _, _ := strings.Cut(string(got[0]), "\n")
	if first != "<!-- fullsend-policy-diff project=proj--_x -->" {
		t.Fatalf("line 1 = %q", first)
	}
}

// B.6 #10, on what the frontmatter validators let through: a query glob
// holding a backtick, a pipe, an <img> tag and a link renders literally.
func TestPolicyDiffMarkdownHostileQuery(t *testing.T) {
	base, head := triageCopy(t), triageCopy(t)
	edit(t, head, "skills/duplicate-detector/SKILL.md", "            q: \"repo:{{OWNER}}/{{REPO_NAME}} {*,*.**}\"\n",
		"            q: \"repo:{{OWNER}}/{{REPO_NAME}} {*,*.**}\"\n        - method: GET\n          path: /search/code\n          query:\n            q: \"x|`y`<img src=x>[a](b)\"\n")
	out, err := execCLI(t, "policy", "diff", base, head, "-o", "markdown")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	row := ""
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "/search/code") && strings.HasPrefix(l, "|") {
			row = l
		}
	}
	want := "``allow GET /search/code {\"query\":{\"q\":{\"glob\":\"x\\|`y`<img src=x>[a](b)\"}}}``"
	if !strings.Contains(row, want) || strings.Count(strings.ReplaceAll(row, `\|`, ""), "|") != 7 {
		t.Fatalf("row %q, want the cell %s", row, want)
	}
}

// B.6 #11: two compiled bundles give the changes the sources give, minus
// the source lines when the bundles carry no provenance.
func TestPolicyDiffBundles(t *testing.T) {
	base, head := writeRuleProjects(t)
	for _, d := range []string{base, head} {
		if out, err := execCLI(t, "policy", "compile", d); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
	}
	src := diffResult(t, base, head)
	bun := diffResult(t, "bundle:"+filepath.Join(base, "policies"), "bundle:"+filepath.Join(head, "policies"))
	strip := func(cs []policydiff.Change) []policydiff.Change {
		for i := range cs {
			cs[i].From, cs[i].Was = nil, nil
		}
		return cs
	}
	a, b := strip(allChanges(src)), strip(allChanges(bun))
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if !bytes.Equal(ja, jb) {
		t.Fatalf("sources:\n%s\nbundles:\n%s", ja, jb)
	}
	// Given the project directory, the bundle's provenance.json keeps the
	// source line.
	full := diffResult(t, "bundle:"+base, "bundle:"+head)
	if c := allChanges(full); len(c) != 1 || c[0].From[0].File != "agents/duplicate-detector.md" {
		t.Fatalf("bundle provenance: %+v", c)
	}
}

// B.6 #12: GitHub annotations at the source line; GitLab Code Quality JSON.
func TestPolicyDiffCIFormats(t *testing.T) {
	base, head := writeRuleProjects(t)
	out, err := execCLI(t, "policy", "diff", base, head, "-o", "github")
	if err != nil {
		t.Fatal(err)
	}
	line := lineOf(t, head, "agents/duplicate-detector.md", "/comments")
	want := fmt.Sprintf("::error file=agents/duplicate-detector.md,line=%d,", line)
	if !strings.HasPrefix(out, want) || !strings.HasSuffix(out, "highest risk high.\n") {
		t.Fatalf("github output:\n%s\nwant prefix %s", out, want)
	}
	out, err = execCLI(t, "policy", "diff", base, head, "-o", "gitlab")
	if err != nil {
		t.Fatal(err)
	}
	var issues []struct {
		Description string `json:"description"`
		CheckName   string `json:"check_name"`
		Fingerprint string `json:"fingerprint"`
		Severity    string `json:"severity"`
		Location    struct {
			Path  string `json:"path"`
			Lines struct {
				Begin int `json:"begin"`
			} `json:"lines"`
		} `json:"location"`
	}
	if err := json.Unmarshal([]byte(out), &issues); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(issues) != 1 || issues[0].Location.Path != "agents/duplicate-detector.md" || issues[0].Location.Lines.Begin != line ||
		issues[0].Severity != "critical" || issues[0].Fingerprint == "" || issues[0].CheckName != "capability_expansion" {
		t.Fatalf("issues = %+v", issues)
	}
}

// git:REV inputs compile the tree of each commit, read with git archive.
func TestPolicyDiffGit(t *testing.T) {
	git := testtool.Find(t, "git", ".ci/install.d/10-git.sh")
	repo := t.TempDir()
	proj := filepath.Join(repo, "proj")
	if err := os.Rename(triageCopy(t), proj); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) {
		cmd := exec.Command(git, args...)
		cmd.Dir = repo
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_GLOBAL=/dev/null")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	run("init", "-q")
	run("add", "-A")
	run("commit", "-qm", "base")
	edit(t, proj, "agents/duplicate-detector.md", "/issues/{{ISSUE_NUMBER}}\n", "/issues/*\n")
	// A PR cannot hide a file from the diff with export-ignore (git
	// archive would honour it) nor rewrite one with export-subst.
	if err := os.WriteFile(filepath.Join(repo, ".gitattributes"), []byte("proj/agents/duplicate-detector.md export-ignore\n* export-subst\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run("add", "-A")
	run("commit", "-qm", "head")
	t.Chdir(repo)
	r := diffResult(t, "git:HEAD~1", "HEAD", "--dir", "proj")
	c := findChange(t, r, func(c policydiff.Change) bool { return c.Kind == "rule" })
	if c.Action != "widen" || r.Base.Commit == "" || r.Head.Commit == r.Base.Commit || r.Head.Ref != "git:HEAD" {
		t.Fatalf("result %+v change %+v", r.Head, c)
	}
	if _, err := execCLI(t, "policy", "diff", "git:--output=x", "HEAD"); exitCode(err) != 1 || !errors.Is(err, policydiff.ErrSide) {
		t.Fatalf("option-like revision: %v", err)
	}
}

// --base-openshell/--head-openshell: one project under two targets, every
// policy test run under both.
func TestPolicyDiffOpenShellVersions(t *testing.T) {
	r := diffResult(t, "--base-openshell", "v0.0.83", "--head-openshell", "v0.0.111", filepath.Join("..", "..", "testdata", "triage"))
	if r.OpenShellVersion != "v0.0.83 -> v0.0.111" || r.Base.OpenShellVersion != "v0.0.83" {
		t.Fatalf("versions: %+v", r)
	}
	for _, f := range r.Flips {
		if f.Before == f.After {
			t.Fatalf("not a flip: %+v", f)
		}
	}
	if _, err := execCLI(t, "policy", "diff", "--base-openshell", "v0.0.83", "testdata"); exitCode(err) != 2 {
		t.Fatalf("one version flag: exit %d", exitCode(err))
	}
}

// Golden renderings of the write-rule diff (go test -update rewrites them).
func TestPolicyDiffGolden(t *testing.T) {
	base, head := writeRuleProjects(t)
	parent := t.TempDir()
	for _, m := range [][2]string{{base, "base"}, {head, "head"}} {
		if err := os.Rename(m[0], filepath.Join(parent, m[1])); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(parent)
	for _, format := range []string{"text", "json", "markdown", "github", "gitlab"} {
		out, err := execCLI(t, "policy", "diff", "base", "head", "-o", format)
		if err != nil {
			t.Fatalf("%s: %v\n%s", format, err, out)
		}
		// The manifests pin the source files' digests: normalize them.
		out = regexp.MustCompile(`[0-9a-f]{64}`).ReplaceAllString(out, "MANIFEST")
		golden := filepath.Join(testdataDir, "policydiff", "triage-write."+format+".golden")
		if *updateValidateGolden {
			if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(golden, []byte(out), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatalf("%v (run go test -update)", err)
		}
		if out != string(want) {
			t.Errorf("%s differs from %s:\n%s", format, golden, out)
		}
	}
}

// testdataDir is this package's testdata, absolute (tests that chdir).
var testdataDir = func() string {
	d, err := filepath.Abs("testdata")
	if err != nil {
		panic(err)
	}
	return d
}()

// genProject writes n agents in bench/compile.sh's four shapes; with
// narrow, every agent declaring GET /v1/items/** with i%20 == 3 narrows it.
func genProject(b *testing.B, dir string, n int, narrow bool) {
	b.Helper()
	for i := range n {
		skill := fmt.Sprintf("skill-%d", i)
		if err := os.MkdirAll(filepath.Join(dir, "skills", skill), 0o755); err != nil {
			b.Fatal(err)
		}
		_ = os.MkdirAll(filepath.Join(dir, "agents"), 0o755)
		s := fmt.Sprintf("---\nname: %s\ndescription: Generated skill %d for the compile benchmark.\nallowed-tools: Read Grep\n---\nSkill body.\n", skill, i)
		if err := os.WriteFile(filepath.Join(dir, "skills", skill, "SKILL.md"), []byte(s), 0o644); err != nil {
			b.Fatal(err)
		}
		tools, extra := "", ""
		switch i % 4 {
		case 0:
			tools = "Read, Grep, Bash(grep *), Bash(cat *)"
		case 1:
			tools = "Bash(gh,jq), Read"
		case 2:
			tools = fmt.Sprintf("WebFetch(domain:docs-%d.example.com), Read", i)
		case 3:
			glob := "**"
			if narrow && i%20 == 3 {
				glob = "*"
			}
			tools = "Bash(curl *)"
			extra = fmt.Sprintf("sandbox:\n  tier: full\n  endpoints:\n    - host: api-%d.example.com\n      rules:\n        - GET /v1/items/%s\n        - POST /v1/items/{{ISSUE_NUMBER}}/notes\n", i, glob)
		}
		a := fmt.Sprintf("---\nname: agent-%d\ndescription: Generated agent %d for the compile benchmark.\ntools: %s\nskills: [%s]\n%s---\nAgent body.\n", i, i, tools, skill, extra)
		if err := os.WriteFile(filepath.Join(dir, "agents", fmt.Sprintf("agent-%d.md", i)), []byte(a), 0o644); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPolicyDiff times `policy diff` of two 1000-agent projects (both
// compiled) and one `policy compile` of one of them; bench/diff.sh prints
// their ratio from the CLI (target: diff within 1.2x of compile).
func BenchmarkPolicyDiff(b *testing.B) {
	base, head := b.TempDir(), b.TempDir()
	genProject(b, base, 1000, false)
	genProject(b, head, 1000, true)
	b.Run("compile", func(b *testing.B) {
		for b.Loop() {
			if out, err := execCLIb(b, "policy", "compile", base); err != nil {
				b.Fatalf("%v\n%s", err, out)
			}
		}
	})
	b.Run("diff", func(b *testing.B) {
		for b.Loop() {
			if out, err := execCLIb(b, "policy", "diff", base, head); err != nil || !strings.Contains(out, "50 narrowed") {
				b.Fatalf("%v\n%s", err, out)
			}
		}
	})
}

func execCLIb(b *testing.B, args ...string) (string, error) {
	root := newRootCmd()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(args)
	err := root.Execute()
	return out.String(), err
}
