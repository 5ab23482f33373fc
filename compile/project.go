package compile

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"slices"

	"github.com/fullsend-ai/agent-sandbox/agentdef"
	"github.com/fullsend-ai/agent-sandbox/bundle"
	"github.com/fullsend-ai/agent-sandbox/internal/parallel"
	"github.com/fullsend-ai/agent-sandbox/openshell"
	"github.com/fullsend-ai/agent-sandbox/openshell/decide"
	"github.com/fullsend-ai/agent-sandbox/openshell/validate"
	"github.com/fullsend-ai/agent-sandbox/placeholder"
	"github.com/fullsend-ai/agent-sandbox/policycue"
)

// ProjectOptions are the user-facing options of compiling a project
// directory (the flags of `fullsend policy compile`).
type ProjectOptions struct {
	OpenShellVersion string
	// CatalogDir holds organisation .cue files unified with the built-in catalog.
	CatalogDir string
	// Set holds KEY=VALUE placeholder assignments.
	Set      []string
	Provider string
	// Strict makes every warning an error.
	Strict bool
	// Lint, when set, starts the rule check (package lint's OPA rules,
	// through compile/lintcheck): CompileDir starts it before the project
	// loads, so that the rules compile while the project loads, runs its
	// check between ValidateCheck and the expectations, and waits for it
	// before returning. compile links no rule engine; the caller injects it.
	Lint StartCheck
	// Agents, when set, compiles only the named agents and what they
	// reference (subagents, skills, fragments): problems in other files are
	// not reported and do not fail the compile.
	Agents []string
	// EmitProfiles moves the network policies several agents share into
	// generated provider profiles (Options.EmitProfiles).
	EmitProfiles bool
	// KeepUnheld records the expectations that do not hold in each agent's
	// Compiled.Unheld instead of failing the compile (policy explain
	// explains a policy whose only problem is its expectations).
	KeepUnheld bool
}

// OptionError reports an invalid ProjectOptions field. Option is the
// field's name (OpenShellVersion, CatalogDir), so that a CLI can name its
// own flag instead.
type OptionError struct {
	Option string
	Err    error
}

func (e *OptionError) Error() string { return e.Option + ": " + e.Err.Error() }

func (e *OptionError) Unwrap() error { return e.Err }

// StartCheck starts preparing a check that is slow to prepare (compiling
// lint rules) on its own goroutine and returns the check, which waits for
// the preparation when it runs, and wait, which blocks until the
// preparation has ended. stage records a span of the compile's timeline
// (Output.Stages) and returns the function that ends it.
type StartCheck func(ctx context.Context, stage func(name string) (end func())) (check Check, wait func())

// CompileDir loads, compiles and checks the project in dir: validation,
// the injected lint check (ProjectOptions.Lint) and the expectations. It
// reads only, through an os.Root on dir so that no symbolic link leads out
// of the project; writing is Write's job. An invalid option is an *OptionError
// (a refused Set assignment a *placeholder.AssignmentError).
func CompileDir(ctx context.Context, dir string, po ProjectOptions) (*Output, error) {
	tl := newTimeline()
	endCatalog := tl.begin("catalog")
	opts, err := po.resolve()
	if err != nil {
		return nil, err
	}
	endCatalog()
	opts.timeline = tl
	opts.catalogRecord = bundle.RecordCatalog(dir, po.CatalogDir)
	root, err := openProject(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	fsys := root.FS()
	// The lint rules parse and compile while the project loads and
	// compiles: the two share no data until the lint check runs.
	var lintCheck Check
	if po.Lint != nil {
		check, wait := po.Lint(ctx, tl.begin)
		defer wait() // the preparation never outlives CompileDir
		lintCheck = timed(tl, "lint", check)
	}
	// Every file is read and every problem of every file reported in one
	// run: a broken definition fails the project, but the others are still
	// compiled and checked (with --agent, only the selection counts).
	endLoad := tl.begin("load")
	proj, diags, _ := agentdef.LoadPartial(fsys)
	endLoad()
	if len(po.Agents) > 0 {
		if proj, diags, err = selectAgents(proj, diags, po.Agents); err != nil {
			return nil, &OptionError{Option: "Agents", Err: err}
		}
	}
	if len(proj.Agents) == 0 {
		return nil, noAgents(dir, diags)
	}
	proj.Warnings = diags
	scope := newExpectScope(proj, diags, len(po.Agents) > 0)
	scope.keepUnheld = po.KeepUnheld
	opts.Checks = []Check{timed(tl, "validate", ValidateCheck)}
	if lintCheck != nil {
		opts.Checks = append(opts.Checks, lintCheck)
	}
	opts.Checks = append(opts.Checks, timed(tl, "expectations", expectationsCheck(fsys, scope)))
	opts.checksReadAgents = true
	return Compile(ctx, proj, fsys, opts)
}

// openProject opens the project directory as an os.Root: every project
// input is read through it, so no link leads out.
func openProject(dir string) (*os.Root, error) {
	if st, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("project directory: %w", err)
	} else if !st.IsDir() {
		return nil, fmt.Errorf("project directory %s is not a directory", dir)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("project directory: %w", err)
	}
	return root, nil
}

