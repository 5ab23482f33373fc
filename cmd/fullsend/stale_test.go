package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStaleRuleEveryCommand: after an agent's source is edited, every
// command that reads the compiled bundle applies the one rule: in CI it
// refuses (image build compiles nothing), elsewhere it warns with the
// same line and goes on (image build compiles again).
func TestStaleRuleEveryCommand(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "fullsend")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SOURCE_DATE_EPOCH", "0")
	commands := map[string]func(dir string) []string{
		"policy test":    func(dir string) []string { return []string{"policy", "test", dir} },
		"policy lint":    func(dir string) []string { return []string{"policy", "lint", filepath.Join(dir, "policies")} },
		"policy explain": func(dir string) []string { return []string{"policy", "explain", "triage", dir} },
		"image build": func(dir string) []string {
			return []string{"image", "build", "--base", "scratch", "--platform", "linux/amd64", "--binary", "linux/amd64=" + bin,
				dir, "--version", "v0.0.0", "--revision", "0123456789abcdef0123456789abcdef01234567", "--no-cache",
				"--oci-layout", filepath.Join(t.TempDir(), "layout")}
		},
	}
	for name, args := range commands {
		for _, ci := range []bool{true, false} {
			t.Run(name+map[bool]string{true: " in CI", false: " locally"}[ci], func(t *testing.T) {
				dir := copyTree(t, filepath.Join("..", "..", "testdata", "production"))
				agent := filepath.Join(dir, "agents", "triage.md")
				data, err := os.ReadFile(agent)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(agent, append(data, "\nOne more line of instructions.\n"...), 0o644); err != nil {
					t.Fatal(err)
				}
				t.Setenv("GITLAB_CI", "")
				t.Setenv("GITHUB_ACTIONS", map[bool]string{true: "true", false: ""}[ci])
				stdout, stderr, err := runFullsend(t, args(dir)...)
				switch {
				case ci && (err == nil || !strings.Contains(err.Error(), "compiled policies are stale") || !strings.Contains(err.Error(), "agents/triage.md")):
					t.Errorf("in CI: %v, want the stale bundle refused naming agents/triage.md\n%s%s", err, stdout, stderr)
				case !ci && err != nil:
					t.Errorf("locally: %v\n%s%s", err, stdout, stderr)
				case !ci && !strings.Contains(stderr, "warning: compiled policies are stale"):
					t.Errorf("locally: no warning on stderr:\n%s", stderr)
				}
				if ci && name == "image build" {
					if out, err := execCLI(t, "policy", "compile", "--check", dir); err == nil {
						t.Errorf("image build compiled in CI:\n%s", out)
					}
				}
			})
		}
	}
}
