package forge

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Scope limits what any agent may touch through the proxy, whatever its
// sandbox policy says: one repository, writes to one issue, labels from an
// allowlist, bounded bodies.
type Scope struct {
	// Owner and Repo name the only repository the proxy serves.
	Owner string
	Repo  string
	// Issue is the only issue number writes may target. 0 refuses all writes.
	Issue int
	// Labels is the allowlist of label names agents may add. Empty refuses
	// all label writes.
	Labels []string
	// MaxCommentBytes bounds a comment body (default 65536, GitHub's limit).
	MaxCommentBytes int
}

// ErrScope marks a request that is well-formed but outside the scope. The
// server answers 403.
var ErrScope = errors.New("outside the proxy scope")

// ErrBadRequest marks a malformed request. The server answers 400.
var ErrBadRequest = errors.New("bad request")

const (
	defaultMaxComment = 65536
	maxLabels         = 20
	maxLabelBytes     = 50
	maxSearchBytes    = 256
	maxPerPage        = 100
	maxPage           = 10000
)

// Validate checks the scope configuration itself.
func (s Scope) Validate() error {
	if !validName(s.Owner) || !validName(s.Repo) {
		return fmt.Errorf("scope: repository %q/%q is not a valid owner/repo", s.Owner, s.Repo)
	}
	if s.Issue < 0 {
		return fmt.Errorf("scope: issue %d is negative", s.Issue)
	}
	for _, l := range s.Labels {
		if err := checkLabel(l); err != nil {
			return fmt.Errorf("scope: label allowlist: %w", err)
		}
	}
	if s.MaxCommentBytes < 0 {
		return fmt.Errorf("scope: max comment size %d is negative", s.MaxCommentBytes)
	}
	return nil
}

func (s Scope) maxComment() int {
	if s.MaxCommentBytes == 0 {
		return defaultMaxComment
	}
	return s.MaxCommentBytes
}

// checkParams enforces the repository and, for writes, the issue number.
func (s Scope) checkParams(rt Route, p Params) error {
	if rt.ID == SearchIssues {
		return nil
	}
	if !strings.EqualFold(p.Owner, s.Owner) || !strings.EqualFold(p.Repo, s.Repo) {
		return fmt.Errorf("repository %s/%s: only %s/%s is served: %w", p.Owner, p.Repo, s.Owner, s.Repo, ErrScope)
	}
	if rt.Access == Write && (s.Issue == 0 || p.Number != s.Issue) {
		return fmt.Errorf("writes to issue %d: only issue %d may be written: %w", p.Number, s.Issue, ErrScope)
	}
	return nil
}

// checkQuery validates the query string against the route's allowlist and
// returns the canonical query to forward. For search it scopes `q` to the
// repository.
func (s Scope) checkQuery(rt Route, rawQuery string) (url.Values, error) {
	q, err := url.ParseQuery(rawQuery)
	if err != nil {
		return nil, fmt.Errorf("query: %v: %w", err, ErrBadRequest)
	}
	for k, vs := range q {
		if err := s.checkParam(rt, q, k, vs); err != nil {
			return nil, err
		}
	}
	if rt.ID == SearchIssues && q.Get("q") == "" {
		return nil, fmt.Errorf("search needs a q parameter: %w", ErrBadRequest)
	}
	return q, nil
}

// checkParam validates query parameter k (values vs) of q: allowed by the
// route, given once, plain text, and well-formed for its kind; a search q is
// replaced in q by its scoped form.
func (s Scope) checkParam(rt Route, q url.Values, k string, vs []string) error {
	if !slices.Contains(rt.Query, k) {
		return fmt.Errorf("query parameter %q is not accepted by %s %s: %w", k, rt.Method, rt.Path, ErrBadRequest)
	}
	if len(vs) != 1 {
		return fmt.Errorf("query parameter %q given %d times: %w", k, len(vs), ErrBadRequest)
	}
	v := vs[0]
	if !utf8.ValidString(v) || strings.ContainsFunc(v, isControl) {
		return fmt.Errorf("query parameter %q has control characters or invalid UTF-8: %w", k, ErrBadRequest)
	}
	if kind := ScanSecrets(v); kind != "" {
		return fmt.Errorf("query parameter %q holds a credential (%s): %w", k, kind, ErrScope)
	}
	switch k {
	case "page", "per_page":
		return checkPageParam(k, v)
	case "q":
		scoped, err := ScopeSearch(v, s.Owner, s.Repo)
		if err != nil {
			return err
		}
		q.Set("q", scoped)
	default:
		if len(v) > 256 {
			return fmt.Errorf("query parameter %s is longer than 256 bytes: %w", k, ErrBadRequest)
		}
	}
	return nil
}

