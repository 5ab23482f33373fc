package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fullsend-ai/agent-sandbox/agentdef"
	"github.com/fullsend-ai/agent-sandbox/compile/lintcheck"
	"github.com/fullsend-ai/agent-sandbox/lint"

	"github.com/spf13/cobra"

	"github.com/fullsend-ai/agent-sandbox/bundle"
	"github.com/fullsend-ai/agent-sandbox/compile"
	"github.com/fullsend-ai/agent-sandbox/internal/gcbudget"
	"github.com/fullsend-ai/agent-sandbox/placeholder"
)

// compileFlags are the flags shared by compile and explain.
type compileFlags struct {
	version  string
	catalog  string
	set      []string
	provider string
	rules    []string
	strict   bool
	agents   []string
}

func (f *compileFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.version, "openshell-version", "", "target OpenShell version (default: the version the Containerfile pins)")
	fl.StringVar(&f.catalog, "catalog", "", "directory of .cue files unified with the built-in catalog; one inside the project is recorded in policies/manifest.json and used by later commands without this flag (--catalog \"\" drops it)")
	fl.StringArrayVar(&f.set, "set", nil, "resolve a placeholder at compile time, KEY=VALUE (repeatable)")
	fl.StringVar(&f.provider, "provider", "", "model provider for agents that name none (e.g. anthropic, vertex)")
	fl.StringArrayVar(&f.rules, "rules", nil, "extra lint rule directory (repeatable)")
	fl.BoolVar(&f.strict, "strict", false, "make every warning an error (unknown fields and tools, skill-spec violations the runtimes tolerate)")
	fl.StringArrayVar(&f.agents, "agent", nil, "compile only this agent and what it references; problems elsewhere are ignored (repeatable)")
}

func (f *compileFlags) options() compile.ProjectOptions {
	return compile.ProjectOptions{
		OpenShellVersion: f.version, CatalogDir: f.catalog, Set: f.set,
		Provider: f.provider, Lint: lintStart(f.rules), Strict: f.strict, Agents: f.agents,
	}
}

// lintStart is the compile-time lint check, the built-in rules plus the
// rule directories dirs: compile links no rule engine, so the CLI injects
// the check (compile/lintcheck).
func lintStart(dirs []string) compile.StartCheck {
	var lo lint.Options
	for _, d := range dirs {
		lo.RuleDirs = append(lo.RuleDirs, os.DirFS(d))
	}
	return lintcheck.Start(lo)
}

// optionFlag is the flag of a compile.ProjectOptions field.
func optionFlag(option string) string {
	switch option {
	case "OpenShellVersion":
		return "--openshell-version"
	case "CatalogDir":
		return "--catalog"
	case "Agents":
		return "--agent"
	}
	return ""
}

// flagError names the flag in an option error of compile.CompileDir, as
// the user typed it: "--catalog: ...", "--set OWNER: ...".
func flagError(err error) error {
	if e, ok := err.(*compile.OptionError); ok {
		if flag := optionFlag(e.Option); flag != "" {
			return fmt.Errorf("%s: %w", flag, e.Err)
		}
	}
	return setFlagError(err)
}

// setFlagError names --set in an assignment placeholder.ParseSet refused.
func setFlagError(err error) error {
	e, ok := err.(*placeholder.AssignmentError)
	switch {
	case !ok:
		return err
	case errors.Is(e.Err, placeholder.ErrNotAssignment):
		return fmt.Errorf("--set %q: want KEY=VALUE, for example --set ISSUE_NUMBER=42", e.Assignment)
	}
	return fmt.Errorf("--set %s: %w", e.Name, e.Err)
}

// compileMemoryCeiling caps `policy compile`'s heap budget
// (gcbudget.Apply): a 1000-agent project allocates some 800 MB in all, and
// collecting at lint's 256 MB ceiling cost 10-15% of the compile's CPU,
// scavenging included (bench/compile.sh, 2026-11-25).
const compileMemoryCeiling = 1 << 30

// compileGCPercent lets `policy compile` collect when its heap has grown
// tenfold over the live heap (gcbudget.Apply). With the collector off below
// the ceiling, the compile's peak RSS was every byte it allocated (811 MiB
// for 1000 agents) and faulting that memory in cost more system time than
// the few collections cost: at 1000 the same compile peaks at about 485 MiB
// (0.60x) in the same CPU and wall time (0.98-1.00x; farm-bench, 11 pairs
// twice, 2026-11-28).
// `policy lint` keeps the collector off (gcbudget.Off): at 100 policies a
// percent of 1000 cost it 7% of its wall time.
const compileGCPercent = 1000

