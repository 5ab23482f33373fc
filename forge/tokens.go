package forge

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sync"
)

// Tier is what an agent may do on the forge: read, or read and write.
type Tier string

// Forge tiers.
const (
	TierRead  Tier = "read"
	TierWrite Tier = "write"
)

// TierFromManifest maps a compiled agent tier (read-only, network, full) to
// its forge tier. Only `full` agents write; anything else, including an
// unknown tier, reads only (fail closed).
func TierFromManifest(tier string) Tier {
	if tier == "full" {
		return TierWrite
	}
	return TierRead
}

// ParseTier parses "read" or "write".
func ParseTier(s string) (Tier, error) {
	switch Tier(s) {
	case TierRead, TierWrite:
		return Tier(s), nil
	}
	return "", fmt.Errorf("unknown forge tier %q (want read or write)", s)
}

// Identity is who holds a minted agent token.
type Identity struct {
	Agent string `json:"agent"`
	Tier  Tier   `json:"tier"`
	// Depth is 0 for an agent the runner started and parent depth + 1 for a
	// spawned subagent; 0..MaxDepth.
	Depth int `json:"depth"`
	// Parent is the agent that spawned this one, if any.
	Parent string `json:"parent,omitempty"`
}

// MaxDepth bounds Identity.Depth. Spawn nesting is limited far lower by
// configuration; the bound keeps a token file from naming a depth that is
// negative (below the orchestrator, so its holder could nest deeper than
// the limit) or so large that depth + 1 overflows.
const MaxDepth = 64

// AgentTokenPrefix starts every minted agent token, so the secret scan can
// recognise one in an outgoing body.
const AgentTokenPrefix = "fsa_"

// Errors of the token registry.
var (
	ErrUnknownToken = errors.New("unknown agent token")
	ErrBadAgentName = errors.New("invalid agent name")
	// ErrBadDepth marks an identity whose depth is outside 0..MaxDepth.
	ErrBadDepth = errors.New("spawn depth out of range")
)

var agentNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// ValidAgentName reports whether s is a well-formed agent name: at most 64
// bytes of letters, digits, '.', '_' and '-', starting with a letter or a
// digit (so never "..", a path, a flag or a space). It is the name syntax
// policy compile accepts (Claude Code's lowercase-and-hyphens, and the
// names Claude Code loads beyond it, such as dotnet-framework-4.8-expert).
func ValidAgentName(s string) bool {
	return len(s) <= 64 && agentNameRE.MatchString(s)
}

// Registry maps minted agent tokens to identities. Only the sha256 of each
// token is kept, so neither a heap dump nor a token file holds usable
// credentials. It is safe for concurrent use.
type Registry struct {
	mu     sync.RWMutex
	byHash map[[sha256.Size]byte]Identity
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{byHash: make(map[[sha256.Size]byte]Identity)}
}

// Mint creates a fresh random token for id and returns it. The caller hands
// it to exactly one sandbox and revokes it when the sandbox is gone.
func (r *Registry) Mint(id Identity) (string, error) {
	if !ValidAgentName(id.Agent) {
		return "", fmt.Errorf("minting token for %q: %w", id.Agent, ErrBadAgentName)
	}
	if _, err := ParseTier(string(id.Tier)); err != nil {
		return "", fmt.Errorf("minting token for %s: %w", id.Agent, err)
	}
	if id.Depth < 0 || id.Depth > MaxDepth {
		return "", fmt.Errorf("minting token for %s: depth %d (want 0..%d): %w", id.Agent, id.Depth, MaxDepth, ErrBadDepth)
	}
	var raw [32]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", fmt.Errorf("minting token for %s: %w", id.Agent, err)
	}
	tok := AgentTokenPrefix + base64.RawURLEncoding.EncodeToString(raw[:])
	r.mu.Lock()
	r.byHash[sha256.Sum256([]byte(tok))] = id
	r.mu.Unlock()
	return tok, nil
}

// Revoke forgets a token; later calls with it are refused.
func (r *Registry) Revoke(token string) {
	r.mu.Lock()
	delete(r.byHash, sha256.Sum256([]byte(token)))
	r.mu.Unlock()
}

// Lookup returns the identity a token was minted for. The lookup is by
// sha256, so its timing does not depend on how much of a guess matches.
func (r *Registry) Lookup(token string) (Identity, error) {
	if token == "" {
		return Identity{}, ErrUnknownToken
	}
	h := sha256.Sum256([]byte(token))
	r.mu.RLock()
	id, ok := r.byHash[h]
	r.mu.RUnlock()
	if !ok {
		return Identity{}, ErrUnknownToken
	}
	return id, nil
}

// Len returns the number of live tokens.
func (r *Registry) Len() int {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return len(r.byHash)
}

// TokenFileEntry is one line of a token file: an identity and the sha256 of
// its token, never the token itself.
type TokenFileEntry struct {
	Identity
	SHA256 string `json:"sha256"`
}

// Load adds the entries of a token file (JSON lines of TokenFileEntry) to
// the registry. name is used in error messages.
func (r *Registry) Load(name string, rd io.Reader) error {
	sc := bufio.NewScanner(rd)
	sc.Buffer(make([]byte, 0, 4096), 64*1024)
	line := 0
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 || b[0] == '#' {
			continue
		}
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		var e TokenFileEntry
		if err := dec.Decode(&e); err != nil {
			return fmt.Errorf("%s:%d: %w (hint: one JSON object per line: {\"agent\":...,\"tier\":...,\"sha256\":...})", name, line, err)
		}
		if !ValidAgentName(e.Agent) {
			return fmt.Errorf("%s:%d: field agent: %q: %w", name, line, e.Agent, ErrBadAgentName)
		}
		if _, err := ParseTier(string(e.Tier)); err != nil {
			return fmt.Errorf("%s:%d: field tier: %w", name, line, err)
		}
		if e.Depth < 0 || e.Depth > MaxDepth {
			return fmt.Errorf("%s:%d: field depth: %d (want 0..%d): %w", name, line, e.Depth, MaxDepth, ErrBadDepth)
		}
		sum, err := hex.DecodeString(e.SHA256)
		if err != nil || len(sum) != sha256.Size {
			return fmt.Errorf("%s:%d: field sha256: want 64 hex digits", name, line)
		}
		r.mu.Lock()
		r.byHash[[sha256.Size]byte(sum)] = e.Identity
		r.mu.Unlock()
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("reading %s: %w", name, err)
	}
	return nil
}

// TokenHash returns the hex sha256 of a token, as a token file stores it.
func TokenHash(token string) string {
	h := sha256.Sum256([]byte(token))
	return hex.EncodeToString(h[:])
}

// WriteTokenFile writes a minted token to path with mode 0600, atomically
// (a temporary file in the same directory, then rename), so a sandbox
// mounting it never reads a partial token.
func WriteTokenFile(path, token string) error {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp*")
	if err != nil {
		return fmt.Errorf("writing token file: %w", err)
	}
	tmp := f.Name()
	defer os.Remove(tmp) // no-op after a successful rename
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return fmt.Errorf("writing token file %s: %w", path, err)
	}
	if _, err := f.WriteString(token + "\n"); err != nil {
		f.Close()
		return fmt.Errorf("writing token file %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("writing token file %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("writing token file %s: %w", path, err)
	}
	return nil
}
