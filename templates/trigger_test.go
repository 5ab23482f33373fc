package templates

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/fullsend-ai/agent-sandbox/agentdef"
	"github.com/fullsend-ai/agent-sandbox/compile"
	"github.com/fullsend-ai/agent-sandbox/internal/fixture"
	"github.com/fullsend-ai/agent-sandbox/openshell/decide"
	"github.com/fullsend-ai/agent-sandbox/policycue"
)

// readLog is a file system that records every file path read or probed
// through it (a missing file is recorded too: adding it would change the
// compile). Directories are not recorded; the files found in them are.
type readLog struct {
	fsys  fs.FS
	mu    sync.Mutex
	paths map[string]bool
}

func (r *readLog) add(name string) {
	r.mu.Lock()
	r.paths[name] = true
	r.mu.Unlock()
}

// Open records name unless it is a directory.
func (r *readLog) Open(name string) (fs.File, error) {
	f, err := r.fsys.Open(name)
	if err == nil {
		if st, serr := f.Stat(); serr == nil && st.IsDir() {
			return f, nil
		}
	}
	if err == nil || errors.Is(err, fs.ErrNotExist) {
		r.add(name)
	}
	return f, err
}

// Lstat records name unless it is a directory (projectfile.ReadNoLinks
// probes a fragment with Lstat before it opens it).
func (r *readLog) Lstat(name string) (fs.FileInfo, error) {
	fi, err := fs.Lstat(r.fsys, name)
	if err == nil && !fi.IsDir() || errors.Is(err, fs.ErrNotExist) {
		r.add(name)
	}
	return fi, err
}

// ReadLink keeps the link semantics of the wrapped file system.
func (r *readLog) ReadLink(name string) (string, error) { return fs.ReadLink(r.fsys, name) }

