package compile

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/fullsend-ai/agent-sandbox/agentdef"
	"github.com/fullsend-ai/agent-sandbox/policycue"
)

// writeTools are the tools that write files; a rule of one of them scoped
// to a declared output stays below the full tier.
var writeTools = map[string]bool{"Edit": true, "Write": true, "MultiEdit": true, "NotebookEdit": true}

// outputWrite is a write rule resolved against the agent's declared
// outputs: the directory it may write (dir, under output) and the rule the
// runtime pre-approves for it (approve, in Claude Code's absolute //path
// form).
type outputWrite struct {
	rule    agentdef.ToolRule
	dir     string
	output  string
	approve string
}

// deferWrite records a write rule whose tier depends on the declared
// outputs, which the sandbox: blocks (applied after the tools) declare.
func (b *builder) deferWrite(r agentdef.ToolRule) {
	b.pendingWrites = append(b.pendingWrites, r)
}

// resolveWrites decides each deferred write rule once every output is
// declared. A rule scoped to a declared output is a sandbox grant: the
// output directory becomes read_write (Landlock), the runtime pre-approves
// writes under it, and the rule needs the network tier, not full (the tier
// says what the runtime may do without asking, design revision
// 2026-12-01). Any other write rule needs the full tier, as before.
func (b *builder) resolveWrites() {
	for _, r := range b.pendingWrites {
		reason := fmt.Sprintf("tool %s", r.Raw)
		w, ok := b.scopedOutput(r)
		if !ok {
			b.toolDir(b.readWrite, r, reason)
			b.need(policycue.TierFull, r.Pos, "%s", reason+writeScopeHint(r, b.outputs))
			continue
		}
		if _, can := b.cat.Runtimes[b.runtime].OutputFlags[policycue.TierNetwork]; !can {
			b.toolDir(b.readWrite, r, reason)
			b.need(policycue.TierFull, r.Pos, "%s (runtime %s cannot pre-approve writes to one directory below the full tier)", reason, b.runtime)
			continue
		}
		b.readWrite[w.dir] = append(b.readWrite[w.dir], src(r.Pos, reason+" (declared output "+w.output+")"))
		b.need(policycue.TierNetwork, r.Pos, "%s (writes declared output %s: Landlock read_write on %s only, no full tier)", reason, w.output, w.dir)
		b.outputWrites = append(b.outputWrites, w)
	}
}

// scopedOutput resolves a write rule's path to a directory inside a
// declared output. Claude Code reads Read/Edit paths gitignore-style
// (https://code.claude.com/docs/en/permissions, "Read and Edit"): `//p` is
// the absolute path /p, `/p` is relative to the project root, `~/p` to the
// home directory and `p` to the working directory. Only the absolute form
// names a directory the compiler knows (the runner stages the project
// under /sandbox at a path that depends on the job), so the pre-approval
// is always written in the absolute form `//p`. A `/p` rule whose p is a declared output
// is taken as that output, with a warning: Claude Code would read it
// under the project root and never match the output.
func (b *builder) scopedOutput(r agentdef.ToolRule) (outputWrite, bool) {
	abs, ok := absWritePath(r.Path)
	if !ok {
		return outputWrite{}, false
	}
	dir, ok := staticDir(abs)
	if !ok {
		return outputWrite{}, false
	}
	out, ok := outputDir(dir, b.outputs)
	if !ok {
		return outputWrite{}, false
	}
	w := outputWrite{rule: r, dir: dir, output: out, approve: fmt.Sprintf("%s(/%s)", r.Tool, abs)}
	if !strings.HasPrefix(r.Path, "//") {
		b.warnf(r.Pos, "tools", fmt.Sprintf("write %s for the absolute path", w.approve),
			"%s: Claude Code reads a leading / from the project root, not the filesystem root; the runtime pre-approves %s for the declared output %s instead", r.Raw, w.approve, out)
	}
	return w, true
}

// absWritePath is the absolute path a write rule's path names, if it names
// one: `//p` is /p; `/p` counts as /p only when it lies under /sandbox or
// /tmp (checked by outputDir).
func absWritePath(p string) (string, bool) {
	switch {
	case strings.HasPrefix(p, "//"):
		return p[1:], true
	case strings.HasPrefix(p, "/"):
		return p, true
	}
	return "", false
}

// staticDir is the directory an absolute path glob stays under: the
// directory of a file path without a glob (OpenShell creates a missing
// read_write path as a directory, so a file is never one), else the part
// before the first glob, which must end at a directory boundary
// (`/sandbox/out/**` is /sandbox/out; `/sandbox/out*` could match
// /sandbox/outside and names none). A path with `..` names none.
func staticDir(p string) (string, bool) {
	if slices.Contains(strings.Split(p, "/"), "..") {
		return "", false
	}
	i := strings.IndexAny(p, "*?[")
	if i < 0 {
		return path.Dir(path.Clean(p)), true
	}
	prefix := p[:i]
	if !strings.HasSuffix(prefix, "/") {
		return "", false
	}
	return path.Clean(prefix), true
}

// writeScopeHint tells the author of an unscoped write rule how to keep it
// below the full tier, when the agent declares an output.
func writeScopeHint(r agentdef.ToolRule, outputs []agentdef.PathDecl) string {
	if len(outputs) == 0 {
		return ""
	}
	return fmt.Sprintf(" (not scoped to a declared output: %s(/%s/**) would be)", r.Tool, outputs[0].Path)
}
