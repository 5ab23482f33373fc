package policydiff

import (
	"github.com/fullsend-ai/agent-sandbox/gitrepo"

	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"

	"golang.org/x/sync/errgroup"

	"github.com/fullsend-ai/agent-sandbox/bundle"
	"github.com/fullsend-ai/agent-sandbox/openshell"
	"github.com/fullsend-ai/agent-sandbox/openshell/decide"
)

// Compiler compiles one side's project into a side (the caller owns the
// compiler: cmd/fullsend passes package compile's, so this package links
// neither CUE nor OPA).
type Compiler func(ctx context.Context, in CompileInput) (*Side, error)

// CompileInput is what a Compiler compiles: a side's project, its org
// catalog and its OpenShell target.
type CompileInput struct {
	// Project is the project directory of the side.
	Project fs.FS
	// Catalog holds the side's org catalog (.cue files at its top), nil
	// for the built-in catalog alone; CatalogName names it in messages and
	// CatalogKey identifies its contents (equal keys, equal catalogs), so
	// that a compiler loads each distinct catalog once.
	Catalog                 fs.FS
	CatalogName, CatalogKey string
	OpenShellVersion        string
}

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
	// Catalog is the org catalog directory (--catalog; relative to RepoDir,
	// which is the current directory by default), read for each git side
	// from its revision, from the file system for a directory side.
	Catalog string
	// Releases maps a fullsend release to the OpenShell version it targets
	// by default, for the releases the caller knows: a side whose
	// VersionFile pins one, and for which no version is asked, compiles
	// for that target.
	Releases map[string]string
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
	// catalogMissing: the side's revision has no --catalog directory.
	catalogMissing bool
}

// Run reads or compiles both sides concurrently and compares them.
func Run(ctx context.Context, req Request) (*Result, error) {
	req.RepoDir = cmp.Or(req.RepoDir, ".")
	req.Dir = cmp.Or(req.Dir, ".")
	sides, err := req.loadSides(ctx)
	defer closeSides(sides)
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

// loadSides reads or compiles the base and the head concurrently. What a
// side holds open is kept, even when it fails, for closeSides.
func (req Request) loadSides(ctx context.Context) ([2]loaded, error) {
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
	if err := g.Wait(); err != nil {
		return sides, err
	}
	if sides[0].catalogMissing && sides[1].catalogMissing {
		return sides, fmt.Errorf("--catalog %s: neither side's revision has this directory (it is read from git, relative to the current directory)", req.Catalog)
	}
	return sides, nil
}

// closeSides closes what the sides hold open.
func closeSides(sides [2]loaded) {
	for _, l := range sides {
		if l.close != nil {
			_ = l.close()
		}
	}
}

// load reads or compiles one side, by the kind of its argument.
func (req Request) load(ctx context.Context, arg, version string) (loaded, error) {
	in, err := ParseInput(ctx, req.RepoDir, arg)
	if err != nil {
		return loaded{}, err
	}
	switch in.Kind {
	case InputBundle:
		return loadBundle(in)
	case InputDir:
		return req.loadDir(ctx, in, version)
	}
	return req.loadGit(ctx, in, version)
}

// loadBundle reads a bundle directory, or its policies subdirectory when
// the manifest is there.
func loadBundle(in Input) (loaded, error) {
	dir := in.Value
	if _, err := os.Stat(filepath.Join(dir, bundle.ManifestFile)); err != nil {
		dir = filepath.Join(dir, "policies")
	}
	s, err := ReadBundle(in.Arg, os.DirFS(dir))
	return loaded{side: s}, err
}

// loadDir compiles a project directory. Its root stays open for the policy
// tests; Run closes it.
func (req Request) loadDir(ctx context.Context, in Input, version string) (loaded, error) {
	root, err := os.OpenRoot(in.Value)
	if err != nil {
		return loaded{}, err
	}
	fsys := root.FS()
	cat, err := req.dirCatalog(in.Value)
	if err != nil {
		return loaded{close: root.Close}, err
	}
	p, err := dirPin(ctx, in.Value)
	if err != nil {
		return loaded{close: root.Close}, err
	}
	s, err := req.compile(ctx, fsys, cat, req.target(version, p), in.Arg)
	if s != nil {
		s.pin = p
	}
	return loaded{side: s, fsys: fsys, close: root.Close}, err
}

// loadGit compiles the project directory at a revision, read from git.
func (req Request) loadGit(ctx context.Context, in Input, version string) (loaded, error) {
	commit, err := gitrepo.ResolveCommit(ctx, req.RepoDir, in.Value)
	if err != nil {
		return loaded{}, err
	}
	top, prefix, err := gitrepo.RepoPrefix(ctx, req.RepoDir)
	if err != nil {
		return loaded{}, err
	}
	project := path.Join(prefix, filepath.ToSlash(req.Dir))
	fsys, err := gitrepo.Tree(ctx, top, commit, project)
	if err != nil {
		return loaded{}, err
	}
	cat, err := req.gitCatalog(ctx, top, prefix, commit, project)
	if err != nil {
		return loaded{}, err
	}
	p, err := gitPin(ctx, top, commit, project)
	if err != nil {
		return loaded{}, err
	}
	s, err := req.compile(ctx, fsys, cat, req.target(version, p), in.Arg)
	if s != nil {
		s.Commit, s.pin = commit, p
	}
	return loaded{side: s, fsys: fsys, catalogMissing: cat.missing}, err
}

func (req Request) compile(ctx context.Context, fsys fs.FS, cat sideCatalog, version, ref string) (*Side, error) {
	if req.Compile == nil {
		return nil, errors.New("no compiler: only bundle inputs can be read")
	}
	s, err := req.Compile(ctx, CompileInput{Project: fsys, Catalog: cat.fsys, CatalogName: req.Catalog, CatalogKey: cat.key(), OpenShellVersion: version})
	if err != nil {
		return nil, err
	}
	s.Ref = ref
	s.catalog = cat.files
	return s, nil
}

// Flips runs the policy tests of a project (every *.policytest.yaml in
// fsys) against the base and the head policies, each under its side's
// OpenShell version, and returns the cases whose verdict differs. A file
// whose agent a side lacks, or whose placeholders a side cannot resolve,
// is skipped on that side and its cases flip to "error".
func Flips(fsys fs.FS, base, head *Side, agents []string) ([]Flip, error) {
	files, err := decide.FindExpectations(fsys)
	if err != nil {
		return nil, err
	}
	var out []Flip
	for _, f := range files {
		flips, err := fileFlips(fsys, f, base, head, agents)
		if err != nil {
			return nil, err
		}
		out = append(out, flips...)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].File < out[j].File })
	return out, nil
}

