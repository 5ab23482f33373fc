package compile

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/fullsend-ai/agent-sandbox/agentdef"
)

// writeProject writes files under a temporary project directory.
func writeProject(t *testing.T, files map[string]string) string {
	t.Helper()
	fsys := fstest.MapFS{}
	for name, body := range files {
		fsys[name] = &fstest.MapFile{Data: []byte(body)}
	}
	return writeMapFS(t, fsys)
}

// selectProject: a lead agent spawning a worker that uses a skill (the
// shape of fullsend-ai/agents' triage family), an unrelated agent with an
// unknown key (a warning), and two broken files: one not YAML, one whose
// tools list does not parse.
var selectProject = map[string]string{
	"agents/lead.md":        "---\nname: lead\ndescription: d\ntools: Read, Agent(worker)\n---\nb\n",
	"agents/worker.md":      "---\nname: worker\ndescription: d\ntools: Read, Grep\nskills: [notes]\n---\nb\n",
	"skills/notes/SKILL.md": "---\nname: notes\ndescription: take notes\n---\nb\n",
	"agents/other.md":       "---\nname: other\ndescription: d\ntools: Read\ncategory: misc\n---\nb\n",
	"agents/bad-yaml.md":    "---\nname: bad-yaml\ndescription: a: b\ntools: [Read]\n---\nb\n",
	"agents/bad-tool.md":    "---\nname: bad-tool\ndescription: d\ntools: Read, Bash(gh\n---\nb\n",
}

// TestCompileReportsEveryFile: without --agent, every problem of every file
// comes out of one run as a *Failure that keeps the warnings; errors.As to
// Diagnostics still yields the errors only.
func TestCompileReportsEveryFile(t *testing.T) {
	dir := writeProject(t, selectProject)
	_, err := CompileDir(context.Background(), dir, ProjectOptions{})
	var f *Failure
	if !errors.As(err, &f) || !errors.Is(err, ErrCompile) {
		t.Fatalf("err = %v, want a *Failure", err)
	}
	files := map[string]agentdef.Severity{}
	for _, d := range f.Diagnostics {
		if files[d.Pos.File] != agentdef.SeverityError {
			files[d.Pos.File] = d.Severity
		}
	}
	for file, sev := range map[string]agentdef.Severity{"agents/bad-yaml.md": agentdef.SeverityError, "agents/bad-tool.md": agentdef.SeverityError, "agents/other.md": agentdef.SeverityWarning} {
		if files[file] != sev {
			t.Errorf("%s: %q, want a %s (all: %v)", file, files[file], sev, f.Diagnostics)
		}
	}
	if strings.Join(f.Agents, ",") != "lead,other,worker" {
		t.Errorf("compiled despite the failure: %v, want lead,other,worker", f.Agents)
	}
	var ds agentdef.Diagnostics
	if !errors.As(err, &ds) || len(ds.Errors()) != len(ds) {
		t.Errorf("errors.As Diagnostics: %v, want errors only", ds)
	}
}

// TestCompileSelectedAgents: --agent lead compiles lead, the worker it
// spawns and the worker's skill; the broken files elsewhere do not count.
func TestCompileSelectedAgents(t *testing.T) {
	dir := writeProject(t, selectProject)
	out, err := CompileDir(context.Background(), dir, ProjectOptions{Agents: []string{"lead"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(out.AgentNames(), ","); got != "lead,worker" {
		t.Errorf("compiled %s, want lead,worker", got)
	}
	for _, w := range out.Warnings {
		if w.Pos.File == "agents/other.md" {
			t.Errorf("warning of an unselected file: %v", w)
		}
	}
	// Selecting a broken agent reports its own problem only.
	_, err = CompileDir(context.Background(), dir, ProjectOptions{Agents: []string{"bad-yaml"}})
	var f *Failure
	if !errors.As(err, &f) {
		t.Fatalf("err = %v, want a *Failure", err)
	}
	for _, d := range f.Diagnostics {
		if d.Pos.File != "agents/bad-yaml.md" {
			t.Errorf("diagnostic of an unselected file: %v", d)
		}
	}
	// An unknown name is an option error with did-you-mean.
	_, err = CompileDir(context.Background(), dir, ProjectOptions{Agents: []string{"worke"}})
	var oe *OptionError
	if !errors.As(err, &oe) || oe.Option != "Agents" || !strings.Contains(err.Error(), `did you mean "worker"`) {
		t.Errorf("unknown agent: %v", err)
	}
}

// TestExplainTierDecision: the explanation names the line that decided the
// tier, and says why a read-only agent is read-only.
func TestExplainTierDecision(t *testing.T) {
	dir := writeProject(t, map[string]string{
		"agents/web.md":  "---\nname: web\ndescription: d\ntools:\n  - Read\n  - WebFetch(domain:docs.example.com)\n---\nb\n",
		"agents/read.md": "---\nname: read\ndescription: d\ntools: Read, Grep\n---\nb\n",
	})
	out, err := CompileDir(context.Background(), dir, ProjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	web := Explain(out.Agents["web"])
	if web.Tier != "network" || web.TierDecidedBy.File != "agents/web.md" || web.TierDecidedBy.Line != 6 || !strings.Contains(web.TierReason, "WebFetch") {
		t.Errorf("web: tier %s decided by %v: %s", web.Tier, web.TierDecidedBy, web.TierReason)
	}
	if first, _, _ := strings.Cut(web.String(), "\n"); !strings.HasPrefix(first, "tier network, decided by agents/web.md:6:") {
		t.Errorf("first line %q", first)
	}
	read := Explain(out.Agents["read"])
	if read.Tier != "read-only" || read.TierDecidedBy.Line != 4 || !strings.Contains(read.TierReason, "read-only") {
		t.Errorf("read: tier %s decided by %v: %s", read.Tier, read.TierDecidedBy, read.TierReason)
	}
}