// noAgents is the error of a project (or --agent selection) with no agent
// to compile: the load errors when there are some, else where the loader
// looked.
func noAgents(dir string, diags agentdef.Diagnostics) error {
	if diags.Err() != nil {
		return compileError(diags, &Output{})
	}
	return fmt.Errorf("%w: no agent definitions under %s (looked for agents/*.md, .claude/agents/, .opencode/agent(s)/)", ErrCompile, dir)
}

func (po ProjectOptions) resolve() (Options, error) {
	var opts Options
	if po.OpenShellVersion != "" {
		v, err := openshell.NormalizeVersion(po.OpenShellVersion)
		if err != nil {
			return opts, &OptionError{Option: "OpenShellVersion", Err: err}
		}
		opts.OpenShellVersion = v
	}
	var org fs.FS
	if po.CatalogDir != "" {
		if _, err := os.Stat(po.CatalogDir); err != nil {
			return opts, &OptionError{Option: "CatalogDir", Err: err}
		}
		org = os.DirFS(po.CatalogDir)
	}
	cat, err := policycue.LoadCatalog(org, po.CatalogDir)
	if err != nil {
		return opts, err
	}
	opts.Catalog = cat
	if opts.Values, err = placeholder.ParseSet(po.Set); err != nil {
		return opts, err
	}
	opts.Provider, opts.Strict, opts.EmitProfiles = po.Provider, po.Strict, po.EmitProfiles
	opts.SpawnContainment = true
	return opts, nil
}

// ValidateCheck runs the offline OpenShell validator on every emitted policy
// for the target version, with its open placeholders resolved to example
// values: that is the document OpenShell will load. A compiled policy that
// fails is a compiler bug or a catalog error; either way nothing is written.
// The policies are validated concurrently (GOMAXPROCS at once); the
// diagnostics come in agent name order.
func ValidateCheck(ctx context.Context, out *Output) (agentdef.Diagnostics, error) {
	return validateCheck(0)(ctx, out)
}

// validateCheck is ValidateCheck on up to workers goroutines (parallel.Workers).
func validateCheck(workers int) Check {
	return func(_ context.Context, out *Output) (agentdef.Diagnostics, error) {
		names := out.AgentNames()
		per := make([]agentdef.Diagnostics, len(names))
		errs := make([]error, len(names))
		parallel.ForEach(len(names), workers, func(i int) {
			per[i], errs[i] = validateOne(out, names[i])
		})
		var ds agentdef.Diagnostics
		for i := range names {
			if errs[i] != nil {
				return nil, errs[i]
			}
			ds = append(ds, per[i]...)
		}
		return ds, nil
	}
}

// validateOne validates one agent's policy as OpenShell will load it. A
// policy with no open placeholder is validated as the bytes emit writes
// (substituting examples would change nothing); the others are cloned,
// given example values and marshalled again. It reads only out.Agents and
// out.OpenShellVersion, so it may run beside emit.
func validateOne(out *Output, name string) (agentdef.Diagnostics, error) {
	file := "policies/" + name + ".yaml"
	c := out.Agents[name]
	data := c.doc // what emit writes, marshalled by the compile worker
	if data == nil || len(c.Placeholders) > 0 {
		p := c.Policy.Clone()
		if _, err := openshell.ApplyPlaceholders(p, placeholder.Examples()); err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		var err error
		if data, err = openshell.Marshal(p, header(c, out.OpenShellVersion)); err != nil {
			return nil, err
		}
	}
	var ds agentdef.Diagnostics
	for _, d := range validate.File(file, data, out.OpenShellVersion) {
		sev := agentdef.SeverityWarning
		if d.IsFatal() { // errors and traps: a compiled policy never holds either
			sev = agentdef.SeverityError
		}
		ds = append(ds, agentdef.Diagnostic{
			Pos: agentdef.Pos{File: file, Line: d.Line, Column: d.Column}, Severity: sev,
			Field: d.Path, Message: fmt.Sprintf("[%s] %s", d.Code, d.Message), Hint: d.Hint,
		})
	}
	return ds, nil
}

