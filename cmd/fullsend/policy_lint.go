package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/fullsend-ai/agent-sandbox/bundle"
	"github.com/fullsend-ai/agent-sandbox/internal/gcbudget"
	"github.com/fullsend-ai/agent-sandbox/internal/version"
	"github.com/fullsend-ai/agent-sandbox/lint"
	"github.com/fullsend-ai/agent-sandbox/openshell"
	"github.com/fullsend-ai/agent-sandbox/openshell/profile"
	"github.com/fullsend-ai/agent-sandbox/report"
)

// lintCmd holds the flags of policy lint.
type lintCmd struct {
	rules, data, waive []string
	noBuiltin, runtime bool
	listRules          bool
	output, failOn     string
	writeContext       string
}

func newPolicyLintCmd() *cobra.Command {
	var c lintCmd
	cmd := &cobra.Command{
		Use:   "lint [POLICY.yaml|POLICIES_DIR]...",
		Short: "Lint OpenShell policies with the embedded OPA rule set and your own rules",
		Long: `Lint runs the embedded Rego rule set (conftest-shaped deny_*/warn_* rules with
# METADATA ids FS001...) and any --rules directories on OpenShell policy files.
A compiled policies directory (with manifest.json) is linted with each agent's
context: tier, subagents, declared placeholders, provenance.json and all other
agents, so findings point at the agent or skill line that caused them.

Waive one finding with --waive ID[@AGENT][:POLICY_PATH]=REASON, or with a
data.fullsend.waivers list in a --data file; conftest's "exception" rules are
honoured too. Exit status 1 when a finding at or above --fail-on remains.`,
		Example: `  fullsend policy lint policies
  fullsend policy lint -o sarif policies > lint.sarif
  fullsend policy lint -o github --fail-on warn policies/summarizer.yaml
  fullsend policy lint --rules org-rules/ --data org-data.json policies/
  fullsend policy lint --waive 'FS003@summarizer:network_policies.git.endpoints[0]=git needs L4' policies/
  fullsend policy lint --list-rules
  fullsend policy lint --write-context ctx/ policies/   # then: conftest test --data ctx/summarizer.context.json ...`,
		RunE: c.run,
	}
	fl := cmd.Flags()
	fl.StringArrayVar(&c.rules, "rules", nil, "extra directory of *.rego rules, conftest shape (repeatable)")
	fl.StringArrayVar(&c.data, "data", nil, "JSON/YAML data file or directory, as conftest --data (repeatable)")
	fl.StringArrayVar(&c.waive, "waive", nil, "accept a finding: ID[@AGENT][:POLICY_PATH]=REASON (repeatable)")
	fl.BoolVar(&c.noBuiltin, "no-builtin", false, "run only the --rules directories, not the embedded rule set")
	fl.BoolVar(&c.runtime, "runtime", false, "the policies are meant to be loaded as they are: no placeholder may remain")
	fl.BoolVar(&c.listRules, "list-rules", false, "list the rules (id, severity, title) and exit")
	fl.StringVar(&c.writeContext, "write-context", "", "write each policy's context to DIR/<agent>.context.json for conftest/opa --data, and exit")
	fl.StringVarP(&c.output, "output", "o", "text", "output format: "+strings.Join(report.Formats(), ", "))
	fl.StringVar(&c.failOn, "fail-on", report.SeverityDeny, "exit 1 on findings of this severity or worse: deny or warn")
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(report.Formats(), cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

func (c *lintCmd) run(cmd *cobra.Command, args []string) error {
	opts, err := c.options()
	if err != nil {
		return err
	}
	gcbudget.Apply(lintMemoryCeiling, gcbudget.Off)
	// The rules compile on one core while the policies are read
	// and decoded on the other; errors keep their order.
	newEngine := startEngine(cmd, opts)
	var inputs []lint.Input
	var inputsErr error
	if !c.listRules && len(args) > 0 {
		inputs, inputsErr = lintInputs(args, c.runtime, cmd.ErrOrStderr())
	}
	engine, err := newEngine()
	if err != nil {
		return err
	}
	if c.listRules {
		return printRules(cmd.OutOrStdout(), engine.Rules(), c.output)
	}
	if len(args) == 0 {
		return usageErrorf("name policy files or a policies directory (or --list-rules)")
	}
	if inputsErr != nil {
		return inputsErr
	}
	if c.writeContext != "" {
		files, err := lint.WriteContextFiles(c.writeContext, inputs)
		for _, f := range files {
			fmt.Fprintln(cmd.OutOrStdout(), f)
		}
		return err
	}
	return c.lint(cmd, engine, inputs)
}

// options checks the flags and turns them into lint options.
func (c *lintCmd) options() (lint.Options, error) {
	if !slices.Contains(report.Formats(), c.output) {
		return lint.Options{}, usageErrorf("unknown output format %q (want %s)", c.output, strings.Join(report.Formats(), ", "))
	}
	if c.failOn != report.SeverityDeny && c.failOn != report.SeverityWarn {
		return lint.Options{}, usageErrorf("--fail-on %q: want deny or warn", c.failOn)
	}
	opts := lint.Options{DataPaths: c.data, NoBuiltin: c.noBuiltin}
	for _, d := range c.rules {
		if st, err := os.Stat(d); err != nil || !st.IsDir() {
			return lint.Options{}, usageErrorf("--rules %s: not a directory", d)
		}
		opts.RuleDirs = append(opts.RuleDirs, os.DirFS(d))
	}
	for _, w := range c.waive {
		pw, err := lint.ParseWaiver(w)
		if err != nil {
			return lint.Options{}, usageErrorf("--waive: %v", err)
		}
		opts.Waivers = append(opts.Waivers, pw)
	}
	return opts, nil
}

// lint lints inputs, writes the report and fails at --fail-on.
func (c *lintCmd) lint(cmd *cobra.Command, engine *lint.Engine, inputs []lint.Input) error {
	rep, err := engine.Lint(cmd.Context(), inputs)
	if err != nil {
		return err
	}
	w := cmd.OutOrStdout()
	if err := rep.Write(w, c.output, report.WriteOptions{Color: colorOK(w), ToolVersion: version.String()}); err != nil {
		return err
	}
	if rep.Failed(c.failOn) {
		return exitError{code: 1, err: fmt.Errorf("%w: %d deny, %d warn (--fail-on %s)",
			lint.ErrLintFailed, rep.Count(report.SeverityDeny), rep.Count(report.SeverityWarn), c.failOn)}
	}
	return nil
}

// startEngine starts lint.New on its own goroutine and returns a function
// that waits for it.
func startEngine(cmd *cobra.Command, opts lint.Options) func() (*lint.Engine, error) {
	type result struct {
		engine *lint.Engine
		err    error
	}
	done := make(chan result, 1)
	go func() {
		e, err := lint.New(cmd.Context(), opts)
		done <- result{e, err}
	}()
	return func() (*lint.Engine, error) {
		r := <-done
		return r.engine, r.err
	}
}

// lintMemoryCeiling caps `policy lint`'s garbage-free heap
// (gcbudget.Apply): above what linting a few hundred policies allocates,
// so the collector does not run at all for them, and at start-up it does
// not run repeatedly while the rules compile.
const lintMemoryCeiling = 256 << 20

// colorOK reports whether w is a terminal and NO_COLOR is unset.
func colorOK(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && os.Getenv("NO_COLOR") == "" && term.IsTerminal(int(f.Fd()))
}

func printRules(w io.Writer, rules []report.Rule, output string) error {
	if output == "json" {
		return writeJSON(w, rules)
	}
	for _, r := range rules {
		if _, err := fmt.Fprintf(w, "%-6s %-4s %-45s %s\n", r.ID, r.Severity, r.Namespace+"."+r.Name, r.Title); err != nil {
			return err
		}
	}
	return nil
}

// lintInputs turns arguments into lint inputs: a directory holding
// manifest.json is a compiled project (each agent with its context); another
// directory contributes its *.yaml files; a file is one policy.
func lintInputs(args []string, runtime bool, errw io.Writer) ([]lint.Input, error) {
	var inputs []lint.Input
	for _, arg := range args {
		ins, err := argInputs(arg, errw)
		if err != nil {
			return nil, err
		}
		inputs = append(inputs, ins...)
	}
	for i := range inputs {
		inputs[i].Context.Runtime = runtime
	}
	return inputs, nil
}

// argInputs are the lint inputs of one argument.
func argInputs(arg string, errw io.Writer) ([]lint.Input, error) {
	st, err := os.Stat(arg)
	if err != nil {
		return nil, usageErrorf("%v", err)
	}
	if !st.IsDir() {
		in, err := fileInput(arg)
		if err != nil {
			return nil, err
		}
		return []lint.Input{in}, nil
	}
	if _, err := os.Stat(filepath.Join(arg, bundle.ManifestFile)); err == nil {
		return bundleInputs(arg, errw)
	}
	return dirInputs(arg)
}

// bundleInputs are the inputs of a compiled bundle, each agent with its
// context. A compiled bundle is judged against the sources of the project
// around it (bundle.StaleRule).
func bundleInputs(arg string, errw io.Writer) ([]lint.Input, error) {
	if _, err := checkStale(filepath.Dir(filepath.Clean(arg)), arg, os.Getenv, errw); err != nil {
		return nil, err
	}
	b, err := bundle.Open(os.DirFS(arg), ".")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", arg, err)
	}
	ins, err := lint.ProjectInputs(os.DirFS(arg), arg, b)
	if err == nil {
		err = composeLintInputs(b, ins)
	}
	if err != nil {
		return nil, err
	}
	return ins, nil
}

// dirInputs are the inputs of a directory of *.yaml policies and provider
// profiles (profiles first).
func dirInputs(arg string) ([]lint.Input, error) {
	files, _ := filepath.Glob(filepath.Join(arg, "*.yaml"))
	if len(files) == 0 {
		if _, err := os.Stat(filepath.Join(arg, "policies", "manifest.json")); err == nil {
			return nil, usageErrorf("%s holds no manifest.json and no *.yaml policies (hint: it is a project; lint its bundle: fullsend policy lint %s)", arg, filepath.Join(arg, "policies"))
		}
		return nil, usageErrorf("%s holds no manifest.json and no *.yaml policies", arg)
	}
	files, profiles, err := splitProfiles(files)
	if err != nil {
		return nil, err
	}
	ins, err := lint.ReadPolicies(files)
	if err != nil {
		return nil, err
	}
	return append(profiles, ins...), nil
}

func fileInput(name string) (lint.Input, error) {
	raw, err := os.ReadFile(name)
	if err != nil {
		return lint.Input{}, err
	}
	if profile.IsProfile(raw) {
		return profileLintInput(name, raw)
	}
	p, err := openshell.Unmarshal(raw)
	if err != nil {
		return lint.Input{}, fmt.Errorf("%s: %w", name, openshell.DecodeError(err))
	}
	return lint.Input{File: name, Policy: p, Raw: raw}, nil
}
