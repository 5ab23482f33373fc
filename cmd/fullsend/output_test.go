package main

import (
	"errors"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestOutputFormatSet: text and json are accepted, anything else is a usage
// error naming the value.
func TestOutputFormatSet(t *testing.T) {
	for _, tt := range []struct {
		in      string
		want    outputFormat
		wantErr bool
	}{
		{"text", outputText, false},
		{"json", outputJSON, false},
		{"yaml", outputText, true},
		{"JSON", outputText, true},
		{"", outputText, true},
	} {
		t.Run(tt.in, func(t *testing.T) {
			o := outputText
			err := o.Set(tt.in)
			var ue usageError
			if tt.wantErr != (err != nil) || (err != nil && (!errors.As(err, &ue) || !strings.Contains(err.Error(), `"`+tt.in+`"`))) {
				t.Fatalf("Set(%q) = %v", tt.in, err)
			}
			if o != tt.want {
				t.Errorf("Set(%q) left %q, want %q", tt.in, o, tt.want)
			}
		})
	}
}

// TestOutputFlagIsOneEnum: every command's -o is the outputFormat value
// (so no command checks it by hand), except the commands whose formats are
// their own (lint's report formats, schema's cue); a bad -o exits 2 before
// the command runs.
func TestOutputFlagIsOneEnum(t *testing.T) {
	own := map[string]bool{"fullsend policy lint": true, "fullsend policy diff": true, "fullsend policy suggest": true, "fullsend policy schema input": true, "fullsend policy schema openshell": true}
	var n int
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		if f := c.Flags().Lookup("output"); f != nil {
			if _, ok := f.Value.(*outputFormat); !ok && !own[c.CommandPath()] {
				t.Errorf("%s: -o is a %s, not the shared outputFormat", c.CommandPath(), f.Value.Type())
			}
			if !own[c.CommandPath()] {
				n++
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRootCmd())
	if n < 12 {
		t.Errorf("only %d commands have the shared -o", n)
	}
	for _, args := range [][]string{{"version", "-o", "yaml"}, {"doctor", "-o", "yaml"}, {"templates", "list", "-o", "xml"}} {
		if _, code := runCLI(t, "", args...); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
}
