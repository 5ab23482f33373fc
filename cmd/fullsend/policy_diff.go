package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/fullsend-ai/agent-sandbox/agentdef"

	"github.com/spf13/cobra"

	"github.com/fullsend-ai/agent-sandbox/bundle"
	"github.com/fullsend-ai/agent-sandbox/compile"
	"github.com/fullsend-ai/agent-sandbox/internal/atomicfile"
	"github.com/fullsend-ai/agent-sandbox/internal/gcbudget"
	"github.com/fullsend-ai/agent-sandbox/internal/version"
	"github.com/fullsend-ai/agent-sandbox/openshell"
	"github.com/fullsend-ai/agent-sandbox/policycue"
	"github.com/fullsend-ai/agent-sandbox/policydiff"
	"github.com/fullsend-ai/agent-sandbox/prover"
)

// diffFlags are the flags of policy diff.
type diffFlags struct {
	dir, output, failOn, summaryFile, commentFile string
	osVersion, baseVersion, headVersion           string
	catalog, provider, credentials                string
	agents                                        []string
}

func newPolicyDiffCmd() *cobra.Command {
	var f diffFlags
	cmd := &cobra.Command{
		Use:   "diff BASE HEAD",
		Short: "Show what a change grants: compare the compiled policies of two revisions, with risk",
		Long: `Diff compiles BASE and HEAD (placeholders left open) and compares the policy
models, not their YAML: per agent, every endpoint, L7 rule, binary, filesystem
path, landlock and process setting, tier, subagent and output is added,
removed, widened, narrowed, changed or moved, with the frontmatter line that
caused it. Each change gets a risk (critical, high, medium, low, info) from a
fixed table in OpenShell's prover vocabulary (link_local_reach,
l7_bypass_credentialed, credential_reach_expansion, capability_expansion),
and the paths OpenShell's prover reports as new.

BASE and HEAD are git:REV (a revision of the repository at the current
directory; a bare revision that git resolves works too), a project directory,
or bundle:DIR (a compiled policies/ directory with manifest.json, compared
without sources). --dir names the project inside the repository for git
inputs. --catalog is read for each side as that side has it (a git side from
its revision), so a change to the organisation's catalog is compared too.
.fullsend-version at the repository root (the pinned fullsend release) is
read for each side; a change of it, and of the OpenShell target, is a row
with its risk. An agent whose file moved under the same name is one move
row. A side that does not compile fails the diff (exit 1) and the message
names it. Lint rules and policy tests are the compile gate's job
(policy compile --check) and are not run, except that --base-openshell and
--head-openshell compare one project across two OpenShell targets and run
every *.policytest.yaml under both, listing the decisions that flip.

In a pull-request job (the base branch's pinned fullsend, never one built
from the PR):

  fullsend policy diff "git:$BASE_SHA" "git:$HEAD_SHA" --dir .fullsend -o github \
      --summary-file "$GITHUB_STEP_SUMMARY" --comment-file policy-diff.md

Exit status: 0 when no change is at or above --fail-on (default none: report
only), 1 when one is or on an error, 2 on usage errors.`,
		Example: `  fullsend policy diff bundle:policies .
  fullsend policy diff . . --fail-on high
  fullsend policy diff bundle:policies . -o json
  fullsend policy diff bundle:policies . --catalog org-catalog/
  fullsend policy diff --base-openshell v0.0.83 --head-openshell v0.0.111 .
  fullsend policy diff bundle:policies . -o markdown --comment-file comment.md`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runPolicyDiff(cmd, args, f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.dir, "dir", ".", "the project directory inside the repository, for git inputs")
	fl.StringArrayVar(&f.agents, "agent", nil, "compare only this agent (repeatable)")
	fl.StringVarP(&f.output, "output", "o", "text", "output format: "+strings.Join(policydiff.Formats(), ", "))
	fl.StringVar(&f.failOn, "fail-on", "none", "exit 1 when a change has this risk or higher: critical, high, medium, low, info or none")
	fl.StringVar(&f.summaryFile, "summary-file", "", "also append the Markdown report to FILE (e.g. $GITHUB_STEP_SUMMARY)")
	fl.StringVar(&f.commentFile, "comment-file", "", "also write the Markdown report to FILE with a first-line marker for one PR comment per project")
	fl.StringVar(&f.osVersion, "openshell-version", "", "target OpenShell version of both sides (default: the version the Containerfile pins)")
	fl.StringVar(&f.baseVersion, "base-openshell", "", "OpenShell version of the base side (with --head-openshell)")
	fl.StringVar(&f.headVersion, "head-openshell", "", "OpenShell version of the head side (with --base-openshell)")
	fl.StringVar(&f.catalog, "catalog", "", "directory of .cue files unified with the built-in catalog, read from each side (git: from its revision)")
	fl.StringVar(&f.provider, "provider", "", "model provider for agents that name none (e.g. anthropic, vertex)")
	fl.StringVar(&f.credentials, "credentials", "", "credential set in OpenShell's prover format (default: the hosts a fullsend run puts credentials on)")
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(policydiff.Formats(), cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

func runPolicyDiff(cmd *cobra.Command, args []string, f diffFlags) error {
	versionMode, err := f.validate(len(args))
	if err != nil {
		return err
	}
	if len(args) == 1 {
		args = append(args, args[0])
	}
	creds, err := diffCredentials(f.credentials)
	if err != nil {
		return err
	}
	gcbudget.Apply(compileMemoryCeiling, compileGCPercent)
	res, err := policydiff.Run(cmd.Context(), policydiff.Request{
		Base: args[0], Head: args[1], Dir: f.dir, BaseVersion: f.baseVersion, HeadVersion: f.headVersion,
		Catalog: f.catalog, Releases: knownReleases(), Flips: versionMode, Compile: diffCompiler(f.provider),
		Options: policydiff.Options{Agents: f.agents, Credentials: creds},
	})
	if err != nil {
		return err
	}
	res.Reproduce = reproduce(res, args, f, versionMode)
	if err := f.writeMarkdownFiles(res); err != nil {
		return err
	}
	if err := res.Write(cmd.OutOrStdout(), f.output, policydiff.WriteOptions{}); err != nil {
		return err
	}
	if f.failOn != "none" && policydiff.RiskRank(res.Summary.MaxRisk) >= policydiff.RiskRank(f.failOn) {
		return exitError{code: 1, err: fmt.Errorf("policy diff: highest risk %s is at or above --fail-on %s", res.Summary.MaxRisk, f.failOn)}
	}
	return nil
}

// validate checks the flags against the number of arguments and
// normalizes the OpenShell versions (--openshell-version sets both sides);
// versionMode is a comparison of one project across two OpenShell targets.
func (f *diffFlags) validate(nargs int) (versionMode bool, err error) {
	if !slices.Contains(policydiff.Formats(), f.output) {
		return false, usageErrorf("unknown output format %q (want %s)", f.output, strings.Join(policydiff.Formats(), ", "))
	}
	if f.failOn != "none" && policydiff.RiskRank(f.failOn) < 0 {
		return false, usageErrorf("--fail-on %q: want critical, high, medium, low, info or none", f.failOn)
	}
	if versionMode, err = f.sideVersions(nargs); err != nil {
		return false, err
	}
	for _, v := range []*string{&f.baseVersion, &f.headVersion} {
		if *v == "" {
			continue
		}
		n, err := openshell.NormalizeVersion(*v)
		if err != nil {
			return false, usageErrorf("OpenShell version %q: %v", *v, err)
		}
		*v = n
	}
	return versionMode, nil
}

// sideVersions checks the OpenShell version flags against the number of
// arguments and sets both sides from --openshell-version, if given.
func (f *diffFlags) sideVersions(nargs int) (versionMode bool, err error) {
	versionMode = f.baseVersion != "" || f.headVersion != ""
	switch {
	case versionMode && (f.baseVersion == "" || f.headVersion == ""):
		return false, usageErrorf("--base-openshell and --head-openshell go together")
	case versionMode && f.osVersion != "":
		return false, usageErrorf("--openshell-version and --base-openshell/--head-openshell exclude each other")
	case nargs == 1 && !versionMode:
		return false, usageErrorf("want BASE and HEAD (one argument only with --base-openshell and --head-openshell)")
	case f.osVersion != "":
		f.baseVersion, f.headVersion = f.osVersion, f.osVersion
	}
	return versionMode, nil
}

// diffCredentials reads the --credentials file, or returns the default
// credential set.
func diffCredentials(path string) (prover.Credentials, error) {
	if path == "" {
		return prover.DefaultCredentials(), nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, usageErrorf("--credentials: %v", err)
	}
	creds, err := prover.ParseCredentials(data)
	if err != nil {
		return nil, usageErrorf("--credentials %s: %v", path, err)
	}
	return creds, nil
}

// writeMarkdownFiles writes the Markdown report to --summary-file
// (appended) and --comment-file (with the project's marker).
func (f *diffFlags) writeMarkdownFiles(res *policydiff.Result) error {
	for _, file := range []struct{ path, marker string }{{f.summaryFile, ""}, {f.commentFile, f.dir}} {
		if file.path == "" {
			continue
		}
		var b bytes.Buffer
		if err := res.Write(&b, "markdown", policydiff.WriteOptions{Marker: markerOf(file.marker, file.path == f.commentFile)}); err != nil {
			return err
		}
		if err := writeMarkdownFile(file.path, b.Bytes(), file.path == f.summaryFile); err != nil {
			return err
		}
	}
	return nil
}

// diffCompiler compiles a side as policy compile does up to the policy
// model (load, derive, merge, cap the tier, emit, validate), with the
// side's own org catalog (each distinct catalog loaded once); lint and
// policy tests are left to the compile gate.
func diffCompiler(provider string) policydiff.Compiler {
	cats := &catalogs{m: map[string]*catalogLoad{}}
	return func(ctx context.Context, in policydiff.CompileInput) (*policydiff.Side, error) {
		cat, err := cats.load(in)
		if err != nil {
			return nil, err
		}
		proj, err := agentdef.Load(in.Project)
		if err != nil {
			return nil, err
		}
		out, err := compile.Compile(ctx, proj, in.Project, compile.Options{OpenShellVersion: in.OpenShellVersion, Catalog: cat, Provider: provider,
			Checks: []compile.Check{compile.ValidateCheck}})
		if err != nil {
			return nil, err
		}
		agents := make(map[string]policydiff.Compiled, len(out.Agents))
		for n, c := range out.Agents {
			// With its provider layers: what OpenShell enforces.
			agents[n] = policydiff.Compiled{Policy: c.Effective(), TierWhy: tierSources(c)}
		}
		return policydiff.NewSide("", bundle.SHA256Hex(out.Files[bundle.ManifestFile]), out.Manifest, agents, out.Files)
	}
}

// catalogs loads each distinct catalog of the sides once (both sides
// compile concurrently, and most diffs share one catalog).
type catalogs struct {
	mu sync.Mutex
	m  map[string]*catalogLoad
}

type catalogLoad struct {
	once sync.Once
	cat  *policycue.Catalog
	err  error
}

func (c *catalogs) load(in policydiff.CompileInput) (*policycue.Catalog, error) {
	c.mu.Lock()
	l := c.m[in.CatalogKey]
	if l == nil {
		l = &catalogLoad{}
		c.m[in.CatalogKey] = l
	}
	c.mu.Unlock()
	l.once.Do(func() { l.cat, l.err = policycue.LoadCatalog(in.Catalog, in.CatalogName) })
	return l.cat, l.err
}

// knownReleases maps the fullsend releases this binary knows to their
// default OpenShell target: itself, when it is a release.
func knownReleases() map[string]string {
	return map[string]string{version.String(): openshell.DefaultOpenShellVersion}
}

// tierSources are the lines that need the agent's compiled tier.
func tierSources(c *compile.Compiled) []bundle.Source {
	var out []bundle.Source
	for _, r := range c.TierWhy {
		if string(r.Tier) == string(c.Tier) {
			out = append(out, bundle.Source{File: r.Pos.File, Line: r.Pos.Line, Column: r.Pos.Column, Reason: r.What + " (needs tier " + string(r.Tier) + ")"})
		}
	}
	return out
}

// reproduce is the command that gives the same diff: git sides by their
// resolved commits, with the flags that change what is compiled.
func reproduce(res *policydiff.Result, args []string, f diffFlags, versionMode bool) string {
	parts := []string{"fullsend", "policy", "diff"}
	if versionMode {
		parts = append(parts, "--base-openshell", f.baseVersion, "--head-openshell", f.headVersion)
	}
	for _, fl := range []struct{ name, value string }{{"--catalog", f.catalog}, {"--provider", f.provider}} {
		if fl.value != "" {
			parts = append(parts, fl.name, shellQuote(fl.value))
		}
	}
	for i, side := range []policydiff.SideRef{res.Base, res.Head} {
		a := args[i]
		if side.Commit != "" {
			a = "git:" + side.Commit
		}
		parts = append(parts, shellQuote(a))
	}
	if f.dir != "." && f.dir != "" {
		parts = append(parts, "--dir", shellQuote(f.dir))
	}
	return strings.Join(parts, " ")
}

func markerOf(dir string, comment bool) string {
	if !comment {
		return ""
	}
	if dir == "" {
		return "."
	}
	return dir
}

// writeMarkdownFile appends to a job summary (GitHub appends step
// summaries) and replaces a comment file atomically.
func writeMarkdownFile(path string, data []byte, appendTo bool) error {
	if !appendTo {
		return atomicfile.Write(path, data, 0o644)
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("--summary-file: %w", err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("--summary-file: %w", err)
	}
	return f.Close()
}
