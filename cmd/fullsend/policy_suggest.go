package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/fullsend-ai/agent-sandbox/agentdef"

	"github.com/spf13/cobra"

	"github.com/fullsend-ai/agent-sandbox/compile"
	"github.com/fullsend-ai/agent-sandbox/openshell"
	"github.com/fullsend-ai/agent-sandbox/placeholder"
	"github.com/fullsend-ai/agent-sandbox/policycue"
	"github.com/fullsend-ai/agent-sandbox/suggest"
)

// suggestFlags are the flags of policy suggest.
type suggestFlags struct {
	logs                      []string
	dir, result, to, output   string
	version, catalog, provide string
	set                       []string
	includeAudit, strictPaths bool
	strict, write, generalize bool
	only                      []string
	minCount                  int
	failOn                    string
}

func newPolicySuggestCmd() *cobra.Command {
	var f suggestFlags
	cmd := &cobra.Command{
		Use:   "suggest AGENT [DIR] --logs PATH...",
		Short: "Turn an agent's OpenShell denials into minimal sandbox: frontmatter changes",
		Long: `Suggest reads what OpenShell denied an agent (the sandbox's log file, its
OCSF JSONL file or "openshell logs" output, detected per line; or a run's log
directory with its result.json, or a directory of runs, one a
subdirectory) and proposes the smallest change of the agent's frontmatter
sandbox: block that allows it: exact hosts, methods and paths, with the
job's values turned back into {{OWNER}}, {{REPO_NAME}}, {{ISSUE_NUMBER}}... It never suggests a wildcard host, "**", or allowed_ips;
a "*" path segment only with --generalize. Each suggestion lists its grants:
every (binary, host, port, method, path) it newly allows.
Destinations OpenShell blocks whatever the policy (loopback, link-local and
cloud metadata, control-plane ports) are refused; configuration problems are
listed as manual. An HTTPS host denied at L4 shows no path: suggest proposes
a provisional access: read-only endpoint (--strict-paths lists it as manual).

Before printing, every suggestion is applied to a copy of the project, which
is compiled as "policy compile" would, and checked with the decision engine
of "policy test": the denied request is allowed, and the same path with other
methods, a sibling path and the host from /usr/bin/nc stay denied. A
suggestion that fails its check is left out of the patch and its denials
are listed as manual (unverified); the others are printed as usual.

Log lines are the agent's bytes: a prompt-injected agent chooses what it is
denied. Suggestions are evidence for a human: --write is refused in CI, and
"policy diff" is the review gate for what a human applies.

Exit codes: 0 analysis done, 1 an error (the project does not compile,
--strict without a parseable event, --fail-on met), 2 usage, 3 analysis
done and complete, but some denials need a human (a suggestion failed its
check, or an event is suspect: the agent could have written it).`,
		Example: `  fullsend policy suggest summarizer --logs denied.log
  fullsend policy suggest summarizer . --logs denied.log --set OWNER=acme --set REPO_NAME=widgets -o json
  fullsend policy suggest summarizer --logs denied.log -o patch
  fullsend policy suggest summarizer --logs denied.log --strict-paths
  fullsend policy suggest summarizer --logs denied.log --only S1 --write
  fullsend policy suggest summarizer --logs denied.log --generalize
  mkdir -p evidence/run-1 && cp denied.log evidence/run-1/openshell.log && fullsend policy suggest summarizer --logs evidence/`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := dirFromArgs(cmd, args, 1, "dir", &f.dir); err != nil {
				return err
			}
			if err := catalogOption(cmd, f.dir, &f.catalog); err != nil {
				return err
			}
			return runPolicySuggest(cmd, args[0], f)
		},
	}
	fl := cmd.Flags()
	fl.StringArrayVar(&f.logs, "logs", nil, "a log file (shorthand, OCSF JSONL or `openshell logs` output), a run's log directory, or a directory of runs (repeatable)")
	deprecatedDirFlag(fl, &f.dir, "dir", ".", "project directory DIR")
	fl.StringVar(&f.result, "result", "", "a run's result.json: its placeholders turn values back into {{NAME}}")
	fl.StringArrayVar(&f.set, "set", nil, "a value the job resolved, KEY=VALUE, turned back into {{KEY}} (repeatable)")
	fl.BoolVar(&f.includeAudit, "include-audit", false, `also treat enforcement: audit "would deny" as denials (needs OCSF JSONL input)`)
	fl.BoolVar(&f.strictPaths, "strict-paths", false, "list L4 denials (no path visible) under manual instead of a provisional read-only endpoint")
	fl.IntVar(&f.minCount, "min-count", 1, "ignore denials seen fewer times")
	fl.StringVar(&f.to, "to", "agent", "where new endpoints go: agent, or skill:NAME")
	fl.StringVarP(&f.output, "output", "o", "text", "output format: text, json or patch")
	fl.BoolVar(&f.write, "write", false, "apply the patch to the frontmatter files (refused in CI)")
	fl.StringSliceVar(&f.only, "only", nil, "keep only these suggestions (ids of a run without --only, e.g. S1,S3) in the patch, -o patch and --write")
	fl.BoolVar(&f.generalize, "generalize", false, `let a rule's last path segment become "*" (ids, or 3+ values seen), graded as the widest request it allows`)
	fl.StringVar(&f.failOn, "fail-on", "none", "exit 1 when the analysis has: none, suggestion or refused")
	fl.BoolVar(&f.strict, "strict", false, "exit 1 when no input line holds an OCSF event")
	fl.StringVar(&f.version, "openshell-version", "", "target OpenShell version (default: the version the Containerfile pins)")
	fl.StringVar(&f.catalog, "catalog", "", "directory of .cue files unified with the built-in catalog")
	fl.StringVar(&f.provide, "provider", "", "model provider for agents that name none")
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]string{"text", "json", "patch"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

func runPolicySuggest(cmd *cobra.Command, agent string, f suggestFlags) error {
	if err := f.validate(); err != nil {
		return err
	}
	values, err := placeholder.ParseSet(f.set)
	if err != nil {
		return usageErrorf("%v", setFlagError(err))
	}
	logs, err := suggest.ReadLogs(f.logs)
	if err != nil {
		return err
	}
	result, err := resultValues(f.result)
	if err != nil {
		return err
	}
	merged := suggest.MergeValues(logs.Values, result, values) // --set wins
	if f.strict && logs.EventCount() == 0 {
		return fmt.Errorf("--strict: no OCSF network or HTTP event in %s", strings.Join(f.logs, ", "))
	}
	out, err := f.suggest(cmd.Context(), agent, logs, merged)
	if err != nil {
		return err
	}
	if err := writeSuggestions(cmd.OutOrStdout(), f.output, out); err != nil {
		return err
	}
	if f.write && len(out.Files) > 0 {
		if err := f.writeSuggested(cmd.ErrOrStderr(), out); err != nil {
			return err
		}
	}
	if err := suggestFailOn(f.failOn, out); err != nil {
		return err
	}
	return suggestNeedsHuman(out)
}

// exitNeedsHuman is policy suggest's exit when the analysis is complete
// but some denials need a human (see suggest.Result.NeedsHuman).
const exitNeedsHuman = 3

// suggestNeedsHuman is exit 3 when some denials need a human.
func suggestNeedsHuman(out *suggest.Result) error {
	if n := out.NeedsHuman(); n > 0 {
		return exitError{code: exitNeedsHuman, err: fmt.Errorf("%d denials or events need a human: suggestions that failed their check (manual, unverified) or events the agent could have written (suspect)", n)}
	}
	return nil
}

// suggest compiles the project, then turns the logs' events into
// suggestions for agent, with the placeholder values.
func (f *suggestFlags) suggest(ctx context.Context, agent string, logs *suggest.Logs, values placeholder.Values) (*suggest.Result, error) {
	po := compile.ProjectOptions{OpenShellVersion: f.version, CatalogDir: f.catalog, Provider: f.provide, Agents: []string{agent}, Lint: lintStart(nil)}
	opts, err := suggestTarget(ctx, f.dir, agent, po)
	if err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(f.dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	opts.Project, opts.Values = root.FS(), values
	opts.IncludeAudit, opts.StrictPaths, opts.MinCount, opts.To = f.includeAudit, f.strictPaths, f.minCount, f.to
	opts.Generalize, opts.Only = f.generalize, f.only
	out, err := suggest.RunLogs(ctx, opts, logs)
	if errors.Is(err, suggest.ErrOnly) {
		return nil, usageError{fmt.Errorf("--only: %w", err)}
	}
	return out, err
}

// resultValues reads the placeholder values of the run's result.json
// (--result), when one is given.
func resultValues(path string) (placeholder.Values, error) {
	if path == "" {
		return nil, nil
	}
	values, err := suggest.ReadResultFile(path)
	if err != nil {
		return nil, fmt.Errorf("--result: %w", err)
	}
	return values, nil
}

// writeSuggested is --write: the suggested files go into the project, and
// errw says what to run next.
func (f *suggestFlags) writeSuggested(errw io.Writer, out *suggest.Result) error {
	if err := suggest.Write(f.dir, out, os.Getenv); err != nil {
		return err
	}
	fmt.Fprintf(errw, "wrote %d files; now run `fullsend policy compile %s` and review with `fullsend policy diff`\n", len(out.Files), f.dir)
	return nil
}

// validate checks the flags that need no file: usage errors (exit 2), and
// --write in CI.
func (f *suggestFlags) validate() error {
	switch {
	case !slices.Contains([]string{"text", "json", "patch"}, f.output):
		return usageErrorf("unknown output format %q (want text, json or patch)", f.output)
	case !slices.Contains([]string{"none", "suggestion", "refused"}, f.failOn):
		return usageErrorf("--fail-on %q: want none, suggestion or refused", f.failOn)
	case len(f.logs) == 0:
		return usageErrorf("give at least one --logs PATH")
	case f.minCount < 1:
		return usageErrorf("--min-count %d: want 1 or more", f.minCount)
	case f.to != "agent" && !strings.HasPrefix(f.to, "skill:"):
		return usageErrorf("--to %q: want agent or skill:NAME", f.to)
	}
	if f.write && suggest.InCI(os.Getenv) {
		return suggest.ErrInCI
	}
	return nil
}

// suggestTarget compiles the project in dir as policy compile does with po
// and returns the suggest options for agent: its compiled policy and the
// compiler that checks each suggestion.
func suggestTarget(ctx context.Context, dir, agent string, po compile.ProjectOptions) (suggest.Options, error) {
	res, err := compile.CompileDir(ctx, dir, po)
	var oe *compile.OptionError
	if errors.As(err, &oe) && oe.Option == "Agents" {
		return suggest.Options{}, fmt.Errorf("%w %q in %s: %w", errNoAgent, agent, dir, oe.Err)
	}
	if err != nil {
		return suggest.Options{}, flagError(err)
	}
	c, ok := res.Agents[agent]
	if !ok {
		return suggest.Options{}, fmt.Errorf("%w %q in %s (have: %s)", errNoAgent, agent, dir, strings.Join(res.AgentNames(), ", "))
	}
	compiler, err := suggestCompiler(po, agent)
	if err != nil {
		return suggest.Options{}, flagError(err)
	}
	return suggest.Options{
		Agent:   &suggest.Target{Name: agent, File: c.Agent.File, Tier: string(c.Tier), Policy: c.Policy},
		Compile: compiler, OpenShellVersion: res.OpenShellVersion,
	}, nil
}

// writeSuggestions prints the result in the -o format.
func writeSuggestions(w io.Writer, format string, out *suggest.Result) error {
	switch format {
	case "json":
		return suggest.WriteJSON(w, out)
	case "patch":
		return suggest.WritePatch(w, out)
	}
	return suggest.WriteText(w, out)
}

// suggestFailOn is the --fail-on exit: 1 when the result has what it names.
func suggestFailOn(failOn string, out *suggest.Result) error {
	switch {
	case failOn == "suggestion" && len(out.Suggestions) > 0:
		return exitError{code: 1, err: fmt.Errorf("--fail-on suggestion: %d suggestions", len(out.Suggestions))}
	case failOn == "refused" && len(out.Refused) > 0:
		return exitError{code: 1, err: fmt.Errorf("--fail-on refused: %d refused requests", len(out.Refused))}
	}
	return nil
}

// suggestCompiler compiles a (patched) project file system as policy
// compile does with po, checking the policies with the offline validator,
// and returns agent's compiled policy. The lint check and the expectations
// are not injected here: each candidate is judged with the decision engine,
// and the patched project meets both when policy compile runs on it.
func suggestCompiler(po compile.ProjectOptions, agent string) (suggest.Compiler, error) {
	var opts compile.Options
	if po.OpenShellVersion != "" {
		v, err := openshell.NormalizeVersion(po.OpenShellVersion)
		if err != nil {
			return nil, &compile.OptionError{Option: "OpenShellVersion", Err: err}
		}
		opts.OpenShellVersion = v
	}
	var org fs.FS
	if po.CatalogDir != "" {
		org = os.DirFS(po.CatalogDir)
	}
	cat, err := policycue.LoadCatalog(org, po.CatalogDir)
	if err != nil {
		return nil, err
	}
	opts.Catalog, opts.Provider = cat, po.Provider
	opts.Checks = []compile.Check{compile.ValidateCheck}
	return func(ctx context.Context, fsys fs.FS) (*suggest.Target, error) {
		proj, err := agentdef.Load(fsys)
		if err != nil {
			return nil, err
		}
		out, err := compile.Compile(ctx, proj, fsys, opts)
		if err != nil {
			return nil, err
		}
		t := suggestTargetOf(out, agent)
		if t == nil {
			return nil, fmt.Errorf("%w %q after the patch", errNoAgent, agent)
		}
		return t, nil
	}, nil
}

// suggestTargetOf is agent as out compiled it, with the agents that spawn
// it (their effective policies and what their spawn-widening declares for
// it), so suggest can say which grant policy compile's spawn proof would
// refuse; nil when out has no such agent.
func suggestTargetOf(out *compile.Output, agent string) *suggest.Target {
	c, ok := out.Agents[agent]
	if !ok {
		return nil
	}
	t := &suggest.Target{Name: agent, File: c.Agent.File, Tier: string(c.Tier), Policy: c.Policy, Effective: c.Effective()}
	for _, name := range out.AgentNames() {
		pc := out.Agents[name]
		if name == agent || !slices.Contains(pc.Spawns, agent) {
			continue
		}
		t.Parents = append(t.Parents, suggestParent(pc, agent))
	}
	return t
}

// suggestParent is the spawning agent pc as suggest reads it.
func suggestParent(pc *compile.Compiled, child string) suggest.Parent {
	pa := suggest.Parent{Name: pc.Agent.Name, File: pc.Agent.File, Policy: pc.Effective()}
	if pc.Agent.Sandbox == nil {
		return pa
	}
	for _, w := range pc.Agent.Sandbox.SpawnWidening {
		if w.Agent.Name != child {
			continue
		}
		for _, h := range w.Hosts {
			pa.Hosts = append(pa.Hosts, h.Name)
		}
		for _, d := range w.Paths {
			pa.Paths = append(pa.Paths, d.Path)
		}
		pa.Process = pa.Process || w.Process
	}
	return pa
}