// checkPageParam validates page or per_page: a canonical integer within
// its limit.
func checkPageParam(k, v string) error {
	limit := maxPage
	if k == "per_page" {
		limit = maxPerPage
	}
	if n, err := strconv.Atoi(v); err != nil || n < 1 || n > limit || strconv.Itoa(n) != v {
		return fmt.Errorf("query parameter %s=%q: want an integer 1..%d: %w", k, v, limit, ErrBadRequest)
	}
	return nil
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f }

// commentBody is the only JSON body a comment create accepts.
type commentBody struct {
	Body string `json:"body"`
}

// decodeComment strictly decodes a comment body and returns its text.
func (s Scope) decodeComment(b []byte) (string, error) {
	var c commentBody
	if err := decodeStrict(b, &c); err != nil {
		return "", err
	}
	if strings.TrimSpace(c.Body) == "" {
		return "", fmt.Errorf("comment body is empty: %w", ErrBadRequest)
	}
	if len(c.Body) > s.maxComment() {
		return "", fmt.Errorf("comment body is %d bytes, the limit is %d: %w", len(c.Body), s.maxComment(), ErrBadRequest)
	}
	if !utf8.ValidString(c.Body) || strings.ContainsRune(c.Body, 0) {
		return "", fmt.Errorf("comment body has NUL or invalid UTF-8: %w", ErrBadRequest)
	}
	return c.Body, nil
}

// decodeLabels strictly decodes a labels body, either {"labels":[...]} or a
// bare array as GitHub accepts, and checks every name against the allowlist.
func (s Scope) decodeLabels(b []byte) ([]string, error) {
	var labels []string
	trimmed := bytes.TrimSpace(b)
	if len(trimmed) > 0 && trimmed[0] == '[' {
		if err := decodeStrict(trimmed, &labels); err != nil {
			return nil, err
		}
	} else {
		var body struct {
			Labels []string `json:"labels"`
		}
		if err := decodeStrict(trimmed, &body); err != nil {
			return nil, err
		}
		labels = body.Labels
	}
	if len(labels) == 0 {
		return nil, fmt.Errorf("labels: at least one label is needed: %w", ErrBadRequest)
	}
	if len(labels) > maxLabels {
		return nil, fmt.Errorf("labels: %d labels, at most %d: %w", len(labels), maxLabels, ErrBadRequest)
	}
	for _, l := range labels {
		if err := checkLabel(l); err != nil {
			return nil, fmt.Errorf("labels: %v: %w", err, ErrBadRequest)
		}
		if !slices.Contains(s.Labels, l) {
			return nil, fmt.Errorf("label %q is not in the allowlist: %w", l, ErrScope)
		}
	}
	return labels, nil
}

func checkLabel(l string) error {
	if l == "" || len(l) > maxLabelBytes || !utf8.ValidString(l) || strings.ContainsFunc(l, isControl) || strings.Contains(l, ",") {
		return fmt.Errorf("label %q: want 1..%d bytes of UTF-8 without commas or control characters", l, maxLabelBytes)
	}
	return nil
}

// decodeStrict decodes exactly one JSON value into v, refusing unknown
// fields and trailing data.
func decodeStrict(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("decoding JSON body: %v: %w", err, ErrBadRequest)
	}
	if dec.More() {
		return fmt.Errorf("decoding JSON body: trailing data after the JSON value: %w", ErrBadRequest)
	}
	if _, err := dec.Token(); err == nil {
		return fmt.Errorf("decoding JSON body: trailing data after the JSON value: %w", ErrBadRequest)
	}
	return nil
}

// ParseRepo splits "owner/repo" and validates both names.
func ParseRepo(s string) (owner, repo string, err error) {
	owner, repo, ok := strings.Cut(s, "/")
	if !ok || !validName(owner) || !validName(repo) {
		return "", "", fmt.Errorf("repository %q: want owner/repo (letters, digits, '-', '_', '.')", s)
	}
	return owner, repo, nil
}
