package policycue

import (
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path"
	"slices"
	"sort"
	"strings"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/cuecontext"
	cueerrors "cuelang.org/go/cue/errors"
	"cuelang.org/go/cue/load"
)

//go:embed schema/catalog/*.cue
var builtinCatalog embed.FS

// Tier is an agent's capability tier. Tiers are ordered: read-only < network < full.
type Tier string

// Capability tiers.
const (
	TierReadOnly Tier = "read-only"
	TierNetwork  Tier = "network"
	TierFull     Tier = "full"
)

// Rank orders tiers; an unknown tier ranks above full so it never passes a cap.
func (t Tier) Rank() int {
	switch t {
	case TierReadOnly:
		return 0
	case TierNetwork:
		return 1
	case TierFull:
		return 2
	}
	return 3
}

// Valid reports whether t is one of the three tiers.
func (t Tier) Valid() bool { return t.Rank() < 3 }

// Catalog is the decoded capability catalog: the knowledge the compiler
// applies to agent definitions. It is built from the CUE files embedded in
// the binary unified with an organisation's own.
type Catalog struct {
	Tools      map[string]CatalogTool    `json:"tools"`
	Binaries   map[string]CatalogBinary  `json:"binaries"`
	Profiles   map[string]CatalogProfile `json:"profiles"`
	Runtimes   map[string]CatalogRuntime `json:"runtimes"`
	Backends   map[string]CatalogBackend `json:"backends"`
	Filesystem struct {
		ReadOnly  []string `json:"read_only"`
		ReadWrite []string `json:"read_write"`
	} `json:"filesystem"`
}

// CatalogTool describes one agent tool.
type CatalogTool struct {
	Class       string `json:"class"`
	Tier        Tier   `json:"tier"`
	Description string `json:"description,omitempty"`
	// Source cites the documentation or source the entry follows.
	Source string `json:"source,omitempty"`
	// Aliases lists, per other runtime, its tool names for the same thing.
	Aliases map[string][]string `json:"aliases,omitempty"`
}

// CatalogBinary describes one command agents may run through Bash.
type CatalogBinary struct {
	Paths       []string `json:"paths"`
	Network     bool     `json:"network"`
	Tier        Tier     `json:"tier"`
	Profiles    []string `json:"profiles"`
	Description string   `json:"description,omitempty"`
}

// CatalogProfile is a named bundle of endpoints.
type CatalogProfile struct {
	Description string            `json:"description"`
	Endpoints   []CatalogEndpoint `json:"endpoints"`
	// Intended are requests the profile exists for, in the policy-test
	// syntax without "from BINARY"; the compiler runs the decision engine
	// on them and refuses a policy that would deny one.
	Intended []string `json:"intended,omitempty"`
}

// CatalogEndpoint is one endpoint template of a profile.
type CatalogEndpoint struct {
	Host string `json:"host"`
	// Path routes requests by path to this endpoint (a GraphQL endpoint
	// at /graphql beside REST rules on the same host).
	Path       string        `json:"path,omitempty"`
	Port       int           `json:"port"`
	Protocol   string        `json:"protocol"`
	Access     string        `json:"access,omitempty"`
	Rules      []CatalogRule `json:"rules,omitempty"`
	AllowedIPs []string      `json:"allowed_ips,omitempty"`
	Binaries   []string      `json:"binaries,omitempty"`
	// AllowEncodedSlash lets request paths carry %2F, kept encoded for
	// matching (a GitLab project id such as group%2Fproject).
	AllowEncodedSlash bool `json:"allow_encoded_slash,omitempty"`
}

// CatalogRule is one method/path (and query) allowance, or one GraphQL
// operation allowance (OperationType, OperationName, Fields).
type CatalogRule struct {
	Method        string            `json:"method,omitempty"`
	Path          string            `json:"path,omitempty"`
	Query         map[string]string `json:"query,omitempty"`
	OperationType string            `json:"operation_type,omitempty"`
	OperationName string            `json:"operation_name,omitempty"`
	Fields        []string          `json:"fields,omitempty"`
	// Reads marks a non-GET request that only reads (git-upload-pack).
	Reads bool `json:"reads,omitempty"`
}

// CatalogRuntime is the baseline of one agent runtime.
type CatalogRuntime struct {
	Binaries        []string                   `json:"binaries"`
	State           []string                   `json:"state"`
	Providers       map[string]CatalogProvider `json:"providers"`
	DefaultProvider string                     `json:"default_provider"`
	Flags           map[Tier][]string          `json:"flags"`
	// OutputFlags replace Flags, per tier below full, for an agent whose
	// runtime pre-approves writes to its declared outputs; a runtime with
	// none for a tier cannot hold such writes at that tier.
	OutputFlags map[Tier][]string          `json:"output_flags,omitempty"`
	Env         map[Tier]map[string]string `json:"env,omitempty"`
}

// CatalogProvider maps a model provider to the profiles reaching its API.
type CatalogProvider struct {
	Profiles []string `json:"profiles"`
}

// CatalogBackend holds another harness backend's flags per tier.
type CatalogBackend struct {
	Flags map[Tier][]string `json:"flags"`
}

// ErrCatalog reports an invalid or conflicting catalog.
var ErrCatalog = errors.New("invalid catalog")

