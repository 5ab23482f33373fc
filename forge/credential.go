package forge

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
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

// appearsIn reports whether the token occurs in b, as bytes or once the
// JSON escapes of b are decoded: a JSON text holding "\u0067hs_..." holds
// the token for whoever parses it, and a proxy that decodes and re-encodes
// the body (GitLab's conversion) would write it out plainly. The escapes
// are decoded wherever they occur, in strings, keys or invalid JSON alike.
func (c Credential) appearsIn(b []byte) bool {
	if len(c.secret) == 0 {
		return false
	}
	if bytes.Contains(b, c.secret) {
		return true
	}
	// Without a backslash there is no escape: the decoded text is b.
	return bytes.IndexByte(b, '\\') >= 0 && bytes.Contains(unescapeJSON(b), c.secret)
}

// unescapeJSON decodes every JSON escape sequence in b (\" \\ \/ \b \f
// \n \r \t and \uXXXX, surrogate pairs combined) and keeps every other
// byte, a malformed escape included, as it is.
func unescapeJSON(b []byte) []byte {
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); {
		if b[i] != '\\' || i+1 == len(b) {
			out = append(out, b[i])
			i++
			continue
		}
		if r, ok := jsonSimpleEscape[b[i+1]]; ok {
			out = append(out, r)
			i += 2
			continue
		}
		r, n := jsonUnicodeEscape(b[i:])
		if n == 0 {
			out = append(out, b[i])
			i++
			continue
		}
		out = utf8.AppendRune(out, r)
		i += n
	}
	return out
}

// jsonSimpleEscape maps the character after a backslash to what it stands
// for, for JSON's one-character escapes.
var jsonSimpleEscape = map[byte]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

// jsonUnicodeEscape decodes the \uXXXX escape (or surrogate pair of two)
// at the start of b and returns the rune and the bytes it took; 0 bytes
// when b does not start with one.
func jsonUnicodeEscape(b []byte) (rune, int) {
	r, ok := hex4(b)
	if !ok {
		return 0, 0
	}
	if utf16.IsSurrogate(r) {
		if lo, ok := hex4(b[6:]); ok {
			if pair := utf16.DecodeRune(r, lo); pair != utf8.RuneError {
				return pair, 12
			}
		}
	}
	return r, 6
}

// hex4 parses "\uXXXX" at the start of b.
func hex4(b []byte) (rune, bool) {
	if len(b) < 6 || b[0] != '\\' || b[1] != 'u' {
		return 0, false
	}
	n, err := strconv.ParseUint(string(b[2:6]), 16, 16)
	return rune(n), err == nil
}
