package policydiff

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"

	"golang.org/x/sync/errgroup"

	"github.com/fullsend-ai/agent-sandbox/bundle"
	"github.com/fullsend-ai/agent-sandbox/openshell"
)

// Compiler compiles the project at the root of fsys for an OpenShell
// version into a side (the caller owns the compiler: cmd/fullsend passes
// package compile's, so this package links neither CUE nor OPA).
type Compiler func(ctx context.Context, fsys fs.FS, openshellVersion string) (*Side, error)

// Request is one `fullsend policy diff`.
type Request struct {
	// Base and Head are the arguments: git:REV, bundle:DIR, a revision git
	// resolves, or a project directory.
	Base, Head string
	// RepoDir is where git runs (default "."); Dir the project directory
	// relative to RepoDir for git inputs (default ".").
	RepoDir, Dir string
	// BaseVersion and HeadVersion are the OpenShell targets of each side.
	BaseVersion, HeadVersion string
	// Flips runs every *.policytest.yaml of the head's project under both
	// sides and lists the decisions that differ.
	Flips   bool
	Compile Compiler
	Options Options
}

// ErrSide wraps a side that could not be read or compiled; the message
// names the side (base or head) and its argument.
var ErrSide = errors.New("policy diff side failed")

type loaded struct {
	side  *Side
	fsys  fs.FS // the project, for policy tests (nil for a bundle)
	close func() error
}

// Run reads or compiles both sides concurrently and compares them.
func Run(ctx context.Context, req Request) (*Result, error) {
	if req.RepoDir == "" {
		req.RepoDir = "."
	}
	if req.Dir == "" {
		req.Dir = "."
	}
	var sides [2]loaded
	g, gctx := errgroup.WithContext(ctx)
	for i, spec := range []struct{ name, arg, version string }{{"base", req.Base, req.BaseVersion}, {"head", req.Head, req.HeadVersion}} {
		g.Go(func() error {
			l, err := req.load(gctx, spec.arg, spec.version)
			sides[i].close = l.close
			if err != nil {
				return fmt.Errorf("%w: %s (%s): %w", ErrSide, spec.name, spec.arg, err)
			}
			sides[i] = l
			return nil
		})
	}
	err := g.Wait()
	defer func() {
		for _, l := range sides {
			if l.close != nil {
				_ = l.close()
			}
		}
	}()
	if err != nil {
		return nil, err
	}
	res := Compare(sides[0].side, sides[1].side, req.Options)
	if req.Flips && sides[1].fsys != nil {
		flips, err := Flips(sides[1].fsys, sides[0].side, sides[1].side, req.Options.Agents)
		if err != nil {
			return nil, err
		}
		res.Flips = flips
		res.Summary.Flipped = len(flips)
	}
	return res, nil
}

func (req Request) load(ctx context.Context, arg, version string) (loaded, error) {
	in, err := ParseInput(ctx, req.RepoDir, arg)
	if err != nil {
		return loaded{}, err
	}
	switch in.Kind {
	case InputBundle:
		dir := in.Value
		if _, err := os.Stat(filepath.Join(dir, bundle.ManifestFile)); err != nil {
			dir = filepath.Join(dir, "policies")
		}
		s, err := ReadBundle(in.Arg, os.DirFS(dir))
		return loaded{side: s}, err
	case InputDir:
		// The root stays open for the policy tests; Run closes it.
		root, err := os.OpenRoot(in.Value)
		if err != nil {
			return loaded{}, err
		}
		fsys := root.FS()
		s, err := req.compile(ctx, fsys, version, in.Arg)
		return loaded{s, fsys, root.Close}, err
	}
	commit, err := ResolveCommit(ctx, req.RepoDir, in.Value)
	if err != nil {
		return loaded{}, err
	}
	top, prefix, err := RepoPrefix(ctx, req.RepoDir)
	if err != nil {
		return loaded{}, err
	}
	fsys, err := GitTree(ctx, top, commit, path.Join(prefix, filepath.ToSlash(req.Dir)))
	if err != nil {
		return loaded{}, err
	}
	s, err := req.compile(ctx, fsys, version, in.Arg)
	if s != nil {
		s.Commit = commit
	}
	return loaded{s, fsys, nil}, err
}

func (req Request) compile(ctx context.Context, fsys fs.FS, version, ref string) (*Side, error) {
	if req.Compile == nil {
		return nil, errors.New("no compiler: only bundle inputs can be read")
	}
	s, err := req.Compile(ctx, fsys, version)
	if err != nil {
		return nil, err
	}
	s.Ref = ref
	return s, nil
}

// Flips runs the policy tests of a project (every *.policytest.yaml in
// fsys) against the base and the head policies, each under its side's
// OpenShell version, and returns the cases whose verdict differs. A file
// whose agent a side lacks, or whose placeholders a side cannot resolve,
// is skipped on that side and its cases flip to "error".
func Flips(fsys fs.FS, base, head *Side, agents []string) ([]Flip, error) {
	files, err := openshell.FindExpectations(fsys)
	if err != nil {
		return nil, err
	}
	run := func(s *Side, file string) (*openshell.ExpectReport, error) {
		pols := map[string]*openshell.Policy{}
		for n, a := range s.Agents {
			pols[n] = a.Policy
		}
		return openshell.RunExpectationsVersion(fsys, []string{file}, pols, nil, s.OpenShellVersion)
	}
	var out []Flip
	for _, f := range files {
		data, err := fs.ReadFile(fsys, f)
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", f, err)
		}
		ef, err := openshell.ParseExpectFile(f, data)
		if err != nil {
			return nil, err
		}
		if len(agents) > 0 && !contains(agents, ef.Agent) {
			continue
		}
		br, berr := run(base, f)
		hr, herr := run(head, f)
		for i, c := range ef.Tests {
			before, after, reason := "error", "error", ""
			if berr == nil {
				before = br.Results[i].Decision.Verdict()
			}
			if herr == nil {
				after, reason = hr.Results[i].Decision.Verdict(), hr.Results[i].Decision.Reason
			} else {
				reason = herr.Error()
			}
			if before != after {
				out = append(out, Flip{File: f, Agent: ef.Agent, Name: c.Name, Request: c.Request.String(), Expect: c.Expect,
					Before: before, After: after, Reason: reason})
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].File < out[j].File })
	return out, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