// LoadCatalog unifies the built-in catalog with the organisation's .cue files
// in org (nil for none; every file must declare `package catalog`). A value
// that contradicts the built-in catalog or another file is an error naming
// both positions; nothing is silently overridden. orgName prefixes the org
// file names in positions (typically the --catalog directory as given).
func LoadCatalog(org fs.FS, orgName string) (*Catalog, error) {
	const root = "/fullsend/catalog"
	src := catalogSources{root: root, overlay: map[string]load.Source{}}
	if err := src.add(builtinCatalog, "schema/catalog", "builtin"); err != nil {
		return nil, fmt.Errorf("reading built-in catalog: %w", err)
	}
	if org != nil {
		n := len(src.files)
		if err := src.add(org, ".", "org"); err != nil {
			return nil, fmt.Errorf("reading catalog %s: %w", orgName, err)
		}
		if len(src.files) == n {
			return nil, fmt.Errorf("%w: %s holds no .cue files", ErrCatalog, orgName)
		}
	}
	data, err := src.evaluate(orgName)
	if err != nil {
		return nil, err
	}
	var c Catalog
	if err := json.Unmarshal(data, &c); err != nil {
		return nil, fmt.Errorf("%w: decoding: %v", ErrCatalog, err)
	}
	if err := c.check(); err != nil {
		return nil, err
	}
	return &c, nil
}

// catalogSources are the catalog's .cue files as a CUE load overlay under
// root.
type catalogSources struct {
	root    string
	overlay map[string]load.Source
	files   []string
}

// add adds the .cue files of dir in fsys (not its subdirectories) as
// root/display/<name>.
func (cs *catalogSources) add(fsys fs.FS, dir, display string) error {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.IsDir() || path.Ext(e.Name()) != ".cue" {
			continue
		}
		data, err := fs.ReadFile(fsys, path.Join(dir, e.Name()))
		if err != nil {
			return err
		}
		name := path.Join(cs.root, display, e.Name())
		cs.overlay[name] = load.FromBytes(data)
		cs.files = append(cs.files, name)
	}
	return nil
}

// evaluate loads the files as one package, unifies it with #Catalog
// (closed: a misspelled field is an error), requires it concrete and
// returns it as JSON; errors name the files as catalogError does.
func (cs *catalogSources) evaluate(orgName string) ([]byte, error) {
	sort.Strings(cs.files)
	cfg := &load.Config{Dir: cs.root, Overlay: cs.overlay, Package: "catalog"}
	insts := load.Instances(cs.files, cfg)
	if len(insts) != 1 {
		return nil, fmt.Errorf("%w: expected one package, got %d", ErrCatalog, len(insts))
	}
	if err := insts[0].Err; err != nil {
		return nil, catalogError(err, cs.root, orgName)
	}
	v := cuecontext.New().BuildInstance(insts[0])
	// The catalog is closed: a misspelled field in an organisation file is an error.
	v = v.LookupPath(cue.MakePath(cue.Def("#Catalog"))).Unify(v)
	if err := v.Validate(cue.Concrete(true)); err != nil {
		return nil, catalogError(err, cs.root, orgName)
	}
	data, err := v.MarshalJSON()
	if err != nil {
		return nil, catalogError(err, cs.root, orgName)
	}
	return data, nil
}

// catalogError renders CUE errors with positions mapped back to the names a
// user recognises: builtin:<file> and <orgName>/<file>.
func catalogError(err error, root, orgName string) error {
	var lines []string
	for _, e := range cueerrors.Errors(err) {
		msg := cueerrors.Details(e, nil)
		msg = strings.ReplaceAll(msg, root+"/builtin/", "builtin:")
		msg = strings.ReplaceAll(msg, root+"/org/", strings.TrimSuffix(orgName, "/")+"/")
		lines = append(lines, strings.TrimSpace(msg))
	}
	sort.Strings(lines)
	return fmt.Errorf("%w:\n  %s", ErrCatalog, strings.Join(lines, "\n  "))
}

// check verifies the references inside the catalog that CUE's schema cannot:
// every profile a binary or provider names exists.
func (c *Catalog) check() error {
	var problems []string
	for _, name := range slices.Sorted(maps.Keys(c.Binaries)) {
		for _, p := range c.Binaries[name].Profiles {
			if _, ok := c.Profiles[p]; !ok {
				problems = append(problems, fmt.Sprintf("binaries.%s.profiles: unknown profile %q", name, p))
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(c.Runtimes)) {
		rt := c.Runtimes[name]
		if _, ok := rt.Providers[rt.DefaultProvider]; !ok {
			problems = append(problems, fmt.Sprintf("runtimes.%s.default_provider: %q is not one of its providers", name, rt.DefaultProvider))
		}
		for _, prov := range slices.Sorted(maps.Keys(rt.Providers)) {
			for _, p := range rt.Providers[prov].Profiles {
				if _, ok := c.Profiles[p]; !ok {
					problems = append(problems, fmt.Sprintf("runtimes.%s.providers.%s: unknown profile %q", name, prov, p))
				}
			}
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("%w:\n  %s", ErrCatalog, strings.Join(problems, "\n  "))
	}
	return nil
}
