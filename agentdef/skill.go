package agentdef

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
	d.keyHints, d.lenient = skillKeyHints, true
	f := d.fields(doc.root, "", skillKeys)
	d.keyHints, d.lenient = nil, false
	if v, ok := f["name"]; ok {
		d.skillName(s, v)
	} else {
		d.skillNameFromDir(s, doc.root)
	}
	s.Description = requiredDescription(d, doc.root, f)
	if n := len([]rune(s.Description)); n > maxSkillDescription {
		d.warnAt(d.pos(f["description"].value), "description",
			fmt.Sprintf("description is %d characters; the Agent Skills specification allows %d", n, maxSkillDescription),
			"shorten it: runtimes may truncate it")
	}
	d.checkFields(f, skillChecks)
	if v, ok := f["dependencies"]; ok {
		s.Dependencies = d.dependencies(v.value)
	}
	if v, ok := f["policy"]; ok {
		d.skillPolicy(s, v)
	}
	if v, ok := f["sandbox"]; ok {
		s.Sandbox = d.sandbox(v.value, "sandbox")
	}
	d.skillTools(s, f)
	return s
}

// skillPolicy reads policy, the skill's policy fragment file.
func (d *decoder) skillPolicy(s *Skill, v field) {
	if _, good := d.str(v.value, "policy"); good && d.relPath(v.value, "policy") {
		s.PolicyFile, s.PolicyFilePos = v.value.Value, d.pos(v.value)
	}
}

// isSkillName reports whether s is an Agent Skills name: 1-64 lowercase
// letters, digits and single hyphens.
func isSkillName(s string) bool {
	return len([]rune(s)) <= maxSkillName && skillNameRE.MatchString(s)
}

// skillKeyHints explain unknown skill fields: an agent's tools field, which
// a skill spells allowed-tools (the runtimes ignore tools: the skill
// pre-approves nothing), and custom data, which belongs under metadata.
var skillKeyHints = map[string]string{
	"tools": "a skill pre-approves tools with allowed-tools",
	"":      "custom data belongs under metadata: (string values)",
}

// skillChecks check the skill fields the compiler does not read, in the
// order they are reported.
var skillChecks = []fieldCheck{
	{"license", checkNonEmpty},
	{"compatibility", checkCompatibility},
	{"metadata", checkMetadata},
	{"when_to_use", checkNonEmpty},
	{"argument-hint", checkNonEmpty},
	{"model", checkNonEmpty},
	{"context", checkNonEmpty},
	{"agent", checkNonEmpty},
	{"shell", checkNonEmpty},
	{"disable-model-invocation", checkBoolean},
	{"user-invocable", checkBoolean},
	{"effort", checkEnum(effortLevels...)},
	{"hooks", checkMapping},
	{"paths", checkStringList},
}

// skillName reads the skill's name: the Agent Skills name syntax, and (a
// warning) the same as its directory's name.
//
// A name that is not an Agent Skills name is a display name
// (`name: Plugin Settings`, anthropics/claude-code
// plugins/plugin-dev/skills/plugin-settings/SKILL.md): Claude Code loads
// the skill, names it after its directory and shows the frontmatter name
// only as its display name (loadSkillsFromSkillsDir passes `skillName =
// entry.name`, the directory, to createSkillCommand; see
// skillNameFromDir), so an agent's `skills:` names the directory. The
// skill is identified by its directory here too, with a warning, as for a
// missing name.
func (d *decoder) skillName(s *Skill, v field) {
	name, good := d.str(v.value, "name")
	if !good {
		return
	}
	s.Name, s.NamePos = name, d.pos(v.value)
	switch {
	case strings.TrimSpace(name) == "" || strings.ContainsFunc(name, unicode.IsControl) || strings.Contains(name, "/"):
		d.errAt(s.NamePos, "name", fmt.Sprintf("invalid skill name %q", name),
			"1-64 lowercase letters, digits and single hyphens, not starting or ending with a hyphen")
	case !isSkillName(name):
		d.skillNamedAfterDir(s, s.NamePos, fmt.Sprintf("skill name %q is not an Agent Skills name but a display name", name),
			"write name: %s (the Agent Skills specification wants 1-64 lowercase letters, digits and single hyphens)")
	case name != path.Base(s.Dir):
		d.warnAt(s.NamePos, "name", fmt.Sprintf("skill name %q differs from its directory %q", name, path.Base(s.Dir)),
			"the Agent Skills specification wants them equal")
	}
}

// skillNameFromDir names a skill without a name field after its directory,
// with a warning. Claude Code does the same: loadSkillsFromSkillsDir
// (src/skills/loadSkillsDir.ts, read in a public copy of Claude Code's
// source) names every skill `entry.name`, its directory, and uses the
// frontmatter name only as the displayed name. The Agent Skills
// specification requires name, hence the warning.
func (d *decoder) skillNameFromDir(s *Skill, root *yaml.Node) {
	d.skillNamedAfterDir(s, d.pos(root), "no name field", "add name: %s (the Agent Skills specification requires it)")
}

