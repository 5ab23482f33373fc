package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/fullsend-ai/agent-sandbox/internal/didyoumean"
	"github.com/fullsend-ai/agent-sandbox/internal/version"
)

// newRootCmd builds the whole command tree. Each area registers its commands
// here; the commands themselves stay thin: flags -> one package call -> print.
func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "fullsend",
		Short: "Compile, build, sign, verify and run sandboxed AI agents",
		Long: `fullsend turns agent and skill definitions (agents/*.md, skills/*/SKILL.md)
into NVIDIA OpenShell sandbox policies, bakes them into a reproducible,
signed agent-sandbox image, verifies that image before a CI job runs it,
and runs agents inside OpenShell sandboxes from within the image.`,
		Example: `  fullsend init my-agents && cd my-agents
  fullsend policy compile .
  fullsend image build . --base scratch --tag ghcr.io/acme/agents:v1.2.0 --oci-layout out/image --sign --key cosign.key
  fullsend verify --key cosign.pub --oci-layout out/image ghcr.io/acme/agents:v1.2.0
  fullsend run summarizer`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newVersionCmd())
	// Area commands are registered below, one line each.
	root.AddCommand(newPolicyCmd())
	root.AddCommand(newImageCmd())
	root.AddCommand(newVerifyCmd())
	root.AddCommand(newServeCmd())
	root.AddCommand(newRunCmd())
	root.AddCommand(newDoctorCmd())
	root.AddCommand(newTemplatesCmd())
	root.AddCommand(newInitCmd())
	root.Version = version.Info().String()
	root.SetVersionTemplate("fullsend {{.Version}}\n")
	usageErrors(root)
	return root
}

// usageErrors makes every way of calling a command wrongly a usageError
// (exit 2), whoever catches it: a bad flag or flag value (cobra's flag
// error, inherited by every subcommand), a wrong number of arguments
// (each command's Args), and an unknown subcommand (with cobra's
// did-you-mean).
func usageErrors(root *cobra.Command) {
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return usageError{flagHint(c, err)} })
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		switch {
		case c.HasSubCommands() && !c.Runnable():
			// A group: cobra would print its help and exit 0 for an
			// unknown subcommand.
			c.Args = cobra.ArbitraryArgs
			c.RunE = func(c *cobra.Command, args []string) error {
				if err := unknownSubcommand(c, args); err != nil {
					return err
				}
				return c.Help()
			}
		case c.Args != nil:
			args := c.Args
			c.Args = func(c *cobra.Command, a []string) error {
				if err := args(c, a); err != nil {
					return usageError{namedArgsError(c, a, err)}
				}
				return nil
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// unknownSubcommand refuses an argument to a command group: it names no
// subcommand of it.
func unknownSubcommand(c *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	msg := fmt.Sprintf("unknown command %q for %q", args[0], c.CommandPath())
	// cobra's own default distance (2) applies only inside its Find.
	c.SuggestionsMinimumDistance = 2
	if s := c.SuggestionsFor(args[0]); len(s) > 0 {
		msg += fmt.Sprintf("; did you mean %q?", s[0])
	}
	return usageErrorf("%s (see %s --help)", msg, c.CommandPath())
}

// flagHint adds to an unknown-flag error the command's closest flag
// (--oci-layot: did you mean --oci-layout?), as cobra does for commands.
func flagHint(c *cobra.Command, err error) error {
	name, ok := strings.CutPrefix(err.Error(), "unknown flag: --")
	if !ok {
		return err
	}
	var names []string
	c.Flags().VisitAll(func(f *pflag.Flag) {
		if !f.Hidden {
			names = append(names, f.Name)
		}
	})
	if s := didyoumean.Closest(name, names); s != "" {
		return fmt.Errorf("%w; did you mean --%s?", err, s)
	}
	return err
}

func newVersionCmd() *cobra.Command {
	var output outputFormat
	cmd := &cobra.Command{
		Use:     "version",
		Short:   "Print the fullsend version, module, commit and Go version",
		Example: "  fullsend version\n  fullsend version -o json\n  fullsend --version",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return printVersion(cmd.OutOrStdout(), output)
		},
	}
	addOutputFlag(cmd, &output)
	return cmd
}

func printVersion(w io.Writer, output outputFormat) error {
	if output == outputJSON {
		return writeJSON(w, version.Info())
	}
	_, err := fmt.Fprintln(w, version.Info())
	return err
}

// usageError marks an error caused by how the command was called (exit 2).
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usageErrorf(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
}

// exitCode maps an error to the process exit code: 2 for usage errors, 1 for
// everything else. Areas with richer codes wrap an exitError.
func exitCode(err error) int {
	var ee exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	var ue usageError
	if errors.As(err, &ue) {
		return 2
	}
	return 1
}

// exitError carries a specific exit code (for example an agent's own exit
// status propagated by fullsend run).
type exitError struct {
	code int
	err  error
}

func (e exitError) Error() string { return e.err.Error() }
func (e exitError) Unwrap() error { return e.err }
