package spawn

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/fullsend-ai/agent-sandbox/forge"
)

// RunAgentRequest is the JSON body of POST /run-agent.
type RunAgentRequest struct {
	// Agent names the subagent; it must be in the caller's Agent(...) list.
	Agent string `json:"agent"`
	// Prompt is the subagent's task.
	Prompt string `json:"prompt"`
}

// RunAgentResponse is the JSON answer of a finished run.
type RunAgentResponse struct {
	ID         string          `json:"id"`
	Agent      string          `json:"agent"`
	ExitCode   int             `json:"exit_code"`
	Result     json.RawMessage `json:"result"`
	DurationMS int64           `json:"duration_ms"`
}

// Decoding errors.
var (
	ErrTooLarge   = errors.New("request body too large")
	ErrBadRequest = errors.New("bad request")
)

// DecodeRunAgent strictly decodes a run-agent request of at most maxBytes:
// one JSON object, no unknown fields, no trailing data, a well-formed agent
// name and a non-empty UTF-8 prompt without NUL bytes.
func DecodeRunAgent(r io.Reader, maxBytes int64) (RunAgentRequest, error) {
	var req RunAgentRequest
	b, err := io.ReadAll(io.LimitReader(r, maxBytes+1))
	if err != nil {
		return req, fmt.Errorf("reading body: %w", err)
	}
	if int64(len(b)) > maxBytes {
		return req, fmt.Errorf("body is larger than %d bytes: %w", maxBytes, ErrTooLarge)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		return RunAgentRequest{}, fmt.Errorf("decoding body: %v (hint: {\"agent\":\"name\",\"prompt\":\"...\"}): %w", err, ErrBadRequest)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return RunAgentRequest{}, fmt.Errorf("decoding body: trailing data after the JSON object: %w", ErrBadRequest)
	}
	if !forge.ValidAgentName(req.Agent) {
		return RunAgentRequest{}, fmt.Errorf("field agent: %q is not an agent name (letters, digits, dots, underscores, hyphens): %w", truncate(req.Agent), ErrBadRequest)
	}
	if strings.TrimSpace(req.Prompt) == "" {
		return RunAgentRequest{}, fmt.Errorf("field prompt: empty: %w", ErrBadRequest)
	}
	if !utf8.ValidString(req.Prompt) || strings.ContainsRune(req.Prompt, 0) {
		return RunAgentRequest{}, fmt.Errorf("field prompt: NUL or invalid UTF-8: %w", ErrBadRequest)
	}
	return req, nil
}

func truncate(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}
