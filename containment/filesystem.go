package containment

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/fullsend-ai/agent-sandbox/openshell"
)

// The filesystem and process half of the proof. OpenShell gives each
// read_only and read_write path to Landlock as a path-beneath rule, which
// grants the whole tree under it, so a child path is covered by a parent
// path of at least its access that is the same directory or an ancestor.

// checkFilesystem proves every read_only and read_write path of the child
// in the parent, and include_workdir; a violation names the path as orig
// (the child before substitution) writes it. include_workdir adds workdir
// to read_write on either side (landlock.rs:137-143 @ v0.0.111).
func checkFilesystem(c, p *openshell.Policy, orig *openshell.FilesystemPolicy, workdir string) []Violation {
	cf, pf := c.FilesystemPolicy, p.FilesystemPolicy
	if cf == nil {
		return nil
	}
	if pf == nil {
		pf = &openshell.FilesystemPolicy{}
	}
	prw := slices.Clone(pf.ReadWrite)
	if pf.IncludeWorkdir && workdir != "" {
		prw = append(prw, workdir)
	}
	var out []Violation
	if cf.IncludeWorkdir && !pf.IncludeWorkdir && (workdir == "" || !underAny(workdir, prw)) {
		out = append(out, Violation{Kind: KindProcess, Element: "filesystem_policy.include_workdir",
			Reason: "the child may write its working directory and the parent may not"})
	}
	for i, d := range cf.ReadOnly {
		if !underAny(d, pf.ReadOnly) && !underAny(d, prw) {
			out = append(out, fsViolation(orig, orig.ReadOnly[i], openshell.AccessReadOnly, fmt.Sprintf("filesystem_policy.read_only[%d]", i)))
		}
	}
	for i, d := range cf.ReadWrite {
		if !underAny(d, prw) {
			out = append(out, fsViolation(orig, orig.ReadWrite[i], openshell.AccessReadWrite, fmt.Sprintf("filesystem_policy.read_write[%d]", i)))
		}
	}
	return out
}

func fsViolation(cf *openshell.FilesystemPolicy, d, access, element string) Violation {
	return Violation{Kind: KindFilesystem, Path: d, Access: access, Element: element, From: cf.Sources[d],
		Reason: "no " + access + " path of the parent holds it" + readOnlyNote(access)}
}

func readOnlyNote(access string) string {
	if access == openshell.AccessReadWrite {
		return " (a read_only path of the parent does not cover a write)"
	}
	return ""
}

// underAny reports whether d is one of dirs or lies under one of them.
func underAny(d string, dirs []string) bool {
	d = path.Clean(d)
	for _, p := range dirs {
		p = path.Clean(p)
		if d == p || p == "/" || strings.HasPrefix(d, p+"/") {
			return true
		}
	}
	return false
}

// checkProcess compares the settings that make a sandbox weaker: the user
// and group the agent runs as, and whether Landlock is required.
func checkProcess(c, p *openshell.Policy) []Violation {
	var out []Violation
	cu, cg := processOf(c)
	pu, pg := processOf(p)
	if cu != pu || cg != pg {
		out = append(out, Violation{Kind: KindProcess, Element: "process",
			Reason: fmt.Sprintf("the child runs as %s:%s, the parent as %s:%s", cu, cg, pu, pg)})
	}
	if landlockOf(p) == openshell.LandlockHardRequirement && landlockOf(c) != openshell.LandlockHardRequirement {
		out = append(out, Violation{Kind: KindProcess, Element: "landlock.compatibility",
			Reason: "the parent requires Landlock (hard_requirement), the child runs without it where the host lacks it (" + landlockOf(c) + ")"})
	}
	return out
}

func processOf(p *openshell.Policy) (string, string) {
	if p.Process == nil {
		return "", ""
	}
	return p.Process.RunAsUser, p.Process.RunAsGroup
}

// landlockOf is the policy's Landlock compatibility; any value but
// hard_requirement is best effort to OpenShell.
func landlockOf(p *openshell.Policy) string {
	if p.Landlock != nil && p.Landlock.Compatibility == openshell.LandlockHardRequirement {
		return openshell.LandlockHardRequirement
	}
	return openshell.LandlockBestEffort
}
