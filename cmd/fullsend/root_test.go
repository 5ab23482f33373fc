package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestEveryCommandHasExamples walks the command tree: every command a user
// can run shows examples in --help, and has a one-line summary.
func TestEveryCommandHasExamples(t *testing.T) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Hidden || c.Name() == "help" || strings.HasPrefix(c.CommandPath(), "fullsend completion") {
			return
		}
		t.Run(c.CommandPath(), func(t *testing.T) {
			if c.Short == "" {
				t.Error("no Short description")
			}
			if c.Runnable() && strings.TrimSpace(c.Example) == "" {
				t.Error("no Example in --help")
			}
		})
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRootCmd())
}

func TestVersionOutput(t *testing.T) {
	tests := []struct {
		args    []string
		want    string
		wantErr bool
	}{
		{[]string{"version"}, "devel (module github.com/fullsend-ai/agent-sandbox, go", false},
		{[]string{"--version"}, "fullsend devel (module github.com/fullsend-ai/agent-sandbox, go", false},
		{[]string{"version", "-o", "json"}, "\"go_version\": \"go", false},
		{[]string{"version", "-o", "json"}, "\"version\": \"devel\"", false},
		{[]string{"version", "-o", "yaml"}, "", true},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			root := newRootCmd()
			var out bytes.Buffer
			root.SetOut(&out)
			root.SetErr(&out)
			root.SetArgs(tt.args)
			err := root.Execute()
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v", err)
			}
			if tt.wantErr {
				if exitCode(err) != 2 {
					t.Errorf("exit code %d, want 2 for a usage error", exitCode(err))
				}
				return
			}
			if !strings.Contains(out.String(), tt.want) {
				t.Errorf("output %q does not contain %q", out.String(), tt.want)
			}
		})
	}
}

// TestUsageErrorsExit2: however a command is called wrongly (an unknown
// flag, a bad flag value, a wrong number of arguments, an unknown
// subcommand), the exit status is 2; it used to be 1 when cobra caught it.
func TestUsageErrorsExit2(t *testing.T) {
	for _, args := range [][]string{
		{"policy", "compile", "--no-such-flag"},
		{"policy", "compile", "--strict=maybe"},
		{"policy", "explain"},
		{"templates", "write"},
		{"policy", "compil"},
		{"imag"},
		{"version", "extra"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			_, _, err := runFullsend(t, args...)
			if err == nil || exitCode(err) != 2 {
				t.Errorf("exit %d (%v), want 2", exitCode(err), err)
			}
		})
	}
	_, _, err := runFullsend(t, "policy", "compil")
	if err == nil || !strings.Contains(err.Error(), `did you mean "compile"?`) {
		t.Errorf("unknown subcommand: %v, want a did-you-mean", err)
	}
}

// TestDidYouMean: a typo'd command (not only a prefix of one) or flag gets
// the closest name, as cobra offers, and still exits 2.
func TestDidYouMean(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"polcy", "compile"}, `did you mean "policy"?`},
		{[]string{"policy", "explian"}, `did you mean "explain"?`},
		{[]string{"image", "build", "--oci-layot", "x", "."}, "did you mean --oci-layout?"},
		{[]string{"policy", "compile", "--strcit"}, "did you mean --strict?"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			_, _, err := runFullsend(t, tc.args...)
			if err == nil || exitCode(err) != 2 || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v (exit %d), want exit 2 and %q", err, exitCode(err), tc.want)
			}
		})
	}
}

// TestProjectDirPositional: the project directory is a positional DIR in
// every command that takes one; the old --dir (and serve agents'
// --manifest, verify's --layout) still work as deprecated aliases, and two
// different directories are a usage error.
func TestProjectDirPositional(t *testing.T) {
	dir := copyTree(t, filepath.Join("..", "..", "testdata", "production"))
	for _, args := range [][]string{
		{"policy", "explain", "triage", dir},
		{"policy", "explain", "triage", "--dir", dir},
	} {
		if out, err := execCLI(t, args...); err != nil || !strings.Contains(out, "agent triage") {
			t.Errorf("%v: %v\n%s", args, err, out)
		}
	}
	for _, args := range [][]string{
		{"policy", "explain", "triage", dir, "--dir", dir + "x"},
		{"image", "build", dir, "--dir", dir + "x", "--base", "scratch", "--oci-layout", t.TempDir()},
		{"run", "triage", dir, "--dir", dir + "x"},
		{"serve", "agents", dir, "--manifest", dir + "x"},
	} {
		if _, _, err := runFullsend(t, args...); exitCode(err) != 2 || !strings.Contains(err.Error(), "directory given twice") {
			t.Errorf("%v: exit %d (%v), want a usage error", args, exitCode(err), err)
		}
	}
	for _, c := range []struct{ args []string }{
		{[]string{"verify", "--help"}},
	} {
		out, _, _ := runFullsend(t, c.args...)
		if !strings.Contains(out, "--oci-layout") || strings.Contains(out, "--layout ") {
			t.Errorf("verify --help: want --oci-layout and no --layout:\n%s", out)
		}
	}
}
