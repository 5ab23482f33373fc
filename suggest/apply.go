package suggest

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/pmezard/go-difflib/difflib"
	"gopkg.in/yaml.v3"

	"github.com/fullsend-ai/agent-sandbox/cienv"
	"github.com/fullsend-ai/agent-sandbox/internal/atomicfile"
)

// apply turns the suggestions into insertions in their files, renders the
// patched files and the unified diff. A suggestion whose file cannot be
// edited becomes a manual finding for its denials.
func (p *planner) apply() error {
	for _, src := range p.sources {
		src.edits, src.replaced = nil, nil
	}
	p.editAll()
	if err := p.editTier(); err != nil {
		return err
	}
	return p.renderPatch()
}

// editAll records the insertions of every suggestion; one whose file
// cannot be edited is dropped, its denials listed as manual.
func (p *planner) editAll() {
	var kept []*Suggestion
	for _, s := range p.sugs {
		src, err := p.source(s.File)
		if err == nil {
			err = p.edit(src, s)
		}
		if err != nil {
			for _, d := range s.denials {
				p.manual(d, "cannot edit the frontmatter: "+err.Error(), "apply "+s.Change+" "+s.Value+" by hand")
			}
			continue
		}
		kept = append(kept, s)
	}
	p.sugs = kept
}

// editTier records the replacement of the agent's sandbox.tier when the
// patch raises it.
func (p *planner) editTier() error {
	if p.tierTo == "" {
		return nil
	}
	src, err := p.source(p.opts.Agent.File)
	if err != nil {
		return err
	}
	return src.replaceScalar(get(src.sandbox(), "tier"), p.tierTo)
}

// renderPatch renders the changed files into the result's Files and their
// unified diff, in path order, into its Patch.
func (p *planner) renderPatch() error {
	p.res.Files = map[string][]byte{}
	var diff strings.Builder
	for _, path := range p.changedPaths() {
		out := p.sources[path].render()
		p.res.Files[path] = out
		text, err := p.unifiedDiff(path, out)
		if err != nil {
			return err
		}
		diff.WriteString(text)
	}
	p.res.Patch = diff.String()
	return nil
}

// changedPaths are the paths of the sources with edits, sorted.
func (p *planner) changedPaths() []string {
	paths := make([]string, 0, len(p.sources))
	for path, src := range p.sources {
		if src.changed() {
			paths = append(paths, path)
		}
	}
	sort.Strings(paths)
	return paths
}

// unifiedDiff is the diff, with three lines of context, from the
// project's file at path to out.
func (p *planner) unifiedDiff(path string, out []byte) (string, error) {
	old, err := fs.ReadFile(p.opts.Project, path)
	if err != nil {
		return "", err
	}
	ud := difflib.UnifiedDiff{A: difflib.SplitLines(string(old)), B: difflib.SplitLines(string(out)),
		FromFile: "a/" + path, ToFile: "b/" + path, Context: 3}
	text, err := difflib.GetUnifiedDiffString(ud)
	if err != nil {
		return "", fmt.Errorf("diff of %s: %w", path, err)
	}
	return text, nil
}

// edit records the insertions of one suggestion in src and sets its line.
func (p *planner) edit(src *source, s *Suggestion) error {
	switch s.Change {
	case "add-rule":
		return src.addRule(s)
	case "add-binary":
		return src.addBinary(s)
	case "add-endpoint":
		return src.addEndpoint(s)
	}
	return fmt.Errorf("unknown change %q", s.Change)
}

// addRule appends the rule to its endpoint's rules list.
func (src *source) addRule(s *Suggestion) error {
	e, err := src.entryAt(s.YAMLPath)
	if err != nil {
		return err
	}
	rules := get(e.node, "rules")
	if rules == nil {
		return fmt.Errorf("%s:%d: the endpoint has no rules list", src.path, src.fileLine(e.node))
	}
	at, err := src.appendItem(rules, scalar(s.Value))
	if err != nil {
		return err
	}
	s.Line = at
	return nil
}

// addBinary appends the binary to its endpoint's binaries list, or gives
// the endpoint one: the binaries already allowed (s.Rules), then it.
func (src *source) addBinary(s *Suggestion) error {
	e, err := src.entryAt(s.YAMLPath)
	if err != nil {
		return err
	}
	if bins := get(e.node, "binaries"); bins != nil {
		at, err := src.appendItem(bins, scalar(s.Value))
		if err != nil {
			return err
		}
		s.Line, s.Rules = at, nil
		return nil
	}
	ind := src.keyIndent(e.node)
	bins := append(append([]string(nil), s.Rules...), s.Value)
	s.Line = src.lastLine(e.node)
	src.insert(s.Line, append([]string{ind + "binaries:"}, blockItems(ind, bins)...)...)
	return nil
}

// entryAt finds sandbox.endpoints[i] from a yaml path
// "sandbox.endpoints[i].field".
func (s *source) entryAt(yp string) (*endpointEntry, error) {
	rest, ok := strings.CutPrefix(yp, "sandbox.endpoints[")
	idx, _, ok2 := strings.Cut(rest, "]")
	i, err := strconv.Atoi(idx)
	eps := s.endpoints()
	if !ok || !ok2 || err != nil || i < 0 || i >= len(eps) {
		return nil, fmt.Errorf("%s: no %s", s.path, yp)
	}
	return &eps[i], nil
}

