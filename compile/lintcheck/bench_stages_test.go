package lintcheck_test

import (
	"context"
	"testing"

	"github.com/fullsend-ai/agent-sandbox/agentdef"
	"github.com/fullsend-ai/agent-sandbox/compile"
	"github.com/fullsend-ai/agent-sandbox/compile/lintcheck"
	"github.com/fullsend-ai/agent-sandbox/lint"
)

// BenchmarkCompileStages splits bench/compile.sh's 1000-agent run into its
// stages: load (discover + parse), compile (derive + merge + emit), and
// each check (validate, lint) on the compiled output, each on its own, and
// the whole pipeline as `fullsend policy compile` runs it (CompileDir on a
// directory, the lint rules compiled while the project compiles, the
// checks overlapping), without the final Write.
func BenchmarkCompileStages(b *testing.B) {
	const n = 1000
	fsys := genProject(n)
	opts, err := options()
	if err != nil {
		b.Fatal(err)
	}
	proj, err := agentdef.Load(fsys)
	if err != nil {
		b.Fatal(err)
	}
	out, err := compile.Compile(context.Background(), proj, fsys, opts)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.Run("pipeline", func(b *testing.B) {
		dir := writeMapFS(b, fsys)
		for b.Loop() {
			if _, err := compile.CompileDir(ctx, dir, compile.ProjectOptions{Lint: lintcheck.Start(lint.Options{})}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("load", func(b *testing.B) {
		for b.Loop() {
			if _, err := agentdef.Load(fsys); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("compile", func(b *testing.B) {
		for b.Loop() {
			if _, err := compile.Compile(ctx, proj, fsys, opts); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("validate", func(b *testing.B) {
		for b.Loop() {
			if _, err := compile.ValidateCheck(ctx, out); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("lint", func(b *testing.B) {
		check := lintcheck.New(lint.Options{})
		for b.Loop() {
			if _, err := check(ctx, out); err != nil {
				b.Fatal(err)
			}
		}
	})
}
