package policydiff

import (
	"github.com/fullsend-ai/agent-sandbox/gitrepo"

	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"golang.org/x/mod/semver"

	"github.com/fullsend-ai/agent-sandbox/bundle"
	"github.com/fullsend-ai/agent-sandbox/openshell"
	"github.com/fullsend-ai/agent-sandbox/prover"
)

// VersionFile, at the repository root, pins the fullsend release that
// compiles and reviews the project: the policy-diff templates install the
// base branch's (scaffold.VersionFile).
const VersionFile = ".fullsend-version"

// releaseTag is what the templates accept as the file's first line.
var releaseTag = regexp.MustCompile(`^v[0-9]+\.[0-9]+\.[0-9]+$`)

// maxVersionFile bounds what is read of a side's VersionFile.
const maxVersionFile = 4096

// pin is a side's VersionFile: the release it names ("" without the
// file) and the file's path relative to the project directory; read is
// set for a side that has a repository to hold one (not a bundle).
type pin struct {
	release, file string
	read          bool
}

// parsePin reads the release tag on the first line of a VersionFile.
func parsePin(file string, data []byte) (pin, error) {
	first, _, _ := strings.Cut(string(data), "\n")
	v := strings.TrimSpace(first)
	if !releaseTag.MatchString(v) {
		return pin{}, fmt.Errorf("%s:1: %q is not a fullsend release tag: write one line like v0.1.0 (fullsend init writes it)", file, lit(v))
	}
	return pin{release: v, file: file, read: true}, nil
}

// gitPin reads VersionFile at the root of commit in the repository at top;
// project is the project directory's path in it. A link or anything but a
// regular file there is an error.
func gitPin(ctx context.Context, top, commit, project string) (pin, error) {
	entries, listed, err := gitrepo.Lookup(ctx, top, commit, VersionFile)
	if err != nil || !listed {
		return pin{read: err == nil}, err
	}
	file := relFrom(project, VersionFile)
	if len(entries) != 1 || !entries[0].Mode.IsRegular() {
		return pin{}, fmt.Errorf("%s: not a regular file", file)
	}
	data, err := gitrepo.Blob(ctx, top, entries[0].OID, maxVersionFile)
	if err != nil {
		return pin{}, fmt.Errorf("%s: %w", file, err)
	}
	return parsePin(file, data)
}

// dirPin reads VersionFile at the root of the git working tree holding the
// project directory dir (dir itself outside git).
func dirPin(ctx context.Context, dir string) (pin, error) {
	top := dir
	if t, _, err := gitrepo.RepoPrefix(ctx, dir); err == nil {
		top = t
	}
	root, err := os.OpenRoot(top)
	if err != nil {
		return pin{}, err
	}
	defer root.Close()
	file := VersionFile
	if rel, err := filepath.Rel(dir, filepath.Join(top, VersionFile)); err == nil {
		file = filepath.ToSlash(rel)
	}
	st, err := root.Lstat(VersionFile)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return pin{read: true}, nil
	case err != nil:
		return pin{}, err
	case !st.Mode().IsRegular():
		return pin{}, fmt.Errorf("%s: not a regular file", file)
	}
	f, err := root.Open(VersionFile)
	if err != nil {
		return pin{}, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxVersionFile))
	if err != nil {
		return pin{}, fmt.Errorf("%s: %w", file, err)
	}
	return parsePin(file, data)
}

// relFrom is slash path p (relative to the repository root) relative to
// the directory dir (also from the root).
func relFrom(dir, p string) string {
	rel, err := filepath.Rel(filepath.FromSlash(path.Clean("/"+dir)), filepath.FromSlash(path.Clean("/"+p)))
	if err != nil {
		return p
	}
	return filepath.ToSlash(rel)
}

// target is the OpenShell version a side compiles for: the one asked for,
// else the one the pinned release targets when the caller knows it, else
// "" (the compiler's default).
func (req Request) target(asked string, p pin) string {
	if asked != "" || p.release == "" {
		return asked
	}
	return req.Releases[p.release]
}

