// Package lintcheck is the compile-time lint check: it hands every policy
// compile emits, with its fullsend context (tier, spawns, skills, open
// placeholders, provenance, the agents it can start), to the OPA rule set of
// package lint and turns the findings into compile diagnostics: a deny
// fails the compile, a warn is reported, each at the agent or skill line
// provenance names. It is the one package that links both the compiler and
// OPA; compile takes it as an injected compile.Check (New) or
// compile.StartCheck (Start) from the CLI, so compile itself never links a
// rule engine.
package lintcheck

import (
	"context"
	"fmt"
	"slices"

	"github.com/fullsend-ai/agent-sandbox/agentdef"
	"github.com/fullsend-ai/agent-sandbox/compile"
	"github.com/fullsend-ai/agent-sandbox/internal/parallel"
	"github.com/fullsend-ai/agent-sandbox/lint"
	"github.com/fullsend-ai/agent-sandbox/report"
)

// New returns the check that runs the OPA rule set on every compiled policy
// with its full fullsend context; deny findings fail the compile, warn
// findings are reported. Findings point at the agent or skill line from
// provenance.
func New(lo lint.Options) compile.Check {
	return check(func(ctx context.Context) (*lint.Engine, error) { return lint.New(ctx, lo) })
}

// check is New with the engine from newEngine, which may have
// been started before the compile (Start).
func check(newEngine func(context.Context) (*lint.Engine, error)) compile.Check {
	return func(ctx context.Context, out *compile.Output) (agentdef.Diagnostics, error) {
		// What each agent writes (lint.Writes matches every endpoint's
		// rules), then each input, is computed on GOMAXPROCS goroutines,
		// in name order.
		names := out.AgentNames()
		infos := make([]lint.AgentInfo, len(names))
		parallel.ForEach(len(names), 0, func(i int) {
			c := out.Agents[names[i]]
			infos[i] = lint.AgentInfo{Tier: string(c.Tier), Spawns: c.Spawns, Writes: lint.Writes(c.Effective())}
		})
		agents := make(map[string]lint.AgentInfo, len(names))
		for i, name := range names {
			agents[name] = infos[i]
		}
		engine, err := newEngine(ctx)
		if err != nil {
			return nil, fmt.Errorf("loading lint rules: %w", err)
		}
		inputs := make([]lint.Input, len(names))
		parallel.ForEach(len(names), 0, func(i int) {
			name, c := names[i], out.Agents[names[i]]
			inputs[i] = lint.Input{
				Name: name, File: "policies/" + name + ".yaml", Policy: c.Effective(),
				Context: lint.Context{
					Agent: name, Tier: string(c.Tier), Spawns: c.Spawns, Skills: c.Skills,
					Placeholders: placeholdersOrEmpty(c.Placeholders), Provenance: c.Effective().Provenance(),
					Agents: reachable(agents, name),
				},
			}
		})
		rep, err := engine.Lint(ctx, inputs)
		if err != nil {
			return nil, fmt.Errorf("linting: %w", err)
		}
		var ds agentdef.Diagnostics
		for _, f := range rep.Findings {
			if f.Waived == "" {
				ds = append(ds, diagnostic(f))
			}
		}
		slices.SortStableFunc(ds, func(a, b agentdef.Diagnostic) int { return a.Pos.Compare(b.Pos) })
		return ds, nil
	}
}

// diagnostic is a lint finding as a compile diagnostic: an error for a
// deny (or error) finding, else a warning, at the agent or skill line its
// provenance names, else at the policy file.
func diagnostic(f report.Finding) agentdef.Diagnostic {
	d := agentdef.Diagnostic{Severity: agentdef.SeverityWarning, Field: f.PolicyPath,
		Message: fmt.Sprintf("[%s] %s (agent %s)", f.RuleID, f.Message, f.Agent),
		Pos:     agentdef.Pos{File: f.Policy}}
	if f.Severity == "deny" || f.Severity == "error" {
		d.Severity = agentdef.SeverityError
	}
	if f.Source != nil {
		d.Pos = agentdef.Pos{File: f.Source.File, Line: f.Source.Line, Column: f.Source.Column}
	}
	return d
}

// pendingEngine is a lint engine being prepared on its own goroutine.
type pendingEngine struct {
	done   chan struct{}
	engine *lint.Engine
	err    error
}

// Start is New as a compile.StartCheck for compile.ProjectOptions.Lint:
// lint.New(ctx, lo) runs on a new goroutine, recorded as the stage
// "lint-rules", while the project loads and compiles; the check waits for
// the engine. CompileDir calls wait before it returns, so the goroutine never
// outlives the compilation.
func Start(lo lint.Options) compile.StartCheck {
	return func(ctx context.Context, stage func(string) func()) (compile.Check, func()) {
		p := &pendingEngine{done: make(chan struct{})}
		go func() {
			defer close(p.done)
			defer stage("lint-rules")()
			p.engine, p.err = lint.New(ctx, lo)
		}()
		return check(p.wait), func() { <-p.done }
	}
}

// wait blocks until the engine is ready (or failed) and returns it. It
// takes a context only to match check's engine constructor.
func (p *pendingEngine) wait(context.Context) (*lint.Engine, error) {
	<-p.done
	return p.engine, p.err
}

// reachable returns the agents name can start through Agent(), directly or
// transitively, itself included: what the privilege-lifting rule looks at.
// Passing only these keeps linting linear in the number of agents.
func reachable(agents map[string]lint.AgentInfo, name string) map[string]lint.AgentInfo {
	out := map[string]lint.AgentInfo{}
	queue := []string{name}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		info, ok := agents[n]
		if _, seen := out[n]; seen || !ok {
			continue
		}
		out[n] = info
		queue = append(queue, info.Spawns...)
	}
	return out
}

func placeholdersOrEmpty(p []string) []string {
	if p == nil {
		return []string{}
	}
	return p
}
