package compile

import (
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fullsend-ai/agent-sandbox/openshell"
	"github.com/fullsend-ai/agent-sandbox/placeholder"
	"github.com/fullsend-ai/agent-sandbox/policycue"
)

// exampleSystems are the bundled agent systems, compiled into their own
// policies/ directories, which are the golden files.
var update = flag.Bool("update", false, "rewrite golden files")

var exampleSystems = []string{"triage", "production", "opencode", "fullsend-agents", "fullsend-providers"}

// compileExample compiles the example system (exampleDir) and returns the
// output and the directory of its golden files (goldenDir).
func compileExample(t *testing.T, system string) (*Output, string) {
	t.Helper()
	out, err := CompileDir(context.Background(), exampleDir(t, system), ProjectOptions{})
	if err != nil {
		t.Fatalf("compiling %s: %v", system, err)
	}
	return out, goldenDir(t, system)
}

func TestGoldenPolicies(t *testing.T) {
	for _, system := range exampleSystems {
		t.Run(system, func(t *testing.T) {
			out, dir := compileExample(t, system)
			if *update {
				writeGolden(t, system, out)
				return
			}
			diffs, err := Diff(dir, out)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range diffs {
				t.Errorf("%s/%s %s (run go test ./compile -update):\n%s", dir, d.File, d.Change, d.Diff)
			}
		})
	}
}

// nonBaseline yields the network policies an agent's tools and declarations
// produced (not the runtime's model API).
func nonBaseline(c *Compiled) map[string]openshell.NetworkPolicy {
	out := map[string]openshell.NetworkPolicy{}
	base := map[string]bool{}
	for _, k := range c.Baseline {
		base[k] = true
	}
	for k, np := range c.Policy.NetworkPolicies {
		if !base[k] {
			out[k] = np
		}
	}
	return out
}

func TestTriageSystemSemantics(t *testing.T) {
	out, _ := compileExample(t, "triage")
	subagents := []string{"duplicate-detector", "completeness-assessor", "reproducibility-verifier"}
	for _, name := range subagents {
		c := out.Agents[name]
		if c == nil {
			t.Fatalf("agent %s missing", name)
		}
		if c.Tier == policycue.TierFull {
			t.Errorf("%s: tier full, want read-only or network", name)
		}
		for key, np := range nonBaseline(c) {
			for _, ep := range np.Endpoints {
				if ep.Access != "" && ep.Access != openshell.AccessReadOnly {
					t.Errorf("%s: %s access %s", name, key, ep.Access)
				}
				for _, r := range ep.Rules {
					if r.Allow.Method != "GET" {
						t.Errorf("%s: %s allows %s %s; subagents may only GET", name, key, r.Allow.Method, r.Allow.Path)
					}
				}
			}
		}
	}
	web := nonBaseline(out.Agents["completeness-assessor"])
	external := 0
	for _, np := range web {
		for _, ep := range np.Endpoints {
			if strings.HasPrefix(ep.Host, "host.docker.internal") {
				continue
			}
			external++
			if strings.Contains(ep.Host, "*") {
				t.Errorf("completeness-assessor reaches wildcard host %s", ep.Host)
			}
			if ep.Access != openshell.AccessReadOnly {
				t.Errorf("completeness-assessor web access to %s is %q, want read-only", ep.Host, ep.Access)
			}
		}
	}
	if external == 0 {
		t.Error("completeness-assessor has no external web access")
	}
	if n := len(nonBaseline(out.Agents["reproducibility-verifier"])); n != 0 {
		t.Errorf("reproducibility-verifier has %d network policies beyond the model API", n)
	}

	orch := out.Agents["triage"]
	if orch.Tier != policycue.TierFull {
		t.Errorf("triage tier = %s", orch.Tier)
	}
	if strings.Join(orch.Spawns, ",") != strings.Join([]string{"completeness-assessor", "duplicate-detector", "reproducibility-verifier"}, ",") {
		t.Errorf("triage spawns = %v", orch.Spawns)
	}
	posts := map[string]bool{}
	for _, np := range nonBaseline(orch) {
		for _, ep := range np.Endpoints {
			for _, r := range ep.Rules {
				if r.Allow.Method != "GET" && ep.Port == 8081 {
					posts[r.Allow.Method+" "+r.Allow.Path] = true
				}
				if len(r.From) == 0 {
					t.Errorf("triage rule %s %s has no provenance", r.Allow.Method, r.Allow.Path)
				}
			}
		}
	}
	want := map[string]bool{
		"POST /repos/{{OWNER}}/{{REPO_NAME}}/issues/{{ISSUE_NUMBER}}/comments": true,
		"POST /repos/{{OWNER}}/{{REPO_NAME}}/issues/{{ISSUE_NUMBER}}/labels":   true,
	}
	if len(posts) != len(want) {
		t.Errorf("triage writes to the forge proxy = %v, want exactly %v", posts, want)
	}
	for p := range want {
		if !posts[p] {
			t.Errorf("triage cannot %s", p)
		}
	}
}

func TestProductionSystem(t *testing.T) {
	out, _ := compileExample(t, "production")
	c := out.Agents["triage"]
	if c == nil {
		t.Fatal("production triage agent missing")
	}
	np, ok := c.Policy.NetworkPolicies["api_github_com_443"]
	if !ok {
		t.Fatalf("no GitHub API policy: %v", c.Policy.PolicyKeys())
	}
	gh := false
	for _, b := range np.Binaries {
		gh = gh || b.Path == "/usr/bin/gh"
	}
	if !gh {
		t.Errorf("gh may not reach the GitHub API: %+v", np.Binaries)
	}
	if got := out.Manifest.Agents["triage"].Skills; len(got) != 1 || got[0] != "issue-labels" {
		t.Errorf("skills = %v", got)
	}
}