// fullsendVersion reports a change of the pinned fullsend release: it
// compiles and reviews the project after this change. A release that goes
// away stops the review of later pull requests and an older one brings
// back what later releases fixed (high); a newer one changes the built-in
// catalog and the checks (medium). The OpenShell target it brings is its
// own row.
func (d *differ) fullsendVersion() {
	b, h := d.opts.basePin, d.opts.headPin
	if !b.read || !h.read || b.release == h.release || d.b.Manifest.Policy == "" {
		return
	}
	c := Change{Action: ActionChange, Kind: "fullsend_version", Before: b.release, After: h.release, order: "0_a"}
	switch {
	case h.release == "":
		c.From = []bundle.Source{{File: b.file, Line: 1, Reason: "fullsend release pin removed"}}
		c.apply(grade{RiskHigh, "", "no fullsend release is pinned: the policy-diff templates stop reviewing later pull requests"})
		d.add(c)
		return
	case b.release != "" && semver.Compare(h.release, b.release) < 0:
		c.apply(grade{RiskHigh, "", "an older fullsend compiles and reviews this project: what later releases fixed in compile and in this review is lost"})
	default:
		c.apply(grade{RiskMedium, "", "another fullsend compiles and reviews later pull requests: its built-in catalog, OpenShell target and checks apply"})
	}
	c.From = []bundle.Source{{File: h.file, Line: 1, Reason: "fullsend release pin"}}
	d.add(c)
}

// openshellVersion reports a change of the OpenShell target, graded by
// what OpenShell then does with the head's policy: a provider credential
// resolved at an endpoint it was not resolved at under the base's version
// (crossing v0.0.103, where OpenShell starts binding credentials to their
// profile's endpoints) is critical; other behaviour that differs is
// medium, and the features that differ are named.
func (d *differ) openshellVersion() {
	bv, hv := d.opts.baseVersion, d.opts.headVersion
	if bv == hv || bv == "" || hv == "" || d.b.Manifest.Policy == "" {
		return
	}
	c := Change{Action: ActionChange, Kind: "openshell_version", Before: bv, After: hv, Risk: RiskInfo, Categories: []string{}, order: "0_b",
		Why: "OpenShell " + bv + " and " + hv + " enforce this policy alike"}
	if d.opts.headPin.release != d.opts.basePin.release && d.opts.headPin.file != "" {
		c.From = []bundle.Source{{File: d.opts.headPin.file, Line: 1, Reason: "fullsend release pin (its OpenShell target)"}}
	}
	if changed := featureChanges(bv, hv); len(changed) > 0 {
		c.apply(grade{RiskMedium, "", "OpenShell " + hv + " enforces the same policy differently than " + bv + ": " + strings.Join(changed, ", ")})
	}
	atBase := prover.BoundEndpoints(d.h.Policy, d.h.Layers, bv)
	for _, name := range sortedKeys(d.hBound) {
		for _, b := range d.hBound[name] {
			if !slices.Contains(atBase[name], b) {
				c.apply(grade{RiskCritical, CatCredentialScope, "under OpenShell " + hv + " provider " + name + "'s credential is sent to " + b.String() +
					", which it is not under " + bv + " (credential binding from " + credentialBindingSince() + ", prover/binding.go)"})
			}
		}
	}
	d.add(c)
}

// featureChanges names the OpenShell features one of the two versions has
// and the other has not, each with the side that has it.
func featureChanges(bv, hv string) []string {
	var out []string
	for _, f := range openshell.Features() {
		bh, hh := openshell.Supports(f, bv), openshell.Supports(f, hv)
		switch {
		case hh && !bh:
			out = append(out, "+"+string(f))
		case bh && !hh:
			out = append(out, "-"+string(f))
		}
	}
	return out
}