// compileCmd holds the flags of policy compile.
type compileCmd struct {
	flags   compileFlags
	out     string
	check   bool
	output  outputFormat
	timings bool
	emit    string
}

func newPolicyCompileCmd() *cobra.Command {
	var c compileCmd
	cmd := &cobra.Command{
		Use:   "compile [DIR]",
		Short: "Compile agent and skill definitions into one OpenShell policy per agent",
		Long: `Compile reads agents/*.md and skills/*/SKILL.md (and the .claude/ and .opencode/
layouts) under DIR (default .), derives each agent's capabilities from its
runtime, tools, skills and sandbox: declarations through the CUE catalog,
validates and lints the result, and writes DIR/policies/<agent>.yaml,
manifest.json and provenance.json. Nothing is written unless every agent
compiles cleanly; every problem of every file is reported in one run.
With --agent NAME only the named agents and what they reference are
compiled and checked, and nothing is written (the bundle is always the
whole project).`,
		Example: `  fullsend policy compile .
  fullsend policy compile --set OWNER=acme --set REPO_NAME=widgets .
  fullsend policy compile --openshell-version v0.0.83 --out build/policies .
  fullsend policy compile --check .          # CI gate: fail when policies/ is stale
  fullsend policy compile --strict .         # every warning is an error
  fullsend policy compile --agent summarizer .   # just summarizer, its subagents and skills
  fullsend policy compile --catalog org-catalog/ -o json .
  fullsend policy compile --emit profiles --set OWNER=acme --set REPO_NAME=widgets .   # ADR 0065 layout`,
		Args: cobra.MaximumNArgs(1),
		RunE: c.run,
	}
	c.flags.register(cmd)
	cmd.Flags().StringVar(&c.out, "out", "", "output directory (default DIR/policies)")
	cmd.Flags().StringVar(&c.emit, "emit", "policies", "policies, or profiles: the network policies several agents share become generated provider profiles in policies/profiles/ (docs/providers.md)")
	cmd.Flags().BoolVar(&c.check, "check", false, "write nothing; exit non-zero with a diff when the output directory is stale")
	cmd.Flags().BoolVar(&c.timings, "timings", false, "print when each stage ran (catalog, lint-rules, load, compile, emit, validate, lint, expectations, write) to stderr")
	addOutputFlag(cmd, &c.output)
	return cmd
}

func (c *compileCmd) run(cmd *cobra.Command, args []string) error {
	// Compiling is a short-lived batch like linting, whose
	// allocations (OPA evaluation above all) die young.
	gcbudget.Apply(compileMemoryCeiling, compileGCPercent)
	dir, err := projectDir(args)
	if err != nil {
		return err
	}
	if err := catalogOption(cmd, dir, &c.flags.catalog); err != nil {
		return err
	}
	if c.flags.catalog != "" && bundle.RecordCatalog(dir, c.flags.catalog) == "" {
		fmt.Fprintln(cmd.ErrOrStderr(), ciSafe(fmt.Sprintf("warning: --catalog %s is not inside the project %s: the bundle does not record it, so give it to every command that compiles", c.flags.catalog, dir)))
	}
	out := cmp.Or(c.out, filepath.Join(dir, "policies"))
	po := c.flags.options()
	switch c.emit {
	case "policies":
	case "profiles":
		po.EmitProfiles = true
	default:
		return usageErrorf("--emit %q: want policies or profiles", c.emit)
	}
	res, err := compile.CompileDir(cmd.Context(), dir, po)
	if err != nil {
		return compileFailure(cmd.OutOrStdout(), cmd.ErrOrStderr(), c.output, err)
	}
	if len(c.flags.agents) > 0 {
		if c.check {
			return usageErrorf("--check compares the whole bundle: drop --agent")
		}
		return printCompile(cmd.OutOrStdout(), cmd.ErrOrStderr(), c.output, "", res)
	}
	if c.check {
		return c.checkStale(cmd.OutOrStdout(), dir, out, res)
	}
	start := time.Now()
	if err := compile.Write(out, res); err != nil {
		return err
	}
	if c.timings {
		printTimings(cmd.ErrOrStderr(), res.Stages, time.Since(start))
	}
	return printCompile(cmd.OutOrStdout(), cmd.ErrOrStderr(), c.output, out, res)
}

