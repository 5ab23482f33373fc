package suggest

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
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
	if p.tierTo != "" {
		src, err := p.source(p.opts.Agent.File)
		if err != nil {
			return err
		}
		if err := src.replaceScalar(get(src.sandbox(), "tier"), p.tierTo); err != nil {
			return err
		}
	}
	p.res.Files = map[string][]byte{}
	var diff strings.Builder
	paths := make([]string, 0, len(p.sources))
	for path, src := range p.sources {
		if src.changed() {
			paths = append(paths, path)
		}
	}
	sort.Strings(paths)
	for _, path := range paths {
		src := p.sources[path]
		out := src.render()
		p.res.Files[path] = out
		old, err := fs.ReadFile(p.opts.Project, path)
		if err != nil {
			return err
		}
		ud := difflib.UnifiedDiff{A: difflib.SplitLines(string(old)), B: difflib.SplitLines(string(out)),
			FromFile: "a/" + path, ToFile: "b/" + path, Context: 3}
		text, err := difflib.GetUnifiedDiffString(ud)
		if err != nil {
			return fmt.Errorf("diff of %s: %w", path, err)
		}
		diff.WriteString(text)
	}
	p.res.Patch = diff.String()
	return nil
}

// edit records the insertions of one suggestion in src and sets its line.
func (p *planner) edit(src *source, s *Suggestion) error {
	switch s.Change {
	case "add-rule":
		e, err := src.entryAt(s.YAMLPath)
		if err != nil {
			return err
		}
		rules := get(e.node, "rules")
		if rules == nil {
			return fmt.Errorf("%s:%d: the endpoint has no rules list", src.path, src.fileLine(e.node))
		}
		prefix, err := src.itemPrefix(rules)
		if err != nil {
			return err
		}
		at := src.lastLine(rules)
		src.insert(at, prefix+scalar(s.Value))
		s.Line = at
	case "add-binary":
		e, err := src.entryAt(s.YAMLPath)
		if err != nil {
			return err
		}
		if bins := get(e.node, "binaries"); bins != nil {
			prefix, err := src.itemPrefix(bins)
			if err != nil {
				return err
			}
			at := src.lastLine(bins)
			src.insert(at, prefix+scalar(s.Value))
			s.Line = at
			s.Rules = nil
			return nil
		}
		ind := src.keyIndent(e.node)
		lines := []string{ind + "binaries:"}
		for _, b := range append(append([]string(nil), s.Rules...), s.Value) {
			lines = append(lines, ind+"  - "+scalar(b))
		}
		at := src.lastLine(e.node)
		src.insert(at, lines...)
		s.Line = at
	case "add-endpoint":
		return p.editEndpoint(src, s)
	default:
		return fmt.Errorf("unknown change %q", s.Change)
	}
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

// editEndpoint appends an endpoint item to sandbox.endpoints, creating the
// list (or the sandbox: block) when the file has none.
func (p *planner) editEndpoint(src *source, s *Suggestion) error {
	host, port, err := net.SplitHostPort(s.Value)
	if err != nil {
		return err
	}
	body := []string{"host: " + scalar(host), "port: " + port, "protocol: rest"}
	if s.Provisional {
		body[0] += "  # provisional: paths unknown (denied at L4); narrow to rules"
		body = append(body, "access: read-only")
	} else {
		body = append(body, "rules:")
		for _, r := range s.Rules {
			body = append(body, "  - "+scalar(r))
		}
	}
	if len(s.binaries) > 0 {
		body = append(body, "binaries:")
		for _, b := range s.binaries {
			body = append(body, "  - "+scalar(b))
		}
	}
	item := func(prefix string) []string {
		pad := strings.Repeat(" ", len(prefix))
		out := []string{prefix + body[0]}
		for _, l := range body[1:] {
			out = append(out, pad+l)
		}
		return out
	}
	sb := src.sandbox()
	switch {
	case sb == nil:
		at := src.close // after the last frontmatter line
		src.insert(at, append([]string{"sandbox:", "  endpoints:"}, item("    - ")...)...)
		s.Line = at
	case get(sb, "endpoints") == nil:
		if sb.Kind != yaml.MappingNode {
			return fmt.Errorf("%s:%d: sandbox: is not a mapping", src.path, src.fileLine(sb))
		}
		ind := src.keyIndent(sb)
		at := src.lastLine(sb)
		src.insert(at, append([]string{ind + "endpoints:"}, item(ind+"  - ")...)...)
		s.Line = at
	default:
		seq := get(sb, "endpoints")
		prefix, err := src.itemPrefix(seq)
		if err != nil {
			return err
		}
		at := src.lastLine(seq)
		src.insert(at, item(prefix)...)
		s.Line = at
	}
	return nil
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
	modes := map[string]os.FileMode{}
	for _, path := range sortedKeys(res.Files) {
		fi, err := root.Lstat(filepath.FromSlash(path))
		if err != nil {
			return fmt.Errorf("writing %s: %w", path, err)
		}
		if !fi.Mode().IsRegular() {
			return fmt.Errorf("writing %s: not a regular file", path)
		}
		modes[path] = fi.Mode().Perm()
	}
	for _, path := range sortedKeys(res.Files) {
		if err := atomicfile.WriteIn(root, filepath.FromSlash(path), res.Files[path], modes[path]); err != nil {
			return fmt.Errorf("writing %s: %w", path, err)
		}
	}
	return nil
}

func sortedKeys(m map[string][]byte) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
