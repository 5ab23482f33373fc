package compile

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fullsend-ai/agent-sandbox/agentdef"
)

// TestOutputWrites: a write rule scoped to a declared output is a sandbox
// grant held at the network tier (Landlock read_write on that directory
// only, the runtime pre-approving writes there in dontAsk mode, the forge
// proxy read-only); any other write still needs the full tier, and a
// network cap says how to scope it. It raised every such agent to full
// before (issue 30, section 1).
func TestOutputWrites(t *testing.T) {
	const outs = "  outputs: [/sandbox/out]\n"
	for _, tc := range []struct {
		name, tools, sandbox string
		tier                 string
		flags                string // the claude runtime flags, joined by spaces
		readWrite            string // a path the policy makes writable
		warn, err            string
	}{
		{name: "absolute glob", tools: "Bash(gh), Write(//sandbox/out/**)", sandbox: outs + "  tier: network\n",
			tier: "network", flags: "--permission-mode dontAsk --allowedTools Bash(gh),Write(//sandbox/out/**)", readWrite: "/sandbox/out"},
		{name: "narrower directory and glob", tools: "Read, Edit(//sandbox/out/notes/*.md)", sandbox: outs,
			tier: "network", flags: "--permission-mode dontAsk --allowedTools Read,Edit(//sandbox/out/notes/*.md)", readWrite: "/sandbox/out/notes"},
		{name: "one file", tools: "Write(//sandbox/out/NOTES.md)", sandbox: outs,
			tier: "network", flags: "--permission-mode dontAsk --allowedTools Write(//sandbox/out/NOTES.md)", readWrite: "/sandbox/out"},
		{name: "tmp output", tools: "Write(//tmp/report/**)", sandbox: "  outputs: [/tmp/report]\n",
			tier: "network", flags: "--permission-mode dontAsk --allowedTools Write(//tmp/report/**)", readWrite: "/tmp/report"},
		{name: "project-relative spelling of an output", tools: "Write(/sandbox/out/**)", sandbox: outs,
			tier: "network", flags: "--permission-mode dontAsk --allowedTools Write(//sandbox/out/**)", readWrite: "/sandbox/out",
			warn: "Claude Code reads a leading / from the project root"},
		{name: "unscoped write", tools: "Write", sandbox: outs,
			tier: "full", flags: "--permission-mode acceptEdits --allowedTools Write"},
		{name: "not an output", tools: "Write(//sandbox/outside/**)", sandbox: outs,
			tier: "full", flags: "--permission-mode acceptEdits --allowedTools Write(//sandbox/outside/**)"},
		{name: "glob past the directory", tools: "Write(//sandbox/out*)", sandbox: outs, tier: "full"},
		{name: "no output declared", tools: "Write(//sandbox/out/**)", tier: "full"},
		{name: "capped unscoped write", tools: "Write", sandbox: outs + "  tier: network\n",
			err: "tool Write (not scoped to a declared output: Write(//sandbox/out/**) would be) needs tier full"},
		{name: "shell write left out", tools: "Bash(gh), Bash(tee:*), Write(//sandbox/out/**)", sandbox: outs,
			tier: "network", flags: "--permission-mode dontAsk --allowedTools Bash(gh),Write(//sandbox/out/**)", readWrite: "/sandbox/out",
			warn: "the runtime will not pre-approve Bash(tee:*)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sb := ""
			if tc.sandbox != "" {
				sb = "sandbox:\n" + tc.sandbox
			}
			dir := writeProject(t, map[string]string{
				"agents/notes.md": "---\nname: notes\ndescription: d\ntools: " + tc.tools + "\n" + sb + "---\nb\n",
			})
			out, err := CompileDir(context.Background(), dir, ProjectOptions{})
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("want error %q, got %v", tc.err, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			c := out.Agents["notes"]
			if string(c.Tier) != tc.tier {
				t.Fatalf("tier %s, want %s (why: %v)", c.Tier, tc.tier, c.TierWhy)
			}
			flags, _ := runtimeFlags(c)
			if got := strings.Join(flags["claude"], " "); tc.flags != "" && got != tc.flags {
				t.Errorf("claude flags %q, want %q", got, tc.flags)
			}
			fs := c.Policy.FilesystemPolicy
			if tc.readWrite != "" && (!slices.Contains(fs.ReadWrite, tc.readWrite) || fs.IncludeWorkdir) {
				t.Errorf("read_write %v (include_workdir %v), want %s and a read-only workdir", fs.ReadWrite, fs.IncludeWorkdir, tc.readWrite)
			}
			if tc.warn != "" && !slices.ContainsFunc(out.Warnings, func(d agentdef.Diagnostic) bool { return strings.Contains(d.Message, tc.warn) }) {
				t.Errorf("no warning %q: %v", tc.warn, out.Warnings)
			}
		})
	}
}

// TestOutputWritesOpenCode: OpenCode's network-tier permission map denies
// edit for the whole tier, and its edit patterns are relative to a
// workspace the runner places at run time, so an OpenCode agent cannot
// write an output below the full tier: a network cap refuses it at the
// rule's line, naming the runtime.
func TestOutputWritesOpenCode(t *testing.T) {
	dir := writeProject(t, map[string]string{
		".opencode/agent/notes.md": "---\ndescription: d\npermission:\n  \"*\": deny\n  read: allow\n  edit:\n    \"//sandbox/out/**\": allow\nsandbox:\n  tier: network\n  outputs: [/sandbox/out]\n---\nb\n",
	})
	_, err := CompileDir(context.Background(), dir, ProjectOptions{})
	var ds agentdef.Diagnostics
	if !errors.As(err, &ds) {
		t.Fatalf("want a compile error, got %v", err)
	}
	if !slices.ContainsFunc(ds, func(d agentdef.Diagnostic) bool {
		return strings.Contains(d.Message, "runtime opencode cannot pre-approve writes") && d.Pos.File == ".opencode/agent/notes.md" && d.Pos.Line == 7
	}) {
		t.Errorf("no error naming the runtime at the edit rule: %v", ds)
	}
}

// TestExplainOutputWrites: explain says why the tier was chosen, what the
// runtime pre-approves and leaves out (a shell write, a typo'd command),
// and what writing an output needs and does not need (golden).
func TestExplainOutputWrites(t *testing.T) {
	dir := writeProject(t, map[string]string{
		"agents/notes.md": "---\nname: notes\ndescription: d\ntools: Bash(gh pr list:*), Bash(culr:*), Bash(tee:*), Read, Write(//sandbox/out/**)\n" +
			"sandbox:\n  tier: network\n  outputs: [/sandbox/out]\n---\nb\n",
	})
	out, err := CompileDir(context.Background(), dir, ProjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	text := Explain(out.Agents["notes"]).String()
	head, _, _ := strings.Cut(text, "\nnetwork\n")
	golden := filepath.Join("testdata", "explain", "output-writes.txt")
	if *update {
		if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, []byte(head), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test ./compile -run TestExplainOutputWrites -update)", err)
	}
	if head != string(want) {
		t.Errorf("explain head differs from %s:\n%s", golden, head)
	}
}
