package prover

// Capability is what the prover knows of one binary: whether it can carry
// data out, whether it can build arbitrary HTTP requests, and whether one
// of its protocols escapes L7 inspection (git's smart HTTP in a CONNECT
// tunnel, ssh, raw TCP). Description is the registry's short name of the
// binary, which l7_bypass_credentialed evidence quotes.
type Capability struct {
	Binary           string `json:"binary"`
	Description      string `json:"description"`
	CanExfiltrate    bool   `json:"can_exfiltrate"`
	CanConstructHTTP bool   `json:"can_construct_http"`
	L7Bypass         bool   `json:"bypasses_l7"`
}

// BypassesL7 reports whether a protocol of the binary escapes L7
// inspection (any protocol marked so, registry.rs:125-128 @ v0.0.111).
func (c Capability) BypassesL7() bool { return c.L7Bypass }

// unknownBinary is what OpenShell assumes of a binary its registry does not
// list: it can exfiltrate and construct HTTP, and bypasses nothing
// (registry.rs:179-187 @ v0.0.111, whose description this repeats).
func unknownBinary(path string) Capability {
	return Capability{Binary: path, Description: "Unknown binary — not in registry", CanExfiltrate: true, CanConstructHTTP: true}
}

// registryCatalog is the binary registry OpenShell v0.0.111 embeds
// (crates/openshell-prover/registry/binaries/<file>.yaml @ v0.0.111, commit
// 20d2e867), as the facts the prover reads: every listed binary can
// exfiltrate; git, nc and ssh bypass L7 and, with them, git constructs no
// HTTP. Each row names the upstream file. registry_test.go decodes the real
// files from ../shared/fixtures and checks the rows and the findings they
// give against them (docs/openshell-release.md: adding a release).
func registryCatalog() []Capability {
	type row struct {
		file, binary, description string
		http, bypass              bool
	}
	rows := []row{
		{"claude.yaml", "/usr/local/bin/claude", "Claude Code CLI — AI coding agent", true, false},
		{"curl.yaml", "/usr/bin/curl", "Command-line HTTP client", true, false},
		{"gh.yaml", "/usr/bin/gh", "GitHub CLI — REST API client for GitHub", true, false},
		{"git.yaml", "/usr/bin/git", "Distributed version control system", false, true},
		{"nc.yaml", "/usr/bin/nc", "Netcat — arbitrary TCP/UDP connections", false, true},
		{"node.yaml", "/usr/local/bin/node", "Node.js runtime — general-purpose JavaScript runtime", true, false},
		{"python3.yaml", "/usr/local/bin/python3.13", "Python interpreter — general-purpose runtime", true, false},
		{"ssh.yaml", "/usr/bin/ssh", "OpenSSH client", false, true},
		{"wget.yaml", "/usr/bin/wget", "Non-interactive network downloader", true, false},
	}
	out := make([]Capability, 0, len(rows))
	for _, r := range rows {
		out = append(out, Capability{Binary: r.binary, Description: r.description, CanExfiltrate: true, CanConstructHTTP: r.http, L7Bypass: r.bypass})
	}
	return out
}

// Registry is a set of binary capabilities keyed by path.
type Registry struct {
	byPath map[string]Capability
}

// NewRegistry returns a registry of caps; a later entry for the same path
// replaces an earlier one, as a later registry file does in OpenShell
// (registry.rs:253-273 @ v0.0.111).
func NewRegistry(caps ...Capability) *Registry {
	r := &Registry{byPath: make(map[string]Capability, len(caps))}
	for _, c := range caps {
		r.byPath[c.Binary] = c
	}
	return r
}

// DefaultRegistry returns OpenShell v0.0.111's registry (registryCatalog).
func DefaultRegistry() *Registry { return NewRegistry(registryCatalog()...) }

// Binaries returns the paths the registry lists, in no particular order.
func (r *Registry) Binaries() []string {
	out := make([]string, 0, len(r.byPath))
	for p := range r.byPath {
		out = append(out, p)
	}
	return out
}

// Lookup returns the capability of a binary path: its entry, else the
// conservative unknown one (get_or_unknown, registry.rs:166-189 @
// v0.0.111). OpenShell also tries entries whose path holds '*' as glob
// patterns; the v0.0.111 registry has none (registry_test.go checks), so
// an exact entry is the only match.
func (r *Registry) Lookup(binary string) Capability {
	if c, ok := r.byPath[binary]; ok {
		return c
	}
	return unknownBinary(binary)
}
