package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/fullsend-ai/agent-sandbox/bundle"
	"github.com/fullsend-ai/agent-sandbox/internal/version"
	"github.com/fullsend-ai/agent-sandbox/lint"
	"github.com/fullsend-ai/agent-sandbox/openshell"
	"github.com/fullsend-ai/agent-sandbox/placeholder"
	"github.com/fullsend-ai/agent-sandbox/report"
)

func newPolicyLintCmd() *cobra.Command {
	var (
		rules, data, waive []string
		noBuiltin, runtime bool
		listRules          bool
		output, failOn     string
		writeContext       string
	)
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
		Example: `  fullsend policy lint testdata/triage/policies
  fullsend policy lint -o sarif testdata/triage/policies > lint.sarif
  fullsend policy lint -o github --fail-on warn policies/triage.yaml
  fullsend policy lint --rules org-rules/ --data org-data.json policies/
  fullsend policy lint --waive 'FS003@triage:network_policies.git.endpoints[0]=git needs L4' policies/
  fullsend policy lint --list-rules
  fullsend policy lint --write-context ctx/ policies/ && conftest test --all-namespaces -p lint/rules --data ctx/triage.context.json policies/triage.yaml`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if !contains(report.Formats(), output) {
				return usageErrorf("unknown output format %q (want %s)", output, strings.Join(report.Formats(), ", "))
			}
			if failOn != report.SeverityDeny && failOn != report.SeverityWarn {
				return usageErrorf("--fail-on %q: want deny or warn", failOn)
			}
			opts := lint.Options{DataPaths: data, NoBuiltin: noBuiltin}
			for _, d := range rules {
				if st, err := os.Stat(d); err != nil || !st.IsDir() {
					return usageErrorf("--rules %s: not a directory", d)
				}
				opts.RuleDirs = append(opts.RuleDirs, os.DirFS(d))
			}
			for _, w := range waive {
				pw, err := lint.ParseWaiver(w)
				if err != nil {
					return usageErrorf("--waive: %v", err)
				}
				opts.Waivers = append(opts.Waivers, pw)
			}
			tuneGC()
			engine, err := lint.New(cmd.Context(), opts)
			if err != nil {
				return err
			}
			if listRules {
				return printRules(cmd.OutOrStdout(), engine.Rules(), output)
			}
			if len(args) == 0 {
				return usageErrorf("name policy files or a policies directory (or --list-rules)")
			}
			inputs, err := lintInputs(args, runtime)
			if err != nil {
				return err
			}
			if writeContext != "" {
				files, err := lint.WriteContextFiles(writeContext, inputs)
				for _, f := range files {
					fmt.Fprintln(cmd.OutOrStdout(), f)
				}
				return err
			}
			rep, err := engine.Lint(cmd.Context(), inputs)
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			if err := rep.Write(w, output, report.WriteOptions{Color: colorOK(w), ToolVersion: version.String()}); err != nil {
				return err
			}
			if rep.Failed(failOn) {
				return exitError{code: 1, err: fmt.Errorf("%w: %d deny, %d warn (--fail-on %s)",
					lint.ErrLintFailed, rep.Count(report.SeverityDeny), rep.Count(report.SeverityWarn), failOn)}
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringArrayVar(&rules, "rules", nil, "extra directory of *.rego rules, conftest shape (repeatable)")
	fl.StringArrayVar(&data, "data", nil, "JSON/YAML data file or directory, as conftest --data (repeatable)")
	fl.StringArrayVar(&waive, "waive", nil, "accept a finding: ID[@AGENT][:POLICY_PATH]=REASON (repeatable)")
	fl.BoolVar(&noBuiltin, "no-builtin", false, "run only the --rules directories, not the embedded rule set")
	fl.BoolVar(&runtime, "runtime", false, "the policies are meant to be loaded as they are: no placeholder may remain")
	fl.BoolVar(&listRules, "list-rules", false, "list the rules (id, severity, title) and exit")
	fl.StringVar(&writeContext, "write-context", "", "write each policy's context to DIR/<agent>.context.json for conftest/opa --data, and exit")
	fl.StringVarP(&output, "output", "o", "text", "output format: "+strings.Join(report.Formats(), ", "))
	fl.StringVar(&failOn, "fail-on", report.SeverityDeny, "exit 1 on findings of this severity or worse: deny or warn")
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(report.Formats(), cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// tuneGC raises the garbage collector's target for this short-lived batch
// command unless the user set GOGC: OPA evaluation allocates many small,
// short-lived values while the live heap stays small (as golangci-lint does).
func tuneGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

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
func lintInputs(args []string, runtime bool) ([]lint.Input, error) {
	var inputs []lint.Input
	for _, arg := range args {
		st, err := os.Stat(arg)
		if err != nil {
			return nil, usageErrorf("%v", err)
		}
		if !st.IsDir() {
			in, err := fileInput(arg)
			if err != nil {
				return nil, err
			}
			inputs = append(inputs, in)
			continue
		}
		if _, err := os.Stat(filepath.Join(arg, bundle.ManifestFile)); err == nil {
			b, err := bundle.Open(os.DirFS(arg), ".")
			if err != nil {
				return nil, fmt.Errorf("%s: %w", arg, err)
			}
			ins, err := lint.ProjectInputs(os.DirFS(arg), arg, b)
			if err != nil {
				return nil, err
			}
			inputs = append(inputs, ins...)
			continue
		}
		files, _ := filepath.Glob(filepath.Join(arg, "*.yaml"))
		if len(files) == 0 {
			return nil, usageErrorf("%s holds no manifest.json and no *.yaml policies", arg)
		}
		for _, f := range files {
			in, err := fileInput(f)
			if err != nil {
				return nil, err
			}
			inputs = append(inputs, in)
		}
	}
	for i := range inputs {
		inputs[i].Context.Runtime = runtime
	}
	return inputs, nil
}

func fileInput(name string) (lint.Input, error) {
	raw, err := os.ReadFile(name)
	if err != nil {
		return lint.Input{}, err
	}
	p, err := openshell.Unmarshal(raw)
	if err != nil {
		return lint.Input{}, fmt.Errorf("%s: %w", name, err)
	}
	return lint.Input{File: name, Policy: p, Raw: raw}, nil
}

func newPolicyTestCmd() *cobra.Command {
	var (
		policiesDir, policyFile string
		requests, set           []string
		output                  string
	)
	cmd := &cobra.Command{
		Use:   "test [DIR]",
		Short: "Check which requests compiled policies allow (OpenShell semantics)",
		Long: `Test answers "would this request be allowed?" with OpenShell's rules: binary
matched against the process and its ancestors, host globs per label, ports,
access presets, method/path/query globs, deny_rules first, the SSRF guard and
enforcement: audit (allowed, reported).

Without --request it runs every *.policytest.yaml under DIR (default .)
against the compiled policies in --policies (default DIR/policies) and fails
when an expectation does not hold. With --policy and --request it prints the
decision for each request. Request syntax:

  METHOD URL from BINARY [via ANCESTOR]... [at RESOLVED_IP]
  CONNECT HOST:PORT from BINARY [via ANCESTOR]...`,
		Example: `  fullsend policy test testdata/triage
  fullsend policy test --set OWNER=acme --set REPO_NAME=widgets .
  fullsend policy test --policy policies/triage.yaml --set OWNER=o --set REPO_NAME=r --set ISSUE_NUMBER=5 \
    --request 'GET https://api.github.com/repos/o/r/issues/5 from /usr/bin/gh via /usr/bin/bash'
  fullsend policy test -o json testdata/production`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if output != "text" && output != "json" {
				return usageErrorf("unknown output format %q (want text or json)", output)
			}
			values, err := placeholder.ParseSet(set)
			if err != nil {
				return usageErrorf("%v", setFlagError(err))
			}
			w := cmd.OutOrStdout()
			if len(requests) > 0 {
				if policyFile == "" {
					return usageErrorf("--request needs --policy FILE")
				}
				return adHocDecisions(w, policyFile, requests, values, output)
			}
			dir := "."
			if len(args) == 1 {
				dir = args[0]
			}
			if policiesDir == "" {
				policiesDir = filepath.Join(dir, "policies")
			}
			policies, err := projectPolicies(policiesDir)
			if err != nil {
				return err
			}
			files, err := openshell.FindExpectations(os.DirFS(dir))
			if err != nil {
				return err
			}
			if len(files) == 0 {
				return usageErrorf("no *%s files under %s", openshell.ExpectSuffix, dir)
			}
			rep, err := openshell.RunExpectations(os.DirFS(dir), files, policies, values)
			if err != nil {
				return err
			}
			if err := writeExpectReport(w, rep, output); err != nil {
				return err
			}
			if n := rep.Failed(); n > 0 {
				return exitError{code: 1, err: fmt.Errorf("%w: %d of %d", openshell.ErrExpectationsFailed, n, len(rep.Results))}
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&policiesDir, "policies", "", "compiled policies directory with manifest.json (default DIR/policies)")
	fl.StringVar(&policyFile, "policy", "", "one policy file, for --request")
	fl.StringArrayVar(&requests, "request", nil, "a request to decide against --policy (repeatable)")
	fl.StringArrayVar(&set, "set", nil, "placeholder value KEY=VALUE; overrides the test files' set: (repeatable)")
	addOutputFlag(cmd, &output)
	return cmd
}

func projectPolicies(dir string) (map[string]*openshell.Policy, error) {
	b, err := bundle.Open(os.DirFS(dir), ".")
	if err != nil {
		return nil, fmt.Errorf("%s: %w (compile first: fullsend policy compile)", dir, err)
	}
	out := map[string]*openshell.Policy{}
	for _, name := range b.Manifest.AgentNames() {
		p, err := openshell.Unmarshal(b.Policies[name])
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", dir, b.Manifest.Agents[name].Policy, err)
		}
		out[name] = p
	}
	return out, nil
}

func adHocDecisions(w io.Writer, file string, requests []string, values placeholder.Values, output string) error {
	in, err := fileInput(file)
	if err != nil {
		return err
	}
	p := in.Policy
	open, err := openshell.ApplyPlaceholders(p, values)
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	if len(open) > 0 {
		return usageErrorf("%s still has placeholders %s: give them with --set KEY=VALUE", file, strings.Join(open, ", "))
	}
	type result struct {
		Request  string             `json:"request"`
		Decision openshell.Decision `json:"decision"`
	}
	var results []result
	for _, s := range requests {
		r, err := openshell.ParseRequest(s)
		if err != nil {
			return usageErrorf("--request: %v", err)
		}
		results = append(results, result{Request: r.String(), Decision: openshell.Decide(p, r)})
	}
	if output == "json" {
		return writeJSON(w, results)
	}
	for _, r := range results {
		d := r.Decision
		at := ""
		if d.Path != "" {
			at = " [" + d.Path + "]"
		}
		if _, err := fmt.Fprintf(w, "%-5s %s\n      %s%s\n", d.Verdict(), r.Request, d.Reason, at); err != nil {
			return err
		}
	}
	return nil
}

func writeExpectReport(w io.Writer, rep *openshell.ExpectReport, output string) error {
	if output == "json" {
		return writeJSON(w, map[string]any{"files": rep.Files, "failed": rep.Failed(), "results": rep.Results})
	}
	var b strings.Builder
	for _, c := range rep.Results {
		status := "PASS"
		if !c.Pass {
			status = "FAIL"
		}
		name := c.Name
		if name == "" {
			name = c.Request
		}
		fmt.Fprintf(&b, "%s %s:%d %s: %s\n", status, c.File, c.Line, c.Agent, name)
		if !c.Pass {
			fmt.Fprintf(&b, "     %s\n     expected %s, got %s: %s", c.Request, c.Expect, c.Decision.Verdict(), c.Decision.Reason)
			if c.Decision.Path != "" {
				fmt.Fprintf(&b, " [%s]", c.Decision.Path)
			}
			b.WriteByte('\n')
			if c.Problem != "" {
				fmt.Fprintf(&b, "     %s\n", c.Problem)
			}
		}
	}
	fmt.Fprintf(&b, "%d expectations in %d files: %d passed, %d failed\n",
		len(rep.Results), rep.Files, len(rep.Results)-rep.Failed(), rep.Failed())
	_, err := io.WriteString(w, b.String())
	return err
}
