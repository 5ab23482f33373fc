package bundle

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"sort"
)

// ManifestFile is the name of the policy manifest inside the policies directory.
const ManifestFile = "manifest.json"

// ManifestSchema identifies the manifest format.
const ManifestSchema = "https://fullsend.dev/schemas/policy-manifest/v1"

// Manifest describes a compiled project: one entry per agent, with the
// digests that pin every policy and every source file. Its own sha256 is the
// `dev.fullsend.policies.digest` image annotation, so a signature over the
// image pins exactly these policies.
type Manifest struct {
	Schema           string                   `json:"schema"`
	OpenShellVersion string                   `json:"openshell_version"`
	Agents           map[string]ManifestAgent `json:"agents"`
	// Profiles pins the project's OpenShell provider profile files that
	// agents attach (ManifestAgent.Providers), sorted by path. Each path is
	// relative to the policies directory and names a file directly in its
	// profiles/ subdirectory (profiles/NAME.yaml, .yml or .json): the file
	// travels with the policies and the manifest digest pins it.
	Profiles []SourceFile `json:"profiles,omitempty"`
	// Catalog is the organisation catalog directory the bundle was
	// compiled with (`--catalog`), slash-separated and relative to the
	// project root, so that every later command that compiles or checks
	// the project uses it too (CatalogIn). Only a directory inside the
	// project is recorded (RecordCatalog); "" for none.
	Catalog string `json:"catalog,omitempty"`
}

// ManifestAgent is the manifest entry of one compiled agent.
type ManifestAgent struct {
	// Policy is the policy file name relative to the policies directory.
	Policy       string `json:"policy"`
	PolicySHA256 string `json:"policy_sha256"`
	// Source is the agent definition, relative to the project root.
	Source  string       `json:"source"`
	Sources []SourceFile `json:"sources"`
	// Runtime is the agent runtime: claude or opencode.
	Runtime string `json:"runtime"`
	Model   string `json:"model,omitempty"`
	// Tier is the capability tier: read-only, network or full.
	Tier   string   `json:"tier"`
	Skills []string `json:"skills,omitempty"`
	// Spawns lists the subagents this agent may start through Agent(...).
	Spawns []string `json:"spawns,omitempty"`
	// SpawnWidening lists what the subagents it spawns may hold beyond its
	// own policy, as its sandbox.spawn-widening declares it: "AGENT network
	// HOST", "AGENT filesystem PATH" or "AGENT process"; every other grant
	// of a subagent was proved contained in this agent's policy.
	SpawnWidening []string `json:"spawn_widening,omitempty"`
	// Placeholders lists the placeholders still open in the policy, to be
	// resolved by the runner from the CI environment.
	Placeholders []string `json:"placeholders,omitempty"`
	// RuntimeFlags holds the command-line flags per backend derived from the
	// tier (claude, opencode, codex, gemini): defense in depth on top of the policy.
	RuntimeFlags map[string][]string `json:"runtime_flags"`
	// RuntimeEnv holds environment variables per backend derived from the
	// tier, for runtimes configured through the environment (opencode).
	RuntimeEnv map[string]map[string]string `json:"runtime_env,omitempty"`
	// Provider is the model provider whose API the policy reaches.
	Provider string `json:"provider,omitempty"`
	// Outputs are the sandbox paths the runner downloads after a run.
	Outputs []string `json:"outputs,omitempty"`
	// Providers lists the OpenShell providers (Providers v2) the agent's
	// sandbox attaches, in attachment order: the order the compiler composed
	// their `_provider_<name>` layers in. Empty: none.
	Providers []ProviderRef `json:"providers,omitempty"`
}

// ProviderRef is one provider an agent's sandbox attaches: an OpenShell
// provider named Name whose type is the provider profile Profile. Exactly
// one of Builtin and File says where the profile comes from.
type ProviderRef struct {
	// Name is the provider's name on the gateway; the layer OpenShell
	// composes for it is keyed `_provider_<Name>` (sanitized, suffixed
	// _2, _3... on a collision). The compiler defaults it to Profile.
	Name string `json:"name"`
	// Profile is the profile id: the provider's `--type`.
	Profile string `json:"profile"`
	// Builtin names a profile of OpenShell's built-in catalog at the
	// manifest's openshell_version.
	Builtin bool `json:"builtin,omitempty"`
	// File is a project profile: a path of Manifest.Profiles (relative to
	// the policies directory), imported into the gateway before the
	// provider is created.
	File string `json:"file,omitempty"`
	// Credentials are the environment variables whose values in the job
	// become the provider's credentials, each under its own name
	// (`--credential NAME`, the value in the environment). Empty: the
	// profile's credentials[].env_vars (the first one set of each).
	Credentials []string `json:"credentials,omitempty"`
}

