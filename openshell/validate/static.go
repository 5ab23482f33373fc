package validate

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/fullsend-ai/agent-sandbox/openshell"

	"gopkg.in/yaml.v3"
)

// OpenShell's filesystem limits (crates/openshell-policy/src/lib.rs).
const (
	maxFilesystemPaths = 256
	maxPathBytes       = 4096
)

// checkPolicy runs the semantic checks on a walked policy document.
func (c *checker) checkPolicy(p *obj) {
	if p.has("version") && p.num("version") != 1 {
		// PolicyFile.version is a bare u32 (lib.rs:58 @ v0.0.111) that no
		// load check compares: any other number loads as version 1.
		c.trapf(p.pos("version"), "version", CodeVersion, "write `version: 1`",
			"version must be 1, got %s; OpenShell loads it without checking and applies version 1 semantics", p.str("version"))
	}
	c.checkStaticOmitted(p)
	if fs := p.kids["filesystem_policy"]; fs != nil {
		c.checkFilesystem(fs)
	}
	if ll := p.kids["landlock"]; ll != nil {
		c.checkLandlock(ll)
	}
	if pr := p.kids["process"]; pr != nil {
		c.checkProcess(pr)
	}
	c.checkNetworkPolicies(p)
	c.checkMiddlewares(p)
}

// checkStaticOmitted warns when a static section is left to the runtime:
// `policy set` must repeat the sections exactly as at create, and an omitted
// one means whatever default the image or driver picks.
func (c *checker) checkStaticOmitted(p *obj) {
	for _, s := range []struct{ name, example string }{
		{"filesystem_policy", "filesystem_policy: {include_workdir: true, read_only: [/usr, /lib, /etc], read_write: [/sandbox, /tmp]}"},
		{"landlock", "landlock: {compatibility: best_effort}"},
		{"process", "process: {run_as_user: sandbox, run_as_group: sandbox}"},
	} {
		if pr := p.kids["process"]; s.name == "process" && pr != nil && pr.keys["run_as_user"] == nil && pr.keys["run_as_group"] == nil {
			c.warnf(p.pos(s.name), s.name, CodeStaticOmitted, "write it out, e.g. "+s.example,
				"process sets neither run_as_user nor run_as_group, so the runtime picks the identity")
			continue
		}
		if !p.has(s.name) {
			c.warnf(p.pos(s.name), s.name, CodeStaticOmitted, "write it out, e.g. "+s.example,
				"%s is omitted, so the sandbox gets the runtime's default and `policy set` cannot reproduce it", s.name)
		}
	}
}

func (c *checker) checkLandlock(ll *obj) {
	v := ll.str("compatibility")
	if !ll.has("compatibility") {
		return
	}
	switch v {
	case openshell.LandlockBestEffort, openshell.LandlockHardRequirement:
		return
	}
	c.warnf(ll.pos("compatibility"), ll.sub("compatibility"), CodeLandlock,
		"use best_effort or hard_requirement",
		"unknown landlock compatibility %q is silently treated as best_effort", v)
}

func (c *checker) checkProcess(pr *obj) {
	for _, field := range []string{"run_as_user", "run_as_group"} {
		if !pr.has(field) {
			continue
		}
		v := pr.str(field)
		if v == "" {
			continue // omitted: the compute runtime decides
		}
		if msg := c.identityProblem(v); msg != "" {
			c.errorf(pr.pos(field), pr.sub(field), CodeProcessIdentity, c.identityHint(), "%s %q %s", field, v, msg)
		}
	}
}

// identityProblem explains why v is not a valid sandbox identity for the
// target release ("" when it is valid).
func (c *checker) identityProblem(v string) string {
	if v == "sandbox" {
		return ""
	}
	if v == "root" || v == "0" {
		return "is root, which OpenShell always rejects"
	}
	n, err := strconv.ParseUint(v, 10, 32)
	if err != nil || strings.HasPrefix(v, "+") {
		return "is neither \"sandbox\" nor a numeric id"
	}
	return c.idRangeProblem(n)
}

// idRangeProblem explains why the numeric id n is outside the range the
// target release accepts ("" when it is inside).
func (c *checker) idRangeProblem(n uint64) string {
	switch {
	case c.supports(openshell.FeatureWideProcessIDs):
		if n < 1 || n > 4294967294 {
			return "is outside 1..4294967294"
		}
	case c.supports(openshell.FeatureNumericProcessIDs):
		if n < 1000 || n > 2000000000 {
			return fmt.Sprintf("is outside 1000..2000000000, the range OpenShell %s accepts", c.version)
		}
	default:
		return fmt.Sprintf("is numeric; OpenShell %s accepts only \"sandbox\"", c.version)
	}
	return ""
}

func (c *checker) identityHint() string {
	switch {
	case c.supports(openshell.FeatureWideProcessIDs):
		return `use "sandbox" or a quoted non-root id such as "1000"`
	case c.supports(openshell.FeatureNumericProcessIDs):
		return `use "sandbox" or a quoted id in 1000..2000000000`
	}
	return `use "sandbox"`
}

func (c *checker) checkFilesystem(fs *obj) {
	ro, roNodes := fs.strs("read_only")
	rw, rwNodes := fs.strs("read_write")
	if total := len(ro) + len(rw); total > maxFilesystemPaths {
		c.errorf(fs.node, fs.path, CodeFSTooMany, "grant parent directories instead of many single files",
			"filesystem_policy lists %d paths; OpenShell allows at most %d", total, maxFilesystemPaths)
	}
	for _, l := range []struct {
		name  string
		vals  []string
		nodes []*yaml.Node
	}{{"read_only", ro, roNodes}, {"read_write", rw, rwNodes}} {
		for i, p := range l.vals {
			c.checkFSPath(l.nodes[i], fmt.Sprintf("%s[%d]", fs.sub(l.name), i), l.name, p)
		}
	}
}

// checkFSPath checks path p of the filesystem list field: short enough,
// absolute, no .. component, and not / when writable.
func (c *checker) checkFSPath(n *yaml.Node, path, field, p string) {
	if len(p) > maxPathBytes {
		c.errorf(n, path, CodeFSTooLong, "shorten the path", "path is %d bytes; OpenShell allows at most %d", len(p), maxPathBytes)
		return
	}
	if !strings.HasPrefix(p, "/") {
		c.errorf(n, path, CodeFSRelative, "write an absolute path such as /sandbox/"+strings.TrimPrefix(p, "./"),
			"path %q is not absolute", p)
	}
	if slices.Contains(strings.Split(p, "/"), "..") {
		c.errorf(n, path, CodeFSTraversal, "write the resolved path without ..", "path %q has a .. component", p)
	}
	if field == "read_write" && p != "" && strings.Trim(p, "/") == "" {
		c.errorf(n, path, CodeFSRootWritable, "list the writable directories, e.g. /sandbox and /tmp",
			"read_write %q makes the whole filesystem writable; OpenShell rejects it", p)
	}
}
