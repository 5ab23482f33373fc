package compile

import (
	"fmt"
	"net/url"
	"path"
	"regexp"
	"strings"
	"unicode"

	"gopkg.in/yaml.v3"
)

// Agent Skills limits.
const (
	maxSkillName          = 64
	maxSkillDescription   = 1024
	maxSkillCompatibility = 500
)

// parseSkill decodes a SKILL.md frontmatter.
func parseSkill(d *decoder, doc *document) *Skill {
	dir := path.Dir(doc.file)
	s := &Skill{File: doc.file, Dir: dir}
	d.keyHints = map[string]string{"": "custom data belongs under metadata: (string values)"}
	f := d.fields(doc.root, "", skillKeys)
	d.keyHints = nil
	if v, ok := f["name"]; ok {
		if name, good := d.str(v.value, "name"); good {
			s.Name, s.NamePos = name, d.pos(v.value)
			switch {
			case len(name) == 0 || len(name) > maxSkillName || !skillNameRE.MatchString(name):
				d.errAt(s.NamePos, "name", fmt.Sprintf("invalid skill name %q", name),
					"1-64 lowercase letters, digits and single hyphens, not starting or ending with a hyphen")
			case name != path.Base(dir):
				d.warnAt(s.NamePos, "name", fmt.Sprintf("skill name %q differs from its directory %q", name, path.Base(dir)),
					"the Agent Skills specification wants them equal")
			}
		}
	} else {
		d.errAt(d.pos(doc.root), "name", "missing required field name", "add name: "+path.Base(dir))
	}
	s.Description = requiredDescription(d, doc.root, f, maxSkillDescription)
	if v, ok := f["license"]; ok {
		d.nonEmptyStr(v.value, "license")
	}
	if v, ok := f["compatibility"]; ok {
		if c, good := d.str(v.value, "compatibility"); good && len([]rune(c)) > maxSkillCompatibility {
			d.errAt(d.pos(v.value), "compatibility", fmt.Sprintf("compatibility is %d characters; at most %d allowed", len([]rune(c)), maxSkillCompatibility), "shorten it")
		}
	}
	if v, ok := f["metadata"]; ok {
		d.stringMap(v.value, "metadata")
	}
	for _, k := range []string{"when_to_use", "argument-hint", "model", "context", "agent", "shell"} {
		if v, ok := f[k]; ok {
			d.nonEmptyStr(v.value, k)
		}
	}
	for _, k := range []string{"disable-model-invocation", "user-invocable"} {
		if v, ok := f[k]; ok {
			d.boolean(v.value, k)
		}
	}
	if v, ok := f["effort"]; ok {
		d.enum(v.value, "effort", effortLevels...)
	}
	if v, ok := f["hooks"]; ok {
		d.mapping(v.value, "hooks")
	}
	if v, ok := f["paths"]; ok {
		d.stringList(v.value, "paths", true)
	}
	if v, ok := f["dependencies"]; ok {
		s.Dependencies = d.dependencies(v.value)
	}
	if v, ok := f["policy"]; ok {
		if _, good := d.str(v.value, "policy"); good && d.relPath(v.value, "policy") {
			s.PolicyFile, s.PolicyFilePos = v.value.Value, d.pos(v.value)
		}
	}
	if v, ok := f["sandbox"]; ok {
		s.Sandbox = d.sandbox(v.value, "sandbox")
	}
	if v, ok := f["disallowed-tools"]; ok {
		s.Disallowed, _ = d.toolList(v.value, "disallowed-tools")
	}
	if v, ok := f["allowed-tools"]; ok {
		rules, clean := d.toolList(v.value, "allowed-tools")
		s.AllowedTools = subtractTools(rules, s.Disallowed)
		if clean && len(rules) > 0 && len(s.AllowedTools) == 0 {
			d.errAt(d.pos(v.value), "allowed-tools", "allowed-tools resolve to nothing: every tool is removed by disallowed-tools",
				"remove the disallowed-tools entries that cancel allowed-tools")
		}
	}
	return s
}

// integrityRE is fullsend's mandatory integrity fragment of a URL reference.
var integrityRE = regexp.MustCompile(`^sha256=[0-9a-f]{64}$`)

// dependencies reads fullsend's `dependencies`: references to other skills,
// resolved by fullsend's runner relative to this skill. Each is a skill
// name, a relative path (`../common/x/SKILL.md`, which must stay inside the
// project), or an https URL pinned with `#sha256=<64 hex>`.
func (d *decoder) dependencies(n *yaml.Node) []NameRef {
	items, _ := d.stringList(n, "dependencies", false)
	var out []NameRef
	for _, it := range items {
		v := it.value
		bad := func(msg, hint string) { d.errAt(d.pos(it.node), it.field, msg, hint) }
		switch {
		case strings.HasPrefix(v, "https://"):
			u, err := url.Parse(v)
			if err != nil || u.Host == "" || u.User != nil {
				bad(fmt.Sprintf("invalid dependency URL %q", v), "an https URL without credentials")
				continue
			}
			if !integrityRE.MatchString(u.Fragment) {
				bad(fmt.Sprintf("dependency URL %q has no integrity hash", v), "pin it: append #sha256=<64 lowercase hex digits of the content>")
				continue
			}
		case strings.Contains(v, "://"):
			bad(fmt.Sprintf("dependency %q is not an https URL", v), "use https:// with #sha256=..., a relative path, or a skill name")
			continue
		case strings.Contains(v, "/") || v == "..":
			if strings.HasPrefix(v, "/") || strings.ContainsRune(v, '\\') || strings.ContainsFunc(v, unicode.IsControl) {
				bad(fmt.Sprintf("invalid dependency path %q", v), "a slash-separated path relative to this skill's directory")
				continue
			}
			if j := path.Join(path.Dir(d.file), v); j == ".." || strings.HasPrefix(j, "../") {
				bad(fmt.Sprintf("dependency %q leaves the project", v), "keep local dependencies inside the project")
				continue
			}
		case !skillNameRE.MatchString(v):
			bad(fmt.Sprintf("invalid dependency %q", v), "a skill name (lowercase letters, digits, single hyphens), a relative path, or an https URL with #sha256=...")
			continue
		}
		out = append(out, NameRef{Name: v, Pos: d.pos(it.node)})
	}
	return out
}