// SourceFile pins one input file by digest.
type SourceFile struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
}

// Encode renders the manifest deterministically (sorted keys, two-space
// indent, trailing newline).
func (m *Manifest) Encode() ([]byte, error) {
	data, err := encodeIndented(m)
	if err != nil {
		return nil, fmt.Errorf("encoding manifest: %w", err)
	}
	return data, nil
}

// encodeIndented renders v as the bundle's JSON files are written: two-space
// indentation, HTML characters as themselves, a final newline. These are the
// bytes json.Encoder writes with SetIndent and SetEscapeHTML(false); the
// indentation is done by json.Indent, which sizes its output once, where the
// encoder's indentation buffer would double its way up to a provenance.json
// of several megabytes.
func encodeIndented(v any) ([]byte, error) {
	var compact bytes.Buffer
	enc := json.NewEncoder(&compact)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, compact.Bytes(), "", "  "); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// AgentNames returns the agent names in sorted order.
func (m *Manifest) AgentNames() []string {
	names := make([]string, 0, len(m.Agents))
	for n := range m.Agents {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// ReadManifest reads and decodes manifest.json from a policies directory and
// returns it with the sha256 of its exact bytes; its errors wrap ErrManifest.
// It checks no file against the manifest: use Open for that.
func ReadManifest(policies fs.FS) (*Manifest, string, error) {
	data, err := fs.ReadFile(policies, ManifestFile)
	if err != nil {
		return nil, "", fmt.Errorf("%w: %w", ErrManifest, err)
	}
	m, err := DecodeManifest(data)
	if err != nil {
		return nil, "", err
	}
	return m, SHA256Hex(data), nil
}

// DecodeManifest decodes manifest.json's bytes strictly: unknown fields,
// trailing content and another schema are errors (wrapping ErrManifest).
func DecodeManifest(data []byte) (*Manifest, error) {
	var m Manifest
	if err := decodeStrict(data, &m); err != nil {
		return nil, fmt.Errorf("%w: decoding %s: %w", ErrManifest, ManifestFile, err)
	}
	if m.Schema != ManifestSchema {
		return nil, fmt.Errorf("%w: %s: schema %q, want %q", ErrManifest, ManifestFile, m.Schema, ManifestSchema)
	}
	if m.Catalog != "" && (!fs.ValidPath(m.Catalog) || m.Catalog == ".") {
		return nil, fmt.Errorf("%w: %s: catalog %q is not a directory inside the project", ErrManifest, ManifestFile, m.Catalog)
	}
	return &m, nil
}

// RecordCatalog is the Manifest.Catalog of the catalog directory
// catalogDir for the project in projectDir: its slash path relative to the
// project, or "" when there is none or it is not inside the project (a
// recorded path never leads out of the project it is read from).
func RecordCatalog(projectDir, catalogDir string) string {
	if catalogDir == "" {
		return ""
	}
	root, err1 := filepath.Abs(projectDir)
	cat, err2 := filepath.Abs(catalogDir)
	if err1 != nil || err2 != nil {
		return ""
	}
	rel, err := filepath.Rel(root, cat)
	rel = filepath.ToSlash(rel)
	if err != nil || rel == "." || !fs.ValidPath(rel) {
		return ""
	}
	return rel
}

// CatalogIn is the recorded catalog directory as a path from the project
// directory projectDir ("" when none is recorded).
func (m *Manifest) CatalogIn(projectDir string) string {
	if m == nil || m.Catalog == "" {
		return ""
	}
	return filepath.Join(projectDir, filepath.FromSlash(m.Catalog))
}

// decodeStrict decodes one JSON value into v, refusing unknown fields and
// anything after the value but white space.
func decodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("content after the JSON value")
	}
	return nil
}

// SHA256Hex returns the lowercase hex sha256 of data.
func SHA256Hex(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}
