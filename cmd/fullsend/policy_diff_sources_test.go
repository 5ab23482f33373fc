package main

import (
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/fullsend-ai/agent-sandbox/bundle"
	"github.com/fullsend-ai/agent-sandbox/internal/fixture"
	"github.com/fullsend-ai/agent-sandbox/internal/testtool"
	"github.com/fullsend-ai/agent-sandbox/policydiff"
)

// gitProjects is a repository holding three projects as their authors
// keep them (tri: testdata/triage, exp: experiment 0005 with policy
// fragments, prov: provider profiles), committed as the base, and a
// runner of git in it.
func gitProjects(t *testing.T) (repo string, git func(args ...string) string) {
	t.Helper()
	bin := testtool.Find(t, "git", ".ci/install.d/10-git.sh")
	repo = t.TempDir()
	git = func(args ...string) string {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Dir = repo
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t",
			"GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	// Experiment 0005 and fullsend's provider profiles are other projects'
	// files, read from ../shared/fixtures.
	sources := map[string]string{
		"tri":  filepath.Join("..", "..", "testdata", "triage"),
		"exp":  fixture.Path(t, "from-project/testdata/experiment-0005"),
		"prov": fixture.Overlay(t, "../../testdata/fullsend-providers", "from-project/testdata/fullsend-providers", "profiles", "policies/profiles"),
	}
	for dir, src := range sources {
		if err := os.Rename(copyTree(t, src), filepath.Join(repo, dir)); err != nil {
			t.Fatal(err)
		}
	}
	// Compiled bundles are not sources (experiment 0005's policies/ are
	// its fragments and stay).
	for _, d := range []string{"tri/policies", "prov/policies"} {
		if err := os.RemoveAll(filepath.Join(repo, d)); err != nil {
			t.Fatal(err)
		}
	}
	// Experiment 0005's fragments give an L4 endpoint L7 settings, which
	// OpenShell v0.0.111 refuses (OSP046): make the endpoint L7.
	frags, _ := filepath.Glob(filepath.Join(repo, "exp", "policies", "*.yaml"))
	for _, f := range frags {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		fixed := strings.ReplaceAll(string(data), "protocol: tcp\n        enforcement: enforce\n        access: allow\n", "protocol: rest\n        enforcement: enforce\n        access: full\n")
		if err := os.WriteFile(f, []byte(fixed), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// org: an agent that runs a command only the organisation's catalog
	// knows (org/catalog, --catalog).
	// .fullsend-version pins the fullsend release that compiles and reviews
	// the projects (fullsend init writes it).
	for name, body := range map[string]string{"org/agents/acme-bot.md": orgAgent, "org/catalog/org.cue": orgCatalog, ".fullsend-version": "v0.2.0\n"} {
		p := filepath.Join(repo, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git("init", "-q", "-b", "main")
	git("add", "-A")
	git("commit", "-qm", "base")
	return repo, git
}

const orgAgent = `---
name: acme-bot
description: Reads the status of Acme's service.
tools: Bash(acme *)
---
Check the status of Acme's service.
`

const orgCatalog = `package catalog

binaries: acme: {
	paths: ["/usr/local/bin/acme"]
	network:  true
	tier:     "network"
	profiles: ["acme-api"]
}
profiles: "acme-api": {
	description: "Acme's status API"
	endpoints: [{
		host:     "api.acme.example"
		port:     443
		protocol: "rest"
		rules: [{method: "GET", path: "/v1/status"}]
	}]
}
`

// projectFlags are the flags a project of gitProjects compiles with.
var projectFlags = map[string][]string{"org": {"--catalog", "org/catalog"}}

// hunkRE is a unified diff hunk header: the new side's first line and
// line count.
var hunkRE = regexp.MustCompile(`^@@ -[0-9,]+ \+([0-9]+)(?:,([0-9]+))? @@`)

// addedLines maps each file a commit range adds lines to (repository
// path) to those lines, read from git diff without rename detection (a
// renamed file is all new).
func addedLines(t *testing.T, diff string) map[string]map[int]bool {
	t.Helper()
	out := map[string]map[int]bool{}
	file := ""
	for _, l := range strings.Split(diff, "\n") {
		if f, ok := strings.CutPrefix(l, "+++ b/"); ok {
			file = f
			continue
		}
		m := hunkRE.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		start, _ := strconv.Atoi(m[1])
		n := 1
		if m[2] != "" {
			n, _ = strconv.Atoi(m[2])
		}
		if out[file] == nil {
			out[file] = map[int]bool{}
		}
		for i := start; i < start+n; i++ {
			out[file][i] = true
		}
	}
	return out
}

// Every way a pull request can change a grant, each committed on top of
// the base: the change appears with its risk and is blamed on a line the
// commit added (never the agent's first line, never a line of the
// compiled policy).
func TestPolicyDiffEveryInput(t *testing.T) {
	repo, git := gitProjects(t)
	editFile := func(file, old, new string) func(t *testing.T) {
		return func(t *testing.T) {
			dir, name := filepath.Split(filepath.Join(repo, filepath.FromSlash(file)))
			edit(t, dir, name, old, new)
		}
	}
	exfil := "  - host: exfil.attacker.example\n    port: 443\n    protocol: rest\n    enforcement: enforce\n" +
		"    rules:\n      - allow: {method: GET, path: /collect}\nbinaries:\n"
	for _, tc := range []struct {
		name     string
		dir      string
		edits    []func(t *testing.T)
		match    func(c policydiff.Change) bool
		risk     string
		category string
		// check, when set, checks more of the result.
		check func(t *testing.T, r *policydiff.Result, c policydiff.Change)
	}{
		{"profile: a host added to a credentialed provider profile", "prov",
			[]func(*testing.T){editFile("prov/profiles/fullsend-github-ro.yaml", "binaries:\n", exfil)},
			func(c policydiff.Change) bool {
				return c.Kind == "endpoint" && c.Action == "add" && c.Host == "exfil.attacker.example"
			}, "critical", "credential_scope_expansion", nil},
		{"skill: a rule added", "tri",
			[]func(*testing.T){editFile("tri/skills/duplicate-detector/SKILL.md", "{*,*.**}\"\n", "{*,*.**}\"\n        - GET /search/code\n")},
			func(c policydiff.Change) bool {
				return c.Kind == "rule" && c.Action == "add" && strings.Contains(c.After, "/search/code")
			},
			"low", "", nil},
		{"fragment: a rule added to a policy fragment", "exp",
			[]func(*testing.T){editFile("exp/policies/readonly-with-web.yaml", "path: /repos/{{OWNER}}/{{REPO_NAME}}/issues/{{ISSUE_NUMBER}}\n",
				"path: /repos/{{OWNER}}/{{REPO_NAME}}/issues/{{ISSUE_NUMBER}}\n          - allow:\n              method: GET\n              path: /repos/{{OWNER}}/{{REPO_NAME}}/pulls\n")},
			func(c policydiff.Change) bool {
				return c.Kind == "rule" && c.Action == "add" && strings.Contains(c.After, "/pulls")
			},
			"low", "", nil},
		{"MCP server: a remote server and a tool of it", "tri",
			[]func(*testing.T){editFile("tri/agents/duplicate-detector.md", "tools: Bash(curl *)\n",
				"tools: Bash(curl *), mcp__github__get_issue\nmcpServers:\n  - github:\n      type: http\n      url: https://api.githubcopilot.com/mcp/\n")},
			func(c policydiff.Change) bool {
				return c.Kind == "endpoint" && c.Action == "add" && c.Host == "api.githubcopilot.com"
			}, "medium", "", nil},
		{"binary glob: an endpoint's binaries widened to a directory", "tri",
			[]func(*testing.T){editFile("tri/agents/duplicate-detector.md", "      allowed_ips: [\"{{HOST_IP}}\"]\n",
				"      allowed_ips: [\"{{HOST_IP}}\"]\n      binaries: [\"/usr/local/bin/*\"]\n")},
			func(c policydiff.Change) bool {
				return c.Kind == "binary" && c.Action == "add" && c.After == "/usr/local/bin/*"
			},
			"high", policydiff.CatRawBinary, nil},
		{"placeholder: a placeholder segment becomes a glob", "tri",
			[]func(*testing.T){editFile("tri/agents/duplicate-detector.md", "/issues/{{ISSUE_NUMBER}}\n", "/issues/*\n")},
			func(c policydiff.Change) bool { return c.Kind == "rule" && c.Action == "widen" },
			"high", policydiff.CatPathWidened, nil},
		{"tier: a write rule raises the tier", "tri",
			[]func(*testing.T){
				editFile("tri/agents/duplicate-detector.md", "  tier: network\n", "  tier: full\n"),
				editFile("tri/agents/duplicate-detector.md", "        - GET /repos/{{OWNER}}/{{REPO_NAME}}/issues\n",
					"        - GET /repos/{{OWNER}}/{{REPO_NAME}}/issues\n        - POST /repos/{{OWNER}}/{{REPO_NAME}}/issues/{{ISSUE_NUMBER}}/labels\n")},
			func(c policydiff.Change) bool { return c.Kind == "tier" && c.Action == "widen" },
			"critical", policydiff.CatTierFull, nil},
		{"renamed agent: its grants arrive under the new name", "tri",
			[]func(*testing.T){func(t *testing.T) {
				git("mv", "tri/agents/completeness-assessor.md", "tri/agents/completeness-checker.md")
				git("rm", "-q", "tri/agents/completeness-assessor.policytest.yaml")
				editFile("tri/agents/completeness-checker.md", "name: completeness-assessor\n", "name: completeness-checker\n")(t)
			}},
			func(c policydiff.Change) bool {
				return c.Kind == "endpoint" && c.Action == "add" && c.Host == "docs.github.com"
			}, "medium", "", nil},
		{"org override: the catalog widens a path of a profile the agent uses", "org",
			[]func(*testing.T){editFile("org/catalog/org.cue", `path: "/v1/status"`, `path: "/v1/**"`)},
			func(c policydiff.Change) bool { return c.Kind == "rule" && c.Action == "widen" },
			"high", policydiff.CatPathWidened, nil},
		{"org override: the catalog adds a host to a profile the agent uses", "org",
			[]func(*testing.T){editFile("org/catalog/org.cue", "\t}]\n}\n", "\t}, {\n\t\thost:     \"exfil.attacker.example\"\n\t\tport:     443\n\t\tprotocol: \"rest\"\n\t\taccess:   \"read-only\"\n\t}]\n}\n")},
			func(c policydiff.Change) bool {
				return c.Kind == "endpoint" && c.Action == "add" && c.Host == "exfil.attacker.example"
			}, "medium", "", nil},
		{".fullsend-version: an older fullsend release pinned", "tri",
			[]func(*testing.T){editFile(".fullsend-version", "v0.2.0\n", "v0.1.0\n")},
			func(c policydiff.Change) bool {
				return c.Kind == "fullsend_version" && c.Before == "v0.2.0" && c.After == "v0.1.0"
			},
			"high", "", nil},
		{"moved agent: one move row, nothing else", "tri",
			[]func(*testing.T){func(t *testing.T) {
				if err := os.MkdirAll(filepath.Join(repo, "tri", ".claude", "agents"), 0o755); err != nil {
					t.Fatal(err)
				}
				git("mv", "tri/agents/duplicate-detector.md", "tri/.claude/agents/duplicate-detector.md")
			}},
			func(c policydiff.Change) bool { return c.Kind == "agent" && c.Action == "move" }, "info", "",
			func(t *testing.T, r *policydiff.Result, c policydiff.Change) {
				if c.Before != "agents/duplicate-detector.md" || c.After != ".claude/agents/duplicate-detector.md" || len(r.Agents) != 1 ||
					r.Agents[0].Status != "moved" || len(r.Agents[0].Changes) != 1 {
					t.Errorf("want one move row of agents/ -> .claude/agents/, got %+v", r.Agents)
				}
			}},
		{"moved agent: a grant added in the moved file is blamed on its new line", "tri",
			[]func(*testing.T){func(t *testing.T) {
				if err := os.MkdirAll(filepath.Join(repo, "tri", ".claude", "agents"), 0o755); err != nil {
					t.Fatal(err)
				}
				git("mv", "tri/agents/duplicate-detector.md", "tri/.claude/agents/duplicate-detector.md")
				editFile("tri/.claude/agents/duplicate-detector.md", "        - GET /repos/{{OWNER}}/{{REPO_NAME}}/issues\n",
					"        - GET /repos/{{OWNER}}/{{REPO_NAME}}/issues\n        - GET /repos/{{OWNER}}/{{REPO_NAME}}/pulls\n")(t)
			}},
			func(c policydiff.Change) bool {
				return c.Kind == "rule" && c.Action == "add" && strings.Contains(c.After, "/pulls")
			}, "low", "",
			func(t *testing.T, r *policydiff.Result, c policydiff.Change) {
				s := c.From[0]
				head := strings.Split(git("show", "row:"+path.Join("tri", s.File)), "\n")
				if s.File != ".claude/agents/duplicate-detector.md" || s.Line < 1 || s.Line > len(head) || !strings.Contains(head[s.Line-1], "/pulls") {
					t.Errorf("blamed on %s:%d, want the new path's /pulls line", s.File, s.Line)
				}
				for _, a := range r.Agents {
					for _, c := range a.Changes {
						if c.Action == "move" && c.Kind != "agent" {
							t.Errorf("%s: a grant that only moved with the file is a change: %+v", a.Agent, c)
						}
					}
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			git("checkout", "-q", "-B", "row", "main")
			for _, e := range tc.edits {
				e(t)
			}
			git("add", "-A")
			git("commit", "-qm", tc.name)
			added := addedLines(t, git("diff", "--no-renames", "--no-color", "-U0", "main", "row"))
			t.Chdir(repo)
			args := append([]string{"git:main", "git:row", "--dir", tc.dir}, projectFlags[tc.dir]...)
			r := diffResult(t, args...)
			c := findChange(t, r, tc.match)
			if c.Risk != tc.risk || (tc.category != "" && !slices.Contains(c.Categories, tc.category)) {
				t.Errorf("%s %s: risk %s %v (%s), want %s %s", c.Action, c.Kind, c.Risk, c.Categories, c.Why, tc.risk, tc.category)
			}
			// The source the renderers and annotations show (the first with a
			// line outside the catalog).
			i := slices.IndexFunc(c.From, func(s bundle.Source) bool { return s.File != "catalog" && s.Line > 0 })
			if i < 0 {
				t.Fatalf("no source line: %+v", c)
			}
			if s := c.From[i]; !added[path.Join(tc.dir, s.File)][s.Line] {
				t.Errorf("blamed on %s:%d, not a line the change added (%v)", s.File, s.Line, added)
			}
			if tc.check != nil {
				tc.check(t, r, c)
			}
			_, err := execCLI(t, append([]string{"policy", "diff", "--fail-on", tc.risk}, args...)...)
			if exitCode(err) != 1 {
				t.Errorf("--fail-on %s: exit %d (%v)", tc.risk, exitCode(err), err)
			}
		})
	}
}