// expectScope says why an agent may have no compiled policy, so that its
// expectation files are skipped rather than failed.
type expectScope struct {
	// selected, when not nil, holds the agents --agent asked for (with what
	// they spawn); the expectations of the others are skipped silently.
	selected map[string]bool
	// known holds every agent name the project defines.
	known map[string]bool
	// loadErrors are the errors of the definitions that failed to load:
	// an agent too broken to have a name may be the one an expectation
	// file names.
	loadErrors agentdef.Diagnostics
	// keepUnheld records unheld expectations in Compiled.Unheld instead of
	// reporting them (ProjectOptions.KeepUnheld).
	keepUnheld bool
}

// newExpectScope is the scope of the expectations of proj, loaded with
// diags; selected says that proj holds only the agents --agent asked for.
func newExpectScope(proj *agentdef.Project, diags agentdef.Diagnostics, selected bool) expectScope {
	scope := expectScope{known: map[string]bool{}, loadErrors: diags.Errors()}
	for name := range proj.Defined() {
		scope.known[name] = true
	}
	if selected {
		scope.selected = map[string]bool{}
		for _, a := range proj.Agents {
			scope.selected[a.Name] = true
		}
	}
	return scope
}

// expectationsCheck runs the project's *.policytest.yaml expectations
// against the compiled policies, within a scope; an expectation that does
// not hold fails the compile at its line. Every file is judged on its own, so one bad file hides no other problem: a file that
// does not parse is an error at its line; the expectations of an agent that
// did not compile are skipped with one note saying so (its own errors are
// reported where they are); an agent nobody defined is an error with the
// closest defined name.
func expectationsCheck(fsys fs.FS, scope expectScope) Check {
	return func(_ context.Context, out *Output) (agentdef.Diagnostics, error) {
		files, err := decide.FindExpectations(fsys)
		if err != nil || len(files) == 0 {
			return nil, err
		}
		policies := make(map[string]*openshell.Policy, len(out.Agents))
		for name, c := range out.Agents {
			policies[name] = c.Effective() // with its provider layers
		}
		var ds agentdef.Diagnostics
		kept := files[:0:0]
		for _, f := range files {
			keep, fds, err := scope.expectFile(fsys, f, policies, out)
			if err != nil {
				return nil, err
			}
			if keep {
				kept = append(kept, f)
			}
			ds = append(ds, fds...)
		}
		if len(kept) == 0 {
			return ds, nil
		}
		rep, err := decide.RunExpectations(fsys, kept, policies, nil)
		if err != nil {
			return nil, err
		}
		if scope.keepUnheld {
			keepUnheld(out, rep)
			return ds, nil
		}
		return append(ds, unheldExpectations(rep, out)...), nil
	}
}

// expectFile reads and parses the expectation file f: keep when its agent
// compiled (its expectations run), else the diagnostic of a file that does
// not parse or whose agent has no policy (notCompiled).
func (s expectScope) expectFile(fsys fs.FS, f string, policies map[string]*openshell.Policy, out *Output) (keep bool, ds agentdef.Diagnostics, err error) {
	data, err := fs.ReadFile(fsys, f)
	if err != nil {
		return false, nil, fmt.Errorf("reading expectations: %w", err)
	}
	ef, err := decide.ParseExpectFile(f, data)
	if err != nil {
		return false, expectFileErrors(f, err), nil
	}
	if _, ok := policies[ef.Agent]; ok {
		return true, nil, nil
	}
	return false, s.notCompiled(f, ef.Agent, out), nil
}

