package main

import (
	"encoding/json"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/fullsend-ai/agent-sandbox/cienv"
	"github.com/fullsend-ai/agent-sandbox/ciout"
)

// outputFormat is the value of the shared -o/--output flag: text or json.
// Set refuses any other value, so a bad -o is a usage error (exit 2) when
// the flags are parsed and no command checks it again.
type outputFormat string

const (
	outputText outputFormat = "text"
	outputJSON outputFormat = "json"
)

func (o *outputFormat) String() string { return string(*o) }

// Set accepts text or json.
func (o *outputFormat) Set(s string) error {
	switch f := outputFormat(s); f {
	case outputText, outputJSON:
		*o = f
		return nil
	}
	return usageErrorf("unknown output format %q (want text or json)", s)
}

// Type names the value in --help.
func (o *outputFormat) Type() string { return "format" }

// addOutputFlag registers the shared -o/--output flag (text, the default,
// or json).
func addOutputFlag(cmd *cobra.Command, output *outputFormat) {
	*output = outputText
	cmd.Flags().VarP(output, "output", "o", "output format: text or json")
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]string{string(outputText), string(outputJSON)}, cobra.ShellCompDirectiveNoFileComp))
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