// TestExamplesPerVersion compiles every example for each supported
// OpenShell version: the output must pass that version's validator (the
// ValidateCheck inside CompileDir fails the compile otherwise).
func TestExamplesPerVersion(t *testing.T) {
	for _, v := range openshell.SupportedVersions() {
		for _, system := range exampleSystems {
			t.Run(v+"/"+system, func(t *testing.T) {
				out, err := CompileDir(context.Background(), exampleDir(t, system), ProjectOptions{OpenShellVersion: v})
				if err != nil {
					t.Fatal(err)
				}
				if out.Manifest.OpenShellVersion != v {
					t.Errorf("manifest version = %s", out.Manifest.OpenShellVersion)
				}
			})
		}
	}
}

func TestCompileDirOptionErrors(t *testing.T) {
	dir := filepath.Join("..", "testdata", "triage")
	tests := []struct {
		name string
		opts ProjectOptions
		want string
	}{
		{"glob owner", ProjectOptions{Set: []string{"OWNER=*"}}, "invalid placeholder value for {{OWNER}}"},
		{"path owner", ProjectOptions{Set: []string{"OWNER=../etc"}}, "invalid placeholder value for {{OWNER}}"},
		{"unknown placeholder", ProjectOptions{Set: []string{"BRANCH=main"}}, "unknown placeholder {{BRANCH}}"},
		{"not an assignment", ProjectOptions{Set: []string{"OWNER"}}, "want KEY=VALUE"},
		{"issue zero", ProjectOptions{Set: []string{"ISSUE_NUMBER=0"}}, "positive"},
		// The CLI names its flags (--openshell-version, --catalog, --set) in
		// their place: cmd/fullsend TestPolicyCompileFlagErrors.
		{"unsupported version", ProjectOptions{OpenShellVersion: "v0.0.1"}, "OpenShellVersion: "},
		{"bad version", ProjectOptions{OpenShellVersion: "latest"}, "OpenShellVersion: "},
		{"missing catalog", ProjectOptions{CatalogDir: filepath.Join(t.TempDir(), "nope")}, "CatalogDir: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := CompileDir(context.Background(), dir, tt.opts)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to mention %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "--") {
				t.Errorf("library error names a flag: %v", err)
			}
			var oe *OptionError
			var ae *placeholder.AssignmentError
			if !errors.As(err, &oe) && !errors.As(err, &ae) {
				t.Errorf("err = %T, want an *OptionError or a *placeholder.AssignmentError", err)
			}
		})
	}
}

func TestWriteAndCheck(t *testing.T) {
	out, _ := compileExample(t, "production")
	dir := t.TempDir()
	if err := Write(dir, out); err != nil {
		t.Fatal(err)
	}
	if diffs, err := Diff(dir, out); err != nil || len(diffs) != 0 {
		t.Fatalf("fresh output differs: %v %v", diffs, err)
	}
	// Tamper with a policy and leave a stale generated file behind.
	if err := os.WriteFile(filepath.Join(dir, "triage.yaml"), []byte(generatedMarker+"\nversion: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "gone.yaml"), []byte(generatedMarker+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "mine.yaml"), []byte("version: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	diffs, err := Diff(dir, out)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, d := range diffs {
		got[d.File] = d.Change
	}
	want := map[string]string{"triage.yaml": "modified", "gone.yaml": "removed"}
	if len(got) != len(want) || got["triage.yaml"] != "modified" || got["gone.yaml"] != "removed" {
		t.Fatalf("diffs = %v, want %v", got, want)
	}
	if err := Write(dir, out); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "gone.yaml")); !os.IsNotExist(err) {
		t.Error("stale generated file was not removed")
	}
	if _, err := os.Stat(filepath.Join(dir, "mine.yaml")); err != nil {
		t.Error("a hand-written file was removed")
	}
	if diffs, err := Diff(dir, out); err != nil || len(diffs) != 0 {
		t.Fatalf("rewritten output differs: %v %v", diffs, err)
	}
}

// TestWriteKeepsUnchangedFiles: a recompile that changes nothing leaves
// every output file as it was (same inode), and rewrites only what differs.
func TestWriteKeepsUnchangedFiles(t *testing.T) {
	out, _ := compileExample(t, "production")
	dir := t.TempDir()
	if err := Write(dir, out); err != nil {
		t.Fatal(err)
	}
	before := map[string]os.FileInfo{}
	for name := range out.Files {
		fi, err := os.Lstat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		before[name] = fi
	}
	if err := os.WriteFile(filepath.Join(dir, "triage.yaml"), []byte(generatedMarker+"\nversion: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tampered, _ := os.Lstat(filepath.Join(dir, "triage.yaml"))
	if err := Write(dir, out); err != nil {
		t.Fatal(err)
	}
	for name, fi := range before {
		after, err := os.Lstat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case name == "triage.yaml" && os.SameFile(tampered, after):
			t.Errorf("%s: the tampered file was kept", name)
		case name != "triage.yaml" && !os.SameFile(fi, after):
			t.Errorf("%s: an unchanged file was rewritten", name)
		}
	}
	if diffs, err := Diff(dir, out); err != nil || len(diffs) != 0 {
		t.Fatalf("output differs after the rewrite: %v %v", diffs, err)
	}
}