// fileFlips runs the policy-test file f under both sides, unless it tests
// an agent outside agents (when set), and returns its cases that flip.
func fileFlips(fsys fs.FS, f string, base, head *Side, agents []string) ([]Flip, error) {
	data, err := fs.ReadFile(fsys, f)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", f, err)
	}
	ef, err := decide.ParseExpectFile(f, data)
	if err != nil {
		return nil, err
	}
	if len(agents) > 0 && !slices.Contains(agents, ef.Agent) {
		return nil, nil
	}
	br, berr := runExpectations(fsys, base, f)
	hr, herr := runExpectations(fsys, head, f)
	var out []Flip
	for i, c := range ef.Tests {
		before, _ := caseVerdict(br, berr, i)
		after, reason := caseVerdict(hr, herr, i)
		if before != after {
			out = append(out, Flip{File: f, Agent: ef.Agent, Name: c.Name, Request: c.Request.String(), Expect: c.Expect,
				Before: before, After: after, Reason: reason})
		}
	}
	return out, nil
}

// runExpectations runs one policy-test file against the policies of a
// side, under its OpenShell version.
func runExpectations(fsys fs.FS, s *Side, file string) (*decide.ExpectReport, error) {
	pols := map[string]*openshell.Policy{}
	for n, a := range s.Agents {
		pols[n] = a.Policy
	}
	return decide.RunExpectationsVersion(fsys, []string{file}, pols, nil, s.OpenShellVersion)
}

// caseVerdict is the verdict of case i of a run and its reason, or
// "error" and the run's error.
func caseVerdict(rep *decide.ExpectReport, err error, i int) (verdict, reason string) {
	if err != nil {
		return "error", err.Error()
	}
	d := rep.Results[i].Decision
	return d.Verdict(), d.Reason
}
