package prover

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// The registry files are OpenShell's, copied (registry/README.md).
//
//go:embed registry/binaries/*.yaml
var registryFS embed.FS

// Capability describes what one binary can do, mirroring BinaryCapability
// (crates/openshell-prover/src/registry.rs:112-152 @ v0.0.111).
type Capability struct {
	Binary           string     `yaml:"binary"`
	Description      string     `yaml:"description"`
	Protocols        []Protocol `yaml:"protocols"`
	Spawns           []string   `yaml:"spawns"`
	CanExfiltrate    bool       `yaml:"can_exfiltrate"`
	ExfilMechanism   string     `yaml:"exfil_mechanism"`
	CanConstructHTTP bool       `yaml:"can_construct_http"`
}

// Protocol is one wire protocol of a binary (BinaryProtocolDef,
// registry.rs:39-51 @ v0.0.111).
type Protocol struct {
	Name        string   `yaml:"name"`
	Transport   string   `yaml:"transport"`
	Description string   `yaml:"description"`
	BypassesL7  bool     `yaml:"bypasses_l7"`
	Actions     []Action `yaml:"actions"`
}

// Action is one action of a protocol; Type is read, write or destructive
// (anything else reads as read, ActionType::from_str, registry.rs:75-83).
type Action struct {
	Name        string `yaml:"name"`
	Type        string `yaml:"type"`
	Description string `yaml:"description"`
}

// BypassesL7 reports whether any protocol bypasses L7 inspection
// (registry.rs:125-128 @ v0.0.111).
func (c Capability) BypassesL7() bool {
	for _, p := range c.Protocols {
		if p.BypassesL7 {
			return true
		}
	}
	return false
}

// CanWrite reports whether any protocol has a write or destructive action,
// or the binary constructs HTTP (registry.rs:104-133 @ v0.0.111).
func (c Capability) CanWrite() bool {
	for _, p := range c.Protocols {
		for _, a := range p.Actions {
			if a.Type == "write" || a.Type == "destructive" {
				return true
			}
		}
	}
	return c.CanConstructHTTP
}

// Registry is a set of binary capability descriptors keyed by path.
type Registry struct {
	byPath map[string]Capability
	globs  []string // registry paths holding '*', sorted
}

// DefaultRegistry returns OpenShell v0.0.111's embedded registry.
func DefaultRegistry() *Registry {
	r, err := LoadRegistry(registryFS, "registry/binaries")
	if err != nil {
		// The embedded files are tested; a failure here is a build defect.
		panic(fmt.Sprintf("prover: embedded registry: %v", err))
	}
	return r
}

// LoadRegistry reads every *.yaml file of dir in fsys as a binary
// descriptor (load_binary_registry_from_dir, registry.rs:253-273 @
// v0.0.111: a later file with the same binary replaces an earlier one).
func LoadRegistry(fsys fs.FS, dir string) (*Registry, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, fmt.Errorf("reading binary registry %s: %w", dir, err)
	}
	r := &Registry{byPath: map[string]Capability{}}
	for _, e := range entries {
		if e.IsDir() || path.Ext(e.Name()) != ".yaml" {
			continue
		}
		name := path.Join(dir, e.Name())
		data, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, fmt.Errorf("reading binary descriptor %s: %w", name, err)
		}
		var c Capability
		if err := yaml.Unmarshal(data, &c); err != nil {
			return nil, fmt.Errorf("parsing binary descriptor %s: %w", name, err)
		}
		if c.Binary == "" {
			return nil, fmt.Errorf("binary descriptor %s: field binary is required", name)
		}
		r.byPath[c.Binary] = c
	}
	for p := range r.byPath {
		if strings.Contains(p, "*") {
			r.globs = append(r.globs, p)
		}
	}
	sort.Strings(r.globs)
	return r, nil
}

// Lookup returns the descriptor of a binary path: the exact entry, else the
// first registry glob that matches, else the conservative "unknown"
// descriptor, which can exfiltrate and construct HTTP and bypasses nothing
// (get_or_unknown, registry.rs:166-189 @ v0.0.111). OpenShell iterates a
// HashMap for the glob step; we try globs in sorted order.
func (r *Registry) Lookup(binary string) Capability {
	if c, ok := r.byPath[binary]; ok {
		return c
	}
	for _, g := range r.globs {
		if globPattern(g).MatchString(binary) {
			return r.byPath[g]
		}
	}
	return Capability{Binary: binary, Description: "Unknown binary — not in registry", CanExfiltrate: true, CanConstructHTTP: true}
}

// globPattern translates a glob crate pattern with default MatchOptions
// ('*' also matches '/', registry.rs:173-175 @ v0.0.111) to a regexp.
func globPattern(g string) *regexp.Regexp {
	var b strings.Builder
	b.WriteString("^")
	for _, r := range g {
		switch r {
		case '*':
			b.WriteString(".*")
		case '?':
			b.WriteString(".")
		default:
			b.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	b.WriteString("$")
	return regexp.MustCompile(b.String())
}
