package agentdef

import (
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/fullsend-ai/agent-sandbox/agentdef/projectfile"
)

// fileKind is what a discovered file defines.
type fileKind int

const (
	kindAgent fileKind = iota + 1
	kindSkill
)

// formatAuto marks agents/ files whose dialect is decided by their content.
const formatAuto Format = "auto"

// layout is one place definitions live in a project.
type layout struct {
	// root is the directory the layout scans; pattern is relative to it.
	root, pattern string
	kind          fileKind
	format        Format
}

// layouts lists every supported location. Claude Code scans
// .claude/agents recursively; so do we, for agents/ as well.
var layouts = []layout{
	{root: "agents", pattern: "**/*.md", kind: kindAgent, format: formatAuto},
	{root: ".claude/agents", pattern: "**/*.md", kind: kindAgent, format: FormatClaude},
	{root: ".opencode/agent", pattern: "**/*.md", kind: kindAgent, format: FormatOpenCode},
	{root: ".opencode/agents", pattern: "**/*.md", kind: kindAgent, format: FormatOpenCode},
	{root: "skills", pattern: "*/*", kind: kindSkill},
	{root: ".claude/skills", pattern: "*/*", kind: kindSkill},
	{root: ".opencode/skill", pattern: "*/*", kind: kindSkill},
	{root: ".opencode/skills", pattern: "*/*", kind: kindSkill},
	{root: ".agents/skills", pattern: "*/*", kind: kindSkill},
}

// candidate is one discovered definition file.
type candidate struct {
	path   string
	kind   fileKind
	format Format
}

// excluded reports whether a path below a layout root is opted out: any
// segment starting with '_' or '.', and README.md files (any case). These
// are documentation, drafts or disabled definitions; everything else must
// parse.
func excluded(rel string) bool {
	for _, seg := range strings.Split(rel, "/") {
		if strings.HasPrefix(seg, "_") || strings.HasPrefix(seg, ".") {
			return true
		}
	}
	return strings.EqualFold(path.Base(rel), "README.md")
}

// discover finds every agent and skill definition in fsys: it walks each
// layout directory (fs.WalkDir never follows links) and matches paths with
// doublestar patterns. Symbolic links are never followed; see
// linkDiagnostics for which ones are errors.
func discover(fsys fs.FS) ([]candidate, Diagnostics, map[string][]string) {
	dc := &discovery{fsys: fsys, variants: map[string][]string{}}
	for _, l := range layouts {
		dc.scan(l)
	}
	sort.Slice(dc.out, func(i, j int) bool { return dc.out[i].path < dc.out[j].path })
	return dc.out, dc.diags, dc.variants
}

// discovery collects what discover finds.
type discovery struct {
	fsys     fs.FS
	out      []candidate
	diags    Diagnostics
	variants map[string][]string // skill directory name -> nested SKILL.md files
}

// scan walks one layout's root directory, if it exists; a root that is a
// symbolic link is judged, never followed.
func (dc *discovery) scan(l layout) {
	sub := l.root
	fi, err := fs.Lstat(dc.fsys, sub)
	if err != nil {
		return
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		dc.diags = append(dc.diags, linkDiagnostics(dc.fsys, sub)...)
		return
	}
	if !fi.IsDir() {
		return
	}
	walkErr := fs.WalkDir(dc.fsys, sub, func(p string, de fs.DirEntry, err error) error {
		return dc.visit(l, p, de, err)
	})
	if walkErr != nil {
		dc.diags = append(dc.diags, Diagnostic{Pos: Pos{File: sub, Line: 1, Column: 1}, Severity: SeverityError,
			Message: fmt.Sprintf("reading %s: %v", sub, walkErr), Hint: "check the directory's permissions"})
	}
}

// visit handles one entry of a layout's walk.
func (dc *discovery) visit(l layout, p string, de fs.DirEntry, err error) error {
	if err != nil {
		dc.diags = append(dc.diags, Diagnostic{Pos: Pos{File: p, Line: 1, Column: 1}, Severity: SeverityError,
			Message: fmt.Sprintf("reading %s: %v", p, err), Hint: "check the permissions"})
		return nil
	}
	if p == l.root {
		return nil
	}
	rel := strings.TrimPrefix(p, l.root+"/")
	depth := strings.Count(rel, "/") + 1
	switch {
	case excluded(rel):
		if de.IsDir() {
			return fs.SkipDir
		}
	case de.Type()&fs.ModeSymlink != 0:
		dc.link(l, p, depth)
	case de.IsDir():
		return dc.dir(l, p, depth)
	default:
		dc.file(l, p, rel)
	}
	return nil
}

// link judges a symbolic link at depth in the layout where it could lead
// to definitions. Agents: any link could. Skills: the skill directory
// itself or its SKILL.md.
func (dc *discovery) link(l layout, p string, depth int) {
	if l.kind == kindAgent || depth == 1 || strings.EqualFold(path.Base(p), "SKILL.md") {
		dc.diags = append(dc.diags, linkDiagnostics(dc.fsys, p)...)
	}
}

