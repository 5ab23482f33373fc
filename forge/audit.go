package forge

import (
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"sync"
	"time"
)

// Decisions recorded in the audit log.
const (
	DecisionAllow = "allow"
	DecisionDeny  = "deny"
	DecisionError = "error"
)

// AuditEntry is one line of the audit log. It never holds a credential:
// headers are not recorded, and every field an agent controls (method,
// path, target, reason, which may quote a query) is redacted when it holds
// a credential, before it is truncated.
type AuditEntry struct {
	Time      time.Time `json:"time"`
	Service   string    `json:"service"`
	RequestID string    `json:"request_id,omitempty"`
	Agent     string    `json:"agent,omitempty"`
	Method    string    `json:"method,omitempty"`
	Path      string    `json:"path,omitempty"`
	Route     RouteID   `json:"route,omitempty"`
	// Target is the subagent a spawn request named.
	Target   string `json:"target,omitempty"`
	Decision string `json:"decision"`
	Reason   string `json:"reason,omitempty"`
	// Status is the HTTP status returned to the agent.
	Status int `json:"status"`
	// ForgeStatus is the forge API's status, when the call was forwarded.
	ForgeStatus int `json:"forge_status,omitempty"`
	// ExitCode is a spawned subagent's exit status.
	ExitCode   *int    `json:"exit_code,omitempty"`
	DurationMS float64 `json:"duration_ms"`
}

// Audit writes audit entries as JSON lines. It is safe for concurrent use;
// a nil *Audit discards entries.
type Audit struct {
	mu  sync.Mutex
	w   io.Writer
	enc *json.Encoder
	err error
}

// NewAudit returns an audit log writing to w.
func NewAudit(w io.Writer) *Audit {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return &Audit{w: w, enc: enc}
}

const maxAuditField = 512

// Log writes one entry. Fields an agent controls are redacted when they
// hold a credential, then truncated.
func (a *Audit) Log(e AuditEntry) {
	if a == nil {
		return
	}
	e.Method = sanitize(e.Method)
	e.Path = sanitize(e.Path)
	e.Target = sanitize(e.Target)
	e.Reason = sanitize(e.Reason)
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := a.enc.Encode(e); err != nil && a.err == nil {
		a.err = fmt.Errorf("writing audit log: %w", err)
	}
}

// Err returns the first write error, if any.
func (a *Audit) Err() error {
	if a == nil {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.err
}

// sanitize redacts s when it, or its percent-decoded form, holds a
// credential, and truncates it otherwise. Redaction comes first: a secret
// cut by the truncation would no longer be recognised.
func sanitize(s string) string {
	kind := ScanSecrets(s)
	if u, err := url.PathUnescape(s); kind == "" && err == nil && u != s {
		kind = ScanSecrets(u)
	}
	if kind != "" {
		return "[redacted: looked like a " + kind + "]"
	}
	if len(s) > maxAuditField {
		s = s[:maxAuditField] + "...(truncated)"
	}
	return s
}