// compileInputs compiles the project in fsys as `fullsend policy diff`
// does for one git side (agentdef.Load, then compile.Compile with the
// validator) and lists the policy tests `policy compile` runs, and returns
// every path read or probed.
func compileInputs(t *testing.T, fsys fs.FS, cat *policycue.Catalog) []string {
	t.Helper()
	log := &readLog{fsys: fsys, paths: map[string]bool{}}
	proj, err := agentdef.Load(log)
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	if _, err := compile.Compile(context.Background(), proj, log, compile.Options{Catalog: cat, Checks: []compile.Check{compile.ValidateCheck}}); err != nil {
		t.Fatalf("compile: %v", err)
	}
	tests, err := decide.FindExpectations(fsys)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range tests {
		log.add(f)
	}
	out := make([]string, 0, len(log.paths))
	for p := range log.paths {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// everyInputKind is a project with an input of every kind compile reads:
// agents in each layout, skills in each layout, a skill's policy fragment,
// an agent's policy fragment outside every definition directory (a path
// the project's own text names: any file can be one), a project provider
// profile and policy tests beside an agent and at the root.
var everyInputKind = fstest.MapFS{
	"agents/triage.md": {Data: []byte("---\nname: triage\ndescription: Triage issues.\ntools: Read, Bash(curl *)\nmodel: sonnet\n" +
		"skills: [labels]\nsandbox: ../network/triage.yaml\n---\nTriage.\n")},
	"network/triage.yaml": {Data: []byte("version: 1\nnetwork_policies:\n  forge:\n    name: forge\n    endpoints:\n" +
		"      - {host: forge.example.com, port: 443, protocol: rest, enforcement: enforce, access: read-only}\n" +
		"    binaries:\n      - {path: /usr/bin/curl}\n")},
	"skills/labels/SKILL.md": {Data: []byte("---\nname: labels\ndescription: Label issues.\npolicy: labels.yaml\n---\nLabel.\n")},
	"skills/labels/labels.yaml": {Data: []byte("version: 1\nnetwork_policies:\n  labels:\n    name: labels\n    endpoints:\n" +
		"      - {host: labels.example.com, port: 443, protocol: rest, enforcement: enforce, access: read-only}\n" +
		"    binaries:\n      - {path: /usr/bin/curl}\n")},
	".claude/agents/review.md": {Data: []byte("---\nname: review\ndescription: Review changes.\ntools: Read, Bash(gh pr view:*)\n" +
		"model: sonnet\nsandbox:\n  providers:\n    - {profile: acme-github-ro, name: github-ro, credentials: [GH_TOKEN]}\n---\nReview.\n")},
	"profiles/acme-github-ro.yaml": {Data: []byte("id: acme-github-ro\ndisplay_name: Acme GitHub (read-only)\ndescription: Read-only GitHub API\n" +
		"category: source_control\nendpoints:\n  - {host: api.github.com, port: 443, protocol: rest, access: read-only, enforcement: enforce}\n" +
		"binaries:\n  - \"**/gh\"\n")},
	".claude/skills/notes/SKILL.md":  {Data: []byte("---\nname: notes\ndescription: Take notes.\n---\nNotes.\n")},
	".agents/skills/search/SKILL.md": {Data: []byte("---\nname: search\ndescription: Search.\n---\nSearch.\n")},
	".opencode/agent/reviewer.md": {Data: []byte("---\ndescription: Review diffs.\nmode: subagent\nmodel: anthropic/claude-sonnet-4-5\n" +
		"permission:\n  \"*\": deny\n  read: allow\n---\nReview.\n")},
	".opencode/agents/planner.md": {Data: []byte("---\ndescription: Plan work.\nmode: subagent\nmodel: anthropic/claude-sonnet-4-5\n" +
		"permission:\n  \"*\": deny\n  read: allow\n---\nPlan.\n")},
	".opencode/skill/lint/SKILL.md":   {Data: []byte("---\nname: lint\ndescription: Lint.\n---\nLint.\n")},
	".opencode/skills/fmt/SKILL.md":   {Data: []byte("---\nname: fmt\ndescription: Format.\n---\nFormat.\n")},
	"agents/triage.policytest.yaml":   {Data: []byte("agent: triage\ntests: []\n")},
	"checks/review.policytest.yaml":   {Data: []byte("agent: review\ntests: []\n")},
	"README.md":                       {Data: []byte("not an input\n")},
	"src/main.go":                     {Data: []byte("package main\n")},
	"agents/_draft.md":                {Data: []byte("excluded\n")},
	".github/workflows/unrelated.yml": {Data: []byte("name: x\n")},
}

// pathFilter is a pull_request trigger's paths / paths-ignore filter as
// GitHub applies it: `*` stops at '/', `**` crosses it, a `!` pattern
// excludes what earlier patterns included and the last match wins; with
// paths-ignore a change runs the workflow unless every changed file is
// ignored. No filter runs it on every change.
type pathFilter struct{ paths, ignore []string }

func (f pathFilter) triggers(file string) bool {
	if len(f.ignore) > 0 {
		return !lastMatch(f.ignore, file)
	}
	if len(f.paths) == 0 {
		return true
	}
	return lastMatch(f.paths, file)
}

func lastMatch(patterns []string, file string) bool {
	hit := false
	for _, p := range patterns {
		neg := strings.HasPrefix(p, "!")
		if ok, _ := doublestar.Match(strings.TrimPrefix(p, "!"), file); ok {
			hit = !neg
		}
	}
	return hit
}

// diffTrigger reads the policy diff workflow's pull_request filter.
func diffTrigger(t *testing.T, name string) pathFilter {
	t.Helper()
	doc := decodeAll(t, readAll(t, "github", name))[0]
	pr := asMap(asMap(doc["on"])["pull_request"])
	return pathFilter{paths: toStrings(asList(pr["paths"])), ignore: toStrings(asList(pr["paths-ignore"]))}
}

// TestPolicyDiffTriggerCoversInputs: the diff workflow's paths filter left
// out profiles/** (a PR that widened only a provider profile got no diff)
// and the policy fragments, which compile reads wherever the project's text
// points. Every path compile reads or probes, in a project with every kind
// of input and in the repository's example projects, and .fullsend-version
// (the job's own pin), must trigger the workflow.
func TestPolicyDiffTriggerCoversInputs(t *testing.T) {
	cat, err := policycue.LoadCatalog(nil, "")
	if err != nil {
		t.Fatal(err)
	}
	projects := map[string]fs.FS{"every input kind": everyInputKind}
	for _, p := range []string{"fullsend-agents", "fullsend-providers", "opencode", "production", "triage"} {
		dir := filepath.Join("..", "testdata", p)
		if _, err := os.Stat(dir); err != nil {
			t.Fatalf("example project %s: %v", dir, err)
		}
		projects[p] = os.DirFS(fixture.Example(t, dir, p))
	}
	filter := diffTrigger(t, "workflows/fullsend-policy-diff.yml")
	for name, fsys := range projects {
		t.Run(name, func(t *testing.T) {
			inputs := append(compileInputs(t, fsys, cat), ".fullsend-version")
			if name == "every input kind" {
				for _, want := range []string{"profiles/acme-github-ro.yaml", "network/triage.yaml", "skills/labels/labels.yaml", "checks/review.policytest.yaml"} {
					if !contains(toAny(inputs), want) {
						t.Fatalf("compile did not read %s (read %v): the project no longer exercises that input", want, inputs)
					}
				}
			}
			for _, in := range inputs {
				if !filter.triggers(in) {
					t.Errorf("compile reads %s, but a pull request changing only it does not trigger the policy diff", in)
				}
			}
		})
	}
}

// TestPathFilter checks the filter model against GitHub's documented
// examples (the filter pattern cheat sheet).
func TestPathFilter(t *testing.T) {
	for _, tc := range []struct {
		f    pathFilter
		file string
		want bool
	}{
		{pathFilter{}, "anything/at/all.txt", true},
		{pathFilter{paths: []string{"agents/**"}}, "agents/a/b.md", true},
		{pathFilter{paths: []string{"agents/**"}}, "profiles/x.yaml", false},
		{pathFilter{paths: []string{"*.md"}}, "docs/x.md", false},
		{pathFilter{paths: []string{"**/*.cue"}}, "x.cue", true},
		{pathFilter{paths: []string{"docs/**", "!docs/**/*.md"}}, "docs/a/b.md", false},
		{pathFilter{paths: []string{"!docs/**/*.md", "docs/**"}}, "docs/a/b.md", true},
		{pathFilter{ignore: []string{"docs/**"}}, "docs/a.md", false},
		{pathFilter{ignore: []string{"docs/**"}}, "agents/a.md", true},
	} {
		if got := tc.f.triggers(tc.file); got != tc.want {
			t.Errorf("%+v triggers %s = %v, want %v", tc.f, tc.file, got, tc.want)
		}
	}
}

func toAny(l []string) []any {
	out := make([]any, len(l))
	for i, s := range l {
		out[i] = s
	}
	return out
}