// checkStale is --check: it writes nothing and fails with the diff when
// out is not what the compile produced.
func (c *compileCmd) checkStale(w io.Writer, dir, out string, res *compile.Output) error {
	diffs, err := compile.Diff(out, res)
	if err != nil {
		return err
	}
	if err := printCheck(w, c.output, out, diffs); err != nil {
		return err
	}
	if len(diffs) > 0 {
		return fmt.Errorf("%w: run `%s` and commit %s", compile.ErrStale, compileCommand(dir), out)
	}
	return nil
}

// printTimings prints the compile's stages, by start, in milliseconds from
// the start of the compile (they overlap), then the write that followed.
func printTimings(w io.Writer, stages []compile.Stage, write time.Duration) {
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	fmt.Fprintf(w, "%-14s %9s %9s %9s\n", "stage", "start_ms", "end_ms", "took_ms")
	var end time.Duration
	for _, s := range stages {
		fmt.Fprintf(w, "%-14s %9.1f %9.1f %9.1f\n", s.Name, ms(s.Start), ms(s.End), ms(s.Took()))
		end = max(end, s.End)
	}
	fmt.Fprintf(w, "%-14s %9.1f %9.1f %9.1f\n", "write", ms(end), ms(end+write), ms(write))
}

// compileSummary is the -o json result of policy compile, printed on
// success and on failure alike.
type compileSummary struct {
	OK               bool                            `json:"ok"`
	OutDir           string                          `json:"out_dir,omitempty"`
	OpenShellVersion string                          `json:"openshell_version,omitempty"`
	Agents           map[string]bundle.ManifestAgent `json:"agents"`
	// Errors and Warnings are every diagnostic of the run, by severity.
	Errors   agentdef.Diagnostics `json:"errors"`
	Warnings agentdef.Diagnostics `json:"warnings"`
	// Error is the failure when it is not a list of diagnostics (a flag, an
	// unreadable directory).
	Error string `json:"error,omitempty"`
}

// addDiagnostics adds ds to the errors or the warnings, by severity.
func (sum *compileSummary) addDiagnostics(ds agentdef.Diagnostics) {
	for _, d := range ds {
		if d.Severity == agentdef.SeverityError {
			sum.Errors = append(sum.Errors, d)
		} else {
			sum.Warnings = append(sum.Warnings, d)
		}
	}
}

// compileFailure reports a failed compile: -o json prints the result with
// every diagnostic, text prints the warnings (the errors are the returned
// error's). The returned error keeps the exit code non-zero.
func compileFailure(w, errw io.Writer, output outputFormat, err error) error {
	err = flagError(err)
	var f *compile.Failure
	isFailure := errors.As(err, &f)
	if output == outputJSON {
		sum := compileSummary{Agents: map[string]bundle.ManifestAgent{}, Errors: agentdef.Diagnostics{}, Warnings: agentdef.Diagnostics{}}
		if isFailure {
			sum.addDiagnostics(f.Diagnostics)
		} else {
			sum.Error = err.Error()
		}
		if werr := writeJSON(w, sum); werr != nil {
			return werr
		}
		return err
	}
	if isFailure {
		for _, d := range f.Diagnostics {
			if d.Severity != agentdef.SeverityError {
				fmt.Fprintln(errw, ciSafe(d.String()))
			}
		}
	}
	return err
}

func printCompile(w, errw io.Writer, output outputFormat, outDir string, res *compile.Output) error {
	if output == outputJSON {
		return writeJSON(w, compileSummary{OK: true, OutDir: outDir, OpenShellVersion: res.OpenShellVersion, Agents: res.Manifest.Agents, Errors: agentdef.Diagnostics{}, Warnings: nonNil(res.Warnings)})
	}
	for _, d := range res.Warnings {
		fmt.Fprintln(errw, ciSafe(d.String()))
	}
	for _, name := range res.AgentNames() {
		a := res.Manifest.Agents[name]
		open := ""
		if len(a.Placeholders) > 0 {
			open = "  open: " + strings.Join(a.Placeholders, ",")
		}
		fmt.Fprintln(w, ciSafe(fmt.Sprintf("%-28s tier=%-9s runtime=%s/%s%s", filepath.Join(outDir, a.Policy), a.Tier, a.Runtime, a.Provider, open)))
	}
	if outDir == "" {
		fmt.Fprintf(w, "compiled %d agents for OpenShell %s (--agent: nothing written)\n", len(res.Agents), res.OpenShellVersion)
		return nil
	}
	fmt.Fprintln(w, ciSafe(fmt.Sprintf("compiled %d agents for OpenShell %s into %s", len(res.Agents), res.OpenShellVersion, outDir)))
	return nil
}