// dir handles a directory at depth in the layout: fs.SkipDir for a skill's
// resources and for a name that is not printable text.
func (dc *discovery) dir(l layout, p string, depth int) error {
	if l.kind == kindSkill && depth >= 2 {
		dc.skillResources(p, depth)
		return fs.SkipDir
	}
	if dc.unprintable(p) {
		return fs.SkipDir
	}
	return nil
}

// skillResources handles a directory of a skill's own resources; a SKILL.md
// in them is a variant (fullsend: skills/<name>/<forge>/SKILL.md) that only
// a harness selects. Say so rather than skip it silently.
func (dc *discovery) skillResources(p string, depth int) {
	if depth != 2 {
		return
	}
	if fi, err := fs.Stat(dc.fsys, p+"/SKILL.md"); err == nil && fi.Mode().IsRegular() {
		dc.variants[path.Base(path.Dir(p))] = append(dc.variants[path.Base(path.Dir(p))], p+"/SKILL.md")
		dc.diags = append(dc.diags, Diagnostic{Pos: Pos{File: p + "/SKILL.md", Line: 1, Column: 1}, Severity: SeverityWarning,
			Message: "nested SKILL.md (a skill variant) is not compiled; agents get " + path.Dir(p) + "/SKILL.md",
			Hint:    "copy the variant your agents run with to " + path.Dir(p) + "/SKILL.md"})
	}
}

// file records a regular file that matches the layout's pattern; a skill
// file must be named SKILL.md exactly.
func (dc *discovery) file(l layout, p, rel string) {
	if match, _ := doublestar.Match(l.pattern, rel); !match {
		return
	}
	if l.kind == kindSkill && path.Base(p) != "SKILL.md" {
		if strings.EqualFold(path.Base(p), "SKILL.md") {
			dc.diags = append(dc.diags, Diagnostic{Pos: Pos{File: p, Line: 1, Column: 1}, Severity: SeverityError,
				Message: fmt.Sprintf("skill file named %q", path.Base(p)), Hint: "name it SKILL.md (upper case), as the Agent Skills specification requires"})
		}
		return
	}
	if dc.unprintable(p) {
		return
	}
	dc.out = append(dc.out, candidate{path: p, kind: l.kind, format: l.format})
}

// unprintable reports (as an error) a directory to be scanned or a
// definition file whose name is not printable text (projectfile.CheckName). Nothing
// under such a name is read: its path would go into the generated policy's
// header, the manifest and every diagnostic.
func (dc *discovery) unprintable(p string) bool {
	err := projectfile.CheckName(path.Base(p))
	if err == nil {
		return false
	}
	dc.diags = append(dc.diags, Diagnostic{Pos: Pos{File: projectfile.Quote(p), Line: 1, Column: 1}, Severity: SeverityError,
		Message: fmt.Sprintf("%s: %v", projectfile.Quote(p), err),
		Hint:    "rename it to printable characters: a line break or format character in a path can end a YAML comment or a CI log line"})
	return true
}

// linkDiagnostics judges a symbolic link where definitions could be. A
// relative link to a place inside the project that is itself scanned (the
// common `.claude/skills -> ../skills`) is an alias: it is skipped, and the
// definitions are read once through their real path. Any other link is an
// error: it could pull in files from outside the project that the manifest
// would pin under a misleading path, or definitions nothing else reads.
func linkDiagnostics(fsys fs.FS, p string) Diagnostics {
	pos := Pos{File: p, Line: 1, Column: 1}
	target, err := fs.ReadLink(fsys, p)
	if err != nil {
		return Diagnostics{{Pos: pos, Severity: SeverityError, Message: "symbolic link that cannot be read: " + err.Error(),
			Hint: "replace the link with the files it points to"}}
	}
	resolved := path.Clean(path.Join(path.Dir(p), target))
	if path.IsAbs(target) || resolved == ".." || strings.HasPrefix(resolved, "../") {
		return Diagnostics{{Pos: pos, Severity: SeverityError, Message: fmt.Sprintf("symbolic link to %s leaves the project; it is not followed", target),
			Hint: "copy the definitions into the project"}}
	}
	if scanned(resolved) {
		return nil
	}
	return Diagnostics{{Pos: pos, Severity: SeverityError, Message: fmt.Sprintf("symbolic link to %s is not followed", resolved),
		Hint: "move the definitions into agents/ or skills/, or rename the link to start with _ to exclude it"}}
}

// scanned reports whether a project path is a layout's root or inside a
// layout, not excluded.
func scanned(p string) bool {
	for _, l := range layouts {
		if p == l.root || strings.HasPrefix(p, l.root+"/") {
			if rel := strings.TrimPrefix(strings.TrimPrefix(p, l.root), "/"); rel == "" || !excluded(rel) {
				return true
			}
		}
	}
	return false
}