// expectFileErrors are the errors of an expectation file that does not
// parse, one per problem the parser names (decide.ExpectFileErrors).
func expectFileErrors(f string, err error) agentdef.Diagnostics {
	var many decide.ExpectFileErrors
	if !errors.As(err, &many) {
		return agentdef.Diagnostics{expectFileError(f, err)}
	}
	ds := make(agentdef.Diagnostics, len(many))
	for i, e := range many {
		ds[i] = expectFileError(f, e)
	}
	return ds
}

// expectFileError is the error of an expectation file that does not parse,
// at its line when the parser names one.
func expectFileError(f string, err error) agentdef.Diagnostic {
	d := agentdef.Diagnostic{Pos: agentdef.Pos{File: f, Line: 1}, Severity: agentdef.SeverityError, Message: err.Error(),
		Hint: "an expectation file holds agent:, optional set: and tests: of {name, request, expect, reason}"}
	var pe *decide.ExpectFileError
	if errors.As(err, &pe) {
		d.Pos.Line, d.Message = max(pe.Line, 1), pe.Message
	}
	return d
}

// notCompiled says why the expectation file f, whose agent has no compiled
// policy, is not run: nothing for an agent --agent did not ask for, a note
// for an agent that failed to compile (or may be one of the definitions
// that failed to load), an error naming the closest agent for a name
// nobody defined.
func (s expectScope) notCompiled(f, agent string, out *Output) agentdef.Diagnostics {
	at := agentdef.Pos{File: f, Line: 1}
	switch {
	case s.selected != nil && !s.selected[agent]:
		return nil // not asked for with --agent: not compiled, not tested
	case s.known[agent] || namedFileIn(s.loadErrors, agent):
		return agentdef.Diagnostics{{Pos: at, Severity: agentdef.SeverityNote, Field: "agent",
			Message: fmt.Sprintf("expectations skipped: agent %q did not compile (its errors are reported at its own file)", agent)}}
	case len(s.loadErrors) > 0:
		return agentdef.Diagnostics{{Pos: at, Severity: agentdef.SeverityNote, Field: "agent",
			Message: fmt.Sprintf("expectations skipped: no agent %q compiled; it may be one of the definitions that failed to load", agent)}}
	}
	names := slices.Sorted(maps.Keys(s.known))
	if len(names) == 0 {
		names = out.AgentNames()
	}
	return agentdef.Diagnostics{{Pos: at, Severity: agentdef.SeverityError, Field: "agent",
		Message: fmt.Sprintf("no agent %q in the project", agent), Hint: agentdef.KnownHint("agents", agent, names)}}
}

// keepUnheld records each unheld expectation of rep in its agent's
// Compiled.Unheld.
func keepUnheld(out *Output, rep *decide.ExpectReport) {
	for _, r := range rep.Results {
		if c := out.Agents[r.Agent]; c != nil && !r.Pass {
			c.Unheld = append(c.Unheld, unheld(r, out))
		}
	}
}

// unheldExpectations is an error at every expectation of rep that does not
// hold.
func unheldExpectations(rep *decide.ExpectReport, out *Output) agentdef.Diagnostics {
	var ds agentdef.Diagnostics
	for _, r := range rep.Results {
		if !r.Pass {
			ds = append(ds, unheld(r, out))
		}
	}
	return ds
}

// unheld is the error of an expectation that does not hold, citing the
// provider layer that decided when one did.
func unheld(r decide.CaseResult, out *Output) agentdef.Diagnostic {
	msg := fmt.Sprintf("expectation %q does not hold: %s: expected %s, got %s (%s)", r.Name, r.Request, r.Expect, r.Decision.Verdict(), r.Decision.Reason)
	hint := "fix the agent's tools or sandbox: block, or the expectation; `fullsend policy explain " + r.Agent + "` shows where each rule comes from"
	if l, ok := out.Agents[r.Agent].layerOf(r.Decision.Policy); ok {
		msg += " in " + l.cite(out.Agents[r.Agent].Effective(), r.Decision.Path)
		hint = l.narrowHint()
	}
	if r.Problem != "" {
		msg += ": " + r.Problem
	}
	return agentdef.Diagnostic{Pos: agentdef.Pos{File: r.File, Line: r.Line}, Severity: agentdef.SeverityError, Field: "tests", Message: msg, Hint: hint}
}
