package forge

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// Credential is the forge token the proxy holds. It never renders: String,
// GoString, MarshalJSON and Format all print a redaction marker.
type Credential struct {
	secret []byte
}

const redacted = "[REDACTED]"

// NewCredential wraps a token, trimming surrounding whitespace (token files
// often end with a newline). An empty token is an error.
func NewCredential(token string) (Credential, error) {
	t := strings.TrimSpace(token)
	if t == "" {
		return Credential{}, errors.New("forge token is empty")
	}
	if strings.ContainsAny(t, "\r\n\x00 ") {
		return Credential{}, errors.New("forge token contains whitespace or control characters")
	}
	return Credential{secret: []byte(t)}, nil
}

// CredentialFromEnv reads the forge token from an environment variable.
func CredentialFromEnv(name string) (Credential, error) {
	v, ok := os.LookupEnv(name)
	if !ok {
		return Credential{}, fmt.Errorf("forge token: environment variable %s is not set", name)
	}
	c, err := NewCredential(v)
	if err != nil {
		return Credential{}, fmt.Errorf("forge token from $%s: %w", name, err)
	}
	return c, nil
}

// CredentialFromFile reads the forge token from a file (at most 16 KiB).
func CredentialFromFile(path string) (Credential, error) {
	f, err := os.Open(path)
	if err != nil {
		return Credential{}, fmt.Errorf("forge token: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, 16<<10+1))
	if err != nil {
		return Credential{}, fmt.Errorf("forge token: reading %s: %w", path, err)
	}
	if len(b) > 16<<10 {
		return Credential{}, fmt.Errorf("forge token: %s is larger than 16 KiB", path)
	}
	c, err := NewCredential(string(b))
	if err != nil {
		return Credential{}, fmt.Errorf("forge token from %s: %w", path, err)
	}
	return c, nil
}

// IsZero reports whether no token is held.
func (c Credential) IsZero() bool { return len(c.secret) == 0 }

// String implements fmt.Stringer without revealing the token.
func (c Credential) String() string { return redacted }

// GoString implements fmt.GoStringer without revealing the token.
func (c Credential) GoString() string { return redacted }

// MarshalJSON implements json.Marshaler without revealing the token.
func (c Credential) MarshalJSON() ([]byte, error) { return json.Marshal(redacted) }

// Format implements fmt.Formatter so no verb reveals the token.
func (c Credential) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, redacted) }

// reveal returns the token for the one place that needs it: the upstream
// request's authorization header.
func (c Credential) reveal() string { return string(c.secret) }

// appearsIn reports whether the token occurs in b.
func (c Credential) appearsIn(b []byte) bool {
	return len(c.secret) > 0 && bytes.Contains(b, c.secret)
}