// skillNamedAfterDir names s after its directory, as Claude Code does, with
// a warning that starts with why and a hint (a format taking the name) to
// write that name; an error when the directory's name cannot be a name.
func (d *decoder) skillNamedAfterDir(s *Skill, p Pos, why, hint string) {
	base := path.Base(s.Dir)
	if strings.TrimSpace(base) == "" || strings.ContainsFunc(base, unicode.IsControl) {
		s.Name = ""
		d.errAt(p, "name", why+": the skill has no usable name", "add name: my-skill and put SKILL.md in a directory of that name")
		return
	}
	s.Name, s.NamePos = base, p
	hint = fmt.Sprintf(hint, base)
	if !isSkillName(base) {
		hint = "add a name of 1-64 lowercase letters, digits and single hyphens and rename the directory to match (the Agent Skills specification requires it)"
	}
	d.warnAt(p, "name", fmt.Sprintf("%s: the skill is named %q after its directory, as Claude Code names it", why, base), hint)
}

// checkMetadata checks the skill's metadata: a mapping, whose values the
// Agent Skills specification wants to be strings. Claude Code never reads
// metadata (parseSkillFrontmatterFields in src/skills/loadSkillsDir.ts has no
// metadata field), so a list or mapping value (K-Dense-AI's
// `trigger-keywords: [...]`) is a warning: it is ignored. A number or
// boolean stays an error (`want a string`), as in the CUE input schema
// (policycue/schema/input/skill.cue, metadata?: {[string]: string | [...] |
// {...}}).
func checkMetadata(d *decoder, v field, name string) {
	if !d.mapping(v.value, name) {
		return
	}
	for i := 0; i+1 < len(v.value.Content); i += 2 {
		k, val := v.value.Content[i], v.value.Content[i+1]
		if val.Kind == yaml.SequenceNode || val.Kind == yaml.MappingNode {
			d.warnAt(d.pos(val), fieldPath(name, k.Value),
				fmt.Sprintf("metadata value is a %s, not a string: it is ignored (Claude Code ignores metadata; the Agent Skills specification wants strings)", kindName(val)),
				"write it as a string, or move it into the skill's body")
			continue
		}
		d.str(val, fieldPath(name, k.Value))
	}
}

// checkCompatibility checks the length of compatibility.
func checkCompatibility(d *decoder, v field, name string) {
	if c, good := d.str(v.value, name); good && len([]rune(c)) > maxSkillCompatibility {
		d.errAt(d.pos(v.value), name, fmt.Sprintf("compatibility is %d characters; at most %d allowed", len([]rune(c)), maxSkillCompatibility), "shorten it")
	}
}

// skillTools resolves allowed-tools against disallowed-tools.
func (d *decoder) skillTools(s *Skill, f map[string]field) {
	if v, ok := f["disallowed-tools"]; ok {
		s.Disallowed, _ = d.toolList(v.value, "disallowed-tools")
	}
	v, ok := f["allowed-tools"]
	if !ok {
		return
	}
	rules, clean := d.toolList(v.value, "allowed-tools")
	s.AllowedTools = subtractTools(rules, s.Disallowed)
	if clean && len(rules) > 0 && len(s.AllowedTools) == 0 {
		d.errAt(d.pos(v.value), "allowed-tools", "allowed-tools resolve to nothing: every tool is removed by disallowed-tools",
			"remove the disallowed-tools entries that cancel allowed-tools")
	}
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
		if msg, hint := d.checkDependency(it.value); msg != "" {
			d.errAt(d.pos(it.node), it.field, msg, hint)
			continue
		}
		out = append(out, NameRef{Name: it.value, Pos: d.pos(it.node)})
	}
	return out
}

// checkDependency returns what is wrong with dependency v, with a hint; an
// empty message when it is well-formed.
func (d *decoder) checkDependency(v string) (msg, hint string) {
	switch {
	case strings.HasPrefix(v, "https://"):
		return checkDependencyURL(v)
	case strings.Contains(v, "://"):
		return fmt.Sprintf("dependency %q is not an https URL", v), "use https:// with #sha256=..., a relative path, or a skill name"
	case strings.Contains(v, "/") || v == "..":
		return d.checkDependencyPath(v)
	case !skillNameRE.MatchString(v):
		return fmt.Sprintf("invalid dependency %q", v), "a skill name (lowercase letters, digits, single hyphens), a relative path, or an https URL with #sha256=..."
	}
	return "", ""
}

// checkDependencyURL checks an https dependency: no credentials, pinned with
// an integrity hash.
func checkDependencyURL(v string) (msg, hint string) {
	u, err := url.Parse(v)
	if err != nil || u.Host == "" || u.User != nil {
		return fmt.Sprintf("invalid dependency URL %q", v), "an https URL without credentials"
	}
	if !integrityRE.MatchString(u.Fragment) {
		return fmt.Sprintf("dependency URL %q has no integrity hash", v), "pin it: append #sha256=<64 lowercase hex digits of the content>"
	}
	return "", ""
}

// checkDependencyPath checks a relative path dependency: slash-separated,
// and inside the project.
func (d *decoder) checkDependencyPath(v string) (msg, hint string) {
	if strings.HasPrefix(v, "/") || strings.ContainsRune(v, '\\') || strings.ContainsFunc(v, unicode.IsControl) {
		return fmt.Sprintf("invalid dependency path %q", v), "a slash-separated path relative to this skill's directory"
	}
	if j := path.Join(path.Dir(d.file), v); j == ".." || strings.HasPrefix(j, "../") {
		return fmt.Sprintf("dependency %q leaves the project", v), "keep local dependencies inside the project"
	}
	return "", ""
}