// addEndpoint appends an endpoint item to sandbox.endpoints, creating the
// list (or the sandbox: block) when the file has none.
func (src *source) addEndpoint(s *Suggestion) error {
	body, err := endpointBody(s)
	if err != nil {
		return err
	}
	sb := src.sandbox()
	switch {
	case sb == nil:
		s.Line = src.close // after the last frontmatter line
		src.insert(s.Line, append([]string{"sandbox:", "  endpoints:"}, itemLines("    - ", body)...)...)
	case get(sb, "endpoints") == nil:
		if sb.Kind != yaml.MappingNode {
			return fmt.Errorf("%s:%d: sandbox: is not a mapping", src.path, src.fileLine(sb))
		}
		ind := src.keyIndent(sb)
		s.Line = src.lastLine(sb)
		src.insert(s.Line, append([]string{ind + "endpoints:"}, itemLines(ind+"  - ", body)...)...)
	default:
		at, err := src.appendItem(get(sb, "endpoints"), body...)
		if err != nil {
			return err
		}
		s.Line = at
	}
	return nil
}

// endpointBody is the lines of a new endpoint item, without its dash: the
// destination, then its rules or provisional read-only access, then the
// binaries it declares.
func endpointBody(s *Suggestion) ([]string, error) {
	host, port, err := net.SplitHostPort(s.Value)
	if err != nil {
		return nil, err
	}
	body := []string{"host: " + scalar(host), "port: " + port, "protocol: rest"}
	if s.Provisional {
		body[0] += "  # provisional: paths unknown (denied at L4); narrow to rules"
		body = append(body, "access: read-only")
	} else {
		body = append(append(body, "rules:"), blockItems("", s.Rules)...)
	}
	if len(s.binaries) > 0 {
		body = append(append(body, "binaries:"), blockItems("", s.binaries)...)
	}
	return body, nil
}

// appendItem appends an item of body lines to the block sequence seq and
// returns the file line it goes after.
func (src *source) appendItem(seq *yaml.Node, body ...string) (int, error) {
	prefix, err := src.itemPrefix(seq)
	if err != nil {
		return 0, err
	}
	at := src.lastLine(seq)
	src.insert(at, itemLines(prefix, body)...)
	return at, nil
}

// itemLines are the lines of a sequence item: prefix ("<indent>- ")
// before body's first line, as many spaces before the others.
func itemLines(prefix string, body []string) []string {
	pad := strings.Repeat(" ", len(prefix))
	out := []string{prefix + body[0]}
	for _, l := range body[1:] {
		out = append(out, pad+l)
	}
	return out
}

// blockItems are the items of a block list under a key indented by
// indent, one scalar a line.
func blockItems(indent string, items []string) []string {
	out := make([]string, 0, len(items))
	for _, it := range items {
		out = append(out, indent+"  - "+scalar(it))
	}
	return out
}

// ErrInCI refuses --write in a CI job: suggestions come from logs the
// agent influences, so a human applies them (day2-loop: "Decisions already
// taken").
var ErrInCI = errors.New("refusing to write suggestions in CI: they are evidence for a human; apply the patch locally and review it with policy diff")

// InCI reports whether getenv describes a CI job: GitHub Actions or GitLab
// CI (cienv.Detect), or any CI that sets CI=true.
func InCI(getenv func(string) string) bool {
	if cienv.Detect(getenv).IsCI() {
		return true
	}
	return getenv != nil && strings.EqualFold(strings.TrimSpace(getenv("CI")), "true")
}

// Write applies the result's patched files under dir (the project root),
// each atomically and through an os.Root, so that no link leads out of the
// project. It refuses in CI (getenv, see InCI) before touching anything.
func Write(dir string, res *Result, getenv func(string) string) error {
	if InCI(getenv) {
		return ErrInCI
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	paths := slices.Sorted(maps.Keys(res.Files))
	modes, err := fileModes(root, paths)
	if err != nil {
		return err
	}
	for _, path := range paths {
		if err := atomicfile.WriteIn(root, filepath.FromSlash(path), res.Files[path], modes[path]); err != nil {
			return fmt.Errorf("writing %s: %w", path, err)
		}
	}
	return nil
}

// fileModes are the permissions of the files at paths under root, each
// of which must be a regular file (a link is refused, not followed).
func fileModes(root *os.Root, paths []string) (map[string]os.FileMode, error) {
	modes := map[string]os.FileMode{}
	for _, path := range paths {
		fi, err := root.Lstat(filepath.FromSlash(path))
		if err != nil {
			return nil, fmt.Errorf("writing %s: %w", path, err)
		}
		if !fi.Mode().IsRegular() {
			return nil, fmt.Errorf("writing %s: not a regular file", path)
		}
		modes[path] = fi.Mode().Perm()
	}
	return modes, nil
}