func nonNil(ds agentdef.Diagnostics) agentdef.Diagnostics {
	if ds == nil {
		return agentdef.Diagnostics{}
	}
	return ds
}

func printCheck(w io.Writer, output outputFormat, outDir string, diffs []compile.FileDiff) error {
	if output == outputJSON {
		if diffs == nil {
			diffs = []compile.FileDiff{}
		}
		return writeJSON(w, map[string]any{"out_dir": outDir, "up_to_date": len(diffs) == 0, "diffs": diffs})
	}
	if len(diffs) == 0 {
		_, err := fmt.Fprintln(w, ciSafe(outDir+" is up to date"))
		return err
	}
	for _, d := range diffs {
		line := fmt.Sprintf("%s: %s", filepath.Join(outDir, d.File), d.Change)
		if d.Decoded != "" {
			line += " (committed file: " + d.Decoded + ")"
		}
		fmt.Fprintln(w, ciSafe(line))
		if d.Diff != "" {
			fmt.Fprint(w, ciSafe(d.Diff))
		}
	}
	return nil
}

// compileIfStale compiles the project in dir into dir/policies when that
// output is missing or differs from a fresh compile, keeping the OpenShell
// version the existing manifest targets.
func compileIfStale(ctx context.Context, dir string, log io.Writer) error {
	out := filepath.Join(dir, "policies")
	var po compile.ProjectOptions
	if m, _, err := bundle.ReadManifest(os.DirFS(out)); err == nil {
		po.OpenShellVersion = m.OpenShellVersion
	}
	cat, err := recordedCatalog(dir)
	if err != nil {
		return err
	}
	po.CatalogDir = cat
	res, err := compile.CompileDir(ctx, dir, po)
	if err != nil {
		return flagError(err)
	}
	diffs, err := compile.Diff(out, res)
	if err != nil || len(diffs) == 0 {
		return err
	}
	if err := compile.Write(out, res); err != nil {
		return err
	}
	fmt.Fprintf(log, "compiled %d agents into %s (%d files were missing or stale)\n", len(res.Agents), out, len(diffs))
	return nil
}

// errNoAgent reports an explain request for an agent the project lacks.
var errNoAgent = errors.New("no such agent")

func newPolicyExplainCmd() *cobra.Command {
	var (
		flags  compileFlags
		dir    string
		output outputFormat
	)
	cmd := &cobra.Command{
		Use:   "explain AGENT [DIR]",
		Short: "Show each endpoint, rule, binary and path of an agent's policy with the line that caused it",
		Example: `  fullsend policy explain summarizer
  fullsend policy explain summarizer . -o json`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := dirFromArgs(cmd, args, 1, "dir", &dir); err != nil {
				return err
			}
			if err := catalogOption(cmd, dir, &flags.catalog); err != nil {
				return err
			}
			// explain shows the sources; say when the compiled policies
			// the other commands use no longer match them.
			if _, err := checkStale(dir, filepath.Join(dir, "policies"), os.Getenv, cmd.ErrOrStderr()); err != nil {
				return err
			}
			// Only the agent and what it references are compiled: a broken
			// file elsewhere does not hide this agent's explanation.
			po := flags.options()
			po.Agents = append(po.Agents, args[0])
			po.KeepUnheld = true // explained, and listed, not fatal
			res, err := compile.CompileDir(cmd.Context(), dir, po)
			var oe *compile.OptionError
			if errors.As(err, &oe) && oe.Option == "Agents" {
				return fmt.Errorf("%w %q in %s: %w", errNoAgent, args[0], dir, oe.Err)
			}
			if err != nil {
				return flagError(err)
			}
			c, ok := res.Agents[args[0]]
			if !ok {
				return fmt.Errorf("%w %q in %s (have: %s)", errNoAgent, args[0], dir, strings.Join(res.AgentNames(), ", "))
			}
			ex := compile.Explain(c)
			if output == outputJSON {
				return writeJSON(cmd.OutOrStdout(), ex)
			}
			_, err = io.WriteString(cmd.OutOrStdout(), ex.String())
			return err
		},
	}
	flags.register(cmd)
	deprecatedDirFlag(cmd.Flags(), &dir, "dir", ".", "project directory")
	addOutputFlag(cmd, &output)
	return cmd
}
