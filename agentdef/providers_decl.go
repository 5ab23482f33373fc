package agentdef

import (
	"fmt"
	"regexp"

	"gopkg.in/yaml.v3"
)

// ProviderDecl is one entry of `sandbox.providers`: an OpenShell provider
// profile the sandbox is composed with (Providers v2).
type ProviderDecl struct {
	// Profile is the profile id: a built-in profile of the target release
	// or the project's profiles/<id>.yaml.
	Profile string
	// Name is the provider's name, which names its layer
	// (_provider_<name>); the profile id when not given.
	Name string
	// Credentials are the job's environment variables whose values become
	// the provider's credentials; empty: the profile's own env_vars.
	Credentials []string
	Pos         Pos
}

// envNameRE is an environment variable name (#EnvName).
var envNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// providers reads `sandbox.providers`: a list of OpenShell provider profile
// ids (Providers v2), each a built-in profile of the target release or a
// project profile profiles/<id>.yaml, or mappings {profile, name,
// credentials}. Which one a profile is, and whether it exists, is the
// compiler's to decide (providers.go): it knows the target release and
// reads the project. Here: the syntax OpenShell's normalize_profile_id
// accepts (lowercase kebab-case, profiles.rs:1472-1480 @ v0.0.111) and no
// provider name twice (a second provider of one name cannot be created,
// so the layer the tests composed would not exist).
func (d *decoder) providers(n *yaml.Node, name string) []ProviderDecl {
	if n.Kind != yaml.SequenceNode {
		d.errAt(d.pos(n), name, fmt.Sprintf("want a list of provider profiles, got a %s", kindName(n)), "write providers: [github] or providers: [{profile: github, credentials: [GITHUB_TOKEN]}]")
		return nil
	}
	var out []ProviderDecl
	seen := map[string]Pos{}
	for i, e := range n.Content {
		p, ok := d.provider(e, fieldIndex(name, i))
		if !ok {
			continue
		}
		if first, dup := seen[p.Name]; dup {
			d.errAt(p.Pos, fieldIndex(name, i), fmt.Sprintf("provider %q is named twice (first at line %d)", p.Name, first.Line),
				"name each provider once; attach a profile twice under two names with {profile: ID, name: NAME}")
			continue
		}
		seen[p.Name] = p.Pos
		out = append(out, p)
	}
	return out
}

// provider reads one entry: a profile id, or a mapping.
func (d *decoder) provider(n *yaml.Node, name string) (ProviderDecl, bool) {
	p := ProviderDecl{Pos: d.pos(n)}
	if n.Kind == yaml.MappingNode {
		return d.providerMapping(n, name)
	}
	s, ok := d.str(n, name)
	if !ok || !d.profileID(n, name, s) {
		return p, false
	}
	p.Profile, p.Name = s, s
	return p, true
}

// providerMapping reads {profile, name, credentials}.
func (d *decoder) providerMapping(n *yaml.Node, name string) (ProviderDecl, bool) {
	p := ProviderDecl{Pos: d.pos(n)}
	before := d.nerr
	f := d.fields(n, name, providerRefKeys)
	v, ok := f["profile"]
	if !ok {
		d.errAt(d.pos(n), fieldPath(name, "profile"), "missing required field profile", "write {profile: github}")
		return p, false
	}
	if s, good := d.str(v.value, fieldPath(name, "profile")); good && d.profileID(v.value, fieldPath(name, "profile"), s) {
		p.Profile, p.Name = s, s
	}
	if v, ok := f["name"]; ok {
		if s, good := d.ident(v.value, fieldPath(name, "name")); good {
			p.Name = s
		}
	}
	if v, ok := f["credentials"]; ok {
		p.Credentials = d.credentials(v.value, fieldPath(name, "credentials"))
	}
	return p, d.nerr == before
}

// credentials reads a provider's list of environment variable names,
// keeping the valid ones.
func (d *decoder) credentials(n *yaml.Node, name string) []string {
	var out []string
	items, _ := d.stringList(n, name, false)
	for _, it := range items {
		if !envNameRE.MatchString(it.value) {
			d.errAt(d.pos(it.node), it.field, fmt.Sprintf("invalid environment variable name %q", it.value),
				"name the job's environment variable that holds the secret, such as GITHUB_TOKEN (never the secret itself)")
			continue
		}
		out = append(out, it.value)
	}
	return out
}

// profileID checks a profile id's syntax.
func (d *decoder) profileID(n *yaml.Node, name, s string) bool {
	if identRE.MatchString(s) {
		return true
	}
	d.errAt(d.pos(n), name, fmt.Sprintf("invalid provider profile id %q", s),
		"a profile id is lowercase kebab-case, such as github or fullsend-github-ro (a project profile is profiles/<id>.yaml)")
	return false
}
