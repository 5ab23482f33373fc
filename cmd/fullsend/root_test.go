package main

import (
	"bytes"
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
		{[]string{"version"}, "devel\n", false},
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
