package main

import (
	"encoding/json"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/fullsend-ai/agent-sandbox/cienv"
	"github.com/fullsend-ai/agent-sandbox/ciout"
)

// addOutputFlag registers the shared -o/--output flag (text or json).
func addOutputFlag(cmd *cobra.Command, output *string) {
	cmd.Flags().StringVarP(output, "output", "o", "text", "output format: text or json")
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]string{"text", "json"}, cobra.ShellCompDirectiveNoFileComp))
}

// writeJSON writes v as indented JSON followed by a newline.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// ciSafe renders text a command prints but does not control (paths and
// names from the project, committed file contents, error text quoting
// either) inert in the log of the CI it runs in, or in a terminal: each
// line goes through ciout.Escape, the project's one CI-safe escaper, so a
// name holding a line break, a CR, an ANSI escape or a leading "::" can
// start no workflow command, GitLab section or terminal sequence. The line
// breaks of s itself stay line breaks (ciout.Lines).
func ciSafe(s string) string {
	return ciout.Lines(cienv.Detect(os.Getenv).Kind(), s)
}
