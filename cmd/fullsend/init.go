package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fullsend-ai/agent-sandbox/bundle"
	"github.com/fullsend-ai/agent-sandbox/compile"
	"github.com/fullsend-ai/agent-sandbox/internal/version"
	"github.com/fullsend-ai/agent-sandbox/scaffold"
)

// initReport is the -o json output of init.
type initReport struct {
	*scaffold.Result
	Agents []string `json:"agents"`
	Next   []string `json:"next"`
}

func newInitCmd() *cobra.Command {
	var (
		force, key bool
		output     outputFormat
	)
	cmd := &cobra.Command{
		Use:   "init [DIR]",
		Short: "Scaffold an agents repository: example agent and skill, policy tests, CI templates; then compile it",
		Long: `Init writes a working agents repository into DIR (default .): an example
agent (agents/summarizer.md) and skill (skills/issue-summary/SKILL.md) with
sandbox: blocks, the policy tests they pass (agents/*.policytest.yaml), the
GitHub Actions (.github/) and GitLab CI (ci/) templates, signing instructions
(SIGNING.md: keyless by default, a cosign key pair with --key), a README and a
.gitignore. It then compiles the policies (policies/) and prints the next
commands. A release build also writes .fullsend-version (its own version):
the pull-request policy-diff templates install the fullsend the base branch
pins there, and skip without it; a devel build writes none and says so.

Init never writes a private key: with --key, SIGNING.md says how to create an
encrypted one (fullsend image keygen, password from COSIGN_PASSWORD). It never
replaces an existing file without --force; the files it kept are listed as
skipped, so running it again is harmless. A kept .gitignore that lacks
the run directories (fullsend-out/, fullsend-diag/) is completed when an
earlier init wrote it, else a note names the patterns to add; a kept
SIGNING.md that describes other signing is noted too.`,
		Example: `  fullsend init my-agents
  fullsend init --key .
  fullsend init -o json my-agents`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := dirArg(args)
			signing := scaffold.SigningKeyless
			if key {
				signing = scaffold.SigningKey
			}
			return runInit(cmd.Context(), cmd.OutOrStdout(), scaffold.Options{Dir: dir, Force: force, Signing: signing, Version: version.String()}, output)
		},
	}
	cmd.Flags().BoolVar(&force, "force", false, "replace files that already exist")
	cmd.Flags().BoolVar(&key, "key", false, "sign with a cosign key pair (SIGNING.md says how to create it) instead of keyless")
	addOutputFlag(cmd, &output)
	return cmd
}

// runInit is scaffold.Write -> compile -> print.
func runInit(ctx context.Context, w io.Writer, o scaffold.Options, output outputFormat) error {
	res, err := scaffold.Write(o)
	if err != nil {
		return err
	}
	// An existing repository keeps the OpenShell version it compiled for,
	// and current policies are left byte-for-byte alone.
	policies := filepath.Join(o.Dir, "policies")
	po := compile.ProjectOptions{Lint: lintStart(nil)}
	if m, _, err := bundle.ReadManifest(os.DirFS(policies)); err == nil {
		po.OpenShellVersion = m.OpenShellVersion
	}
	if po.CatalogDir, err = recordedCatalog(o.Dir); err != nil {
		return err
	}
	out, err := compile.CompileDir(ctx, o.Dir, po)
	if err != nil {
		return fmt.Errorf("compiling %s: %w", o.Dir, flagError(err))
	}
	if diffs, err := compile.Diff(policies, out); err != nil || len(diffs) > 0 {
		if err := compile.Write(policies, out); err != nil {
			return err
		}
	}
	rep := initReport{Result: res, Agents: out.AgentNames(), Next: initNext(o.Dir)}
	if output == outputJSON {
		return writeJSON(w, rep)
	}
	writeInitReport(w, o.Dir, rep)
	return nil
}

// writeInitReport writes what init wrote, kept and compiled in dir, and
// the commands to run next.
func writeInitReport(w io.Writer, dir string, rep initReport) {
	res := rep.Result
	for _, p := range res.Written {
		fmt.Fprintf(w, "wrote   %s\n", filepath.Join(dir, p))
	}
	for _, p := range res.Skipped {
		fmt.Fprintf(w, "skipped %s (exists; --force replaces it)\n", filepath.Join(dir, p))
	}
	for _, n := range []string{res.VersionNote, res.GitignoreNote, res.SigningNote} {
		if n != "" {
			fmt.Fprintf(w, "note:   %s\n", n)
		}
	}
	signing := fmt.Sprintf("signing: %s, see %s", res.Signing, filepath.Join(dir, "SIGNING.md"))
	if res.SigningNote != "" {
		signing = fmt.Sprintf("signing: %s; %s was skipped, see the note above", res.Signing, filepath.Join(dir, "SIGNING.md"))
	}
	fmt.Fprintf(w, "compiled %s into %s (%s)\n\nnext:\n",
		strings.Join(rep.Agents, ", "), filepath.Join(dir, "policies"), signing)
	for _, c := range rep.Next {
		fmt.Fprintf(w, "  %s\n", c)
	}
}

// initNext are the three commands init suggests after it.
func initNext(dir string) []string {
	q := shellQuote(dir)
	return []string{
		"fullsend policy test " + q,
		"fullsend policy explain " + scaffold.ExampleAgent + " " + q,
		"fullsend image build --base scratch --oci-layout " + shellQuote(filepath.Join(dir, "out", "image")) + " " + q,
	}
}

// shellQuote quotes s for a POSIX shell when it needs quoting.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=@+") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
