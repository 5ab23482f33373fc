package forge

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/fullsend-ai/agent-sandbox/internal/version"
)

// Kind is the forge flavour behind the proxy.
type Kind string

// Supported forges.
const (
	GitHub Kind = "github"
	GitLab Kind = "gitlab"
)

// DefaultUpstream returns the public API base URL of a forge kind.
func DefaultUpstream(k Kind) string {
	if k == GitLab {
		return "https://gitlab.com/api/v4"
	}
	return "https://api.github.com"
}

// call is one validated agent request, ready to be sent upstream.
type call struct {
	route   Route
	params  Params
	query   url.Values
	comment string   // CommentCreate
	labels  []string // LabelsAdd
}

// backend turns a validated call into a forge API request and the forge's
// answer back into the GitHub shape agents expect.
type backend interface {
	request(ctx context.Context, c call) (*http.Request, error)
	response(c call, body []byte) ([]byte, error)
}

func jsonRequest(ctx context.Context, method, u string, v any) (*http.Request, error) {
	var body io.Reader
	if v != nil {
		b, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("encoding upstream body: %w", err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return nil, fmt.Errorf("building upstream request: %w", err)
	}
	if v != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("User-Agent", "fullsend-forge-proxy/"+version.String())
	return req, nil
}

// githubBackend forwards GitHub-shaped calls unchanged, with the configured
// owner and repository spelled as configured, and bodies re-encoded from the
// validated values (so GitHub parses exactly what the proxy checked).
type githubBackend struct {
	base       string
	owner      string
	repo       string
	credential Credential
}

func (g githubBackend) request(ctx context.Context, c call) (*http.Request, error) {
	repoPath := "/repos/" + url.PathEscape(g.owner) + "/" + url.PathEscape(g.repo) + "/issues"
	var p string
	var body any
	switch c.route.ID {
	case IssueGet:
		p = repoPath + "/" + strconv.Itoa(c.params.Number)
	case IssueList:
		p = repoPath
	case SearchIssues:
		p = "/search/issues"
	case CommentList:
		p = repoPath + "/" + strconv.Itoa(c.params.Number) + "/comments"
	case CommentCreate:
		p = repoPath + "/" + strconv.Itoa(c.params.Number) + "/comments"
		body = commentBody{Body: c.comment}
	case LabelsAdd:
		p = repoPath + "/" + strconv.Itoa(c.params.Number) + "/labels"
		body = map[string][]string{"labels": c.labels}
	default:
		return nil, fmt.Errorf("github: no upstream mapping for route %s", c.route.ID)
	}
	u := g.base + p
	if len(c.query) > 0 {
		u += "?" + c.query.Encode()
	}
	req, err := jsonRequest(ctx, c.route.Method, u, body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/vnd.github+json")
	req.Header.Set("X-GitHub-Api-Version", "2022-11-28")
	req.Header.Set("Authorization", "Bearer "+g.credential.reveal())
	return req, nil
}

func (githubBackend) response(_ call, body []byte) ([]byte, error) { return body, nil }

// gitlabBackend translates the GitHub-shaped surface to the GitLab v4 API
// and GitLab's issue and note objects back to GitHub's field names.
type gitlabBackend struct {
	base        string
	owner       string
	repo        string
	credential  Credential
	tokenHeader string // PRIVATE-TOKEN or JOB-TOKEN
}

func (g gitlabBackend) request(ctx context.Context, c call) (*http.Request, error) {
	issues := g.base + "/projects/" + url.PathEscape(g.owner+"/"+g.repo) + "/issues"
	iid := "/" + strconv.Itoa(c.params.Number)
	var (
		method = c.route.Method
		u      string
		body   any
		q      url.Values
		err    error
	)
	switch c.route.ID {
	case IssueGet:
		u = issues + iid
	case IssueList:
		u = issues
		q, err = gitlabListQuery(c.query)
	case SearchIssues:
		u = issues
		q, err = gitlabSearchQuery(c.query, g.owner+"/"+g.repo)
	case CommentList:
		u = issues + iid + "/notes"
		q, err = gitlabPaging(c.query)
	case CommentCreate:
		u = issues + iid + "/notes"
		body = commentBody{Body: c.comment}
	case LabelsAdd:
		method = http.MethodPut
		u = issues + iid
		body = map[string]string{"add_labels": strings.Join(c.labels, ",")}
	default:
		return nil, fmt.Errorf("gitlab: no upstream mapping for route %s", c.route.ID)
	}
	if err != nil {
		return nil, err
	}
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	req, err := jsonRequest(ctx, method, u, body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set(g.tokenHeader, g.credential.reveal())
	return req, nil
}

// gitlabPaging keeps the paging parameters and refuses the rest (GitLab
// notes have no `since`).
func gitlabPaging(in url.Values) (url.Values, error) {
	q := url.Values{}
	for k, v := range in {
		switch k {
		case "page", "per_page":
			q[k] = v
		default:
			return nil, fmt.Errorf("query parameter %q is not supported on GitLab: %w", k, ErrBadRequest)
		}
	}
	return q, nil
}

var gitlabState = map[string]string{"open": "opened", "closed": "closed", "all": "all"}

func gitlabListQuery(in url.Values) (url.Values, error) {
	q := url.Values{}
	for k, vs := range in {
		v := vs[0]
		switch k {
		case "page", "per_page":
			q.Set(k, v)
		case "state":
			s, ok := gitlabState[v]
			if !ok {
				return nil, fmt.Errorf("state=%q: want open, closed or all: %w", v, ErrBadRequest)
			}
			q.Set("state", s)
		case "labels":
			q.Set("labels", v)
		case "since":
			q.Set("updated_after", v)
		case "sort":
			switch v {
			case "created", "updated":
				q.Set("order_by", v+"_at")
			default:
				return nil, fmt.Errorf("sort=%q: want created or updated on GitLab: %w", v, ErrBadRequest)
			}
		case "direction":
			if v != "asc" && v != "desc" {
				return nil, fmt.Errorf("direction=%q: want asc or desc: %w", v, ErrBadRequest)
			}
			q.Set("sort", v)
		}
	}
	return q, nil
}

// gitlabSearchQuery maps an already scoped GitHub search query to GitLab
// issue-list parameters: free text becomes `search`, is:/state: becomes
// `state`, label: becomes `labels`; other qualifiers are refused.
func gitlabSearchQuery(in url.Values, project string) (url.Values, error) {
	q, err := gitlabSearchParams(in)
	if err != nil {
		return nil, err
	}
	toks, err := searchTokens(in.Get("q"))
	if err != nil {
		return nil, err
	}
	var terms, labels []string
	for _, t := range toks {
		if !t.qualified {
			terms = append(terms, gitlabTerm(t))
			continue
		}
		if t.negated {
			return nil, fmt.Errorf("search: %s: excluding a qualifier is not supported on GitLab: %w", t.text, ErrBadRequest)
		}
		label, err := gitlabQualifier(q, t.text, t.key, t.value, project)
		if err != nil {
			return nil, err
		}
		if label != "" {
			labels = append(labels, label)
		}
	}
	if len(terms) > 0 {
		q.Set("search", strings.Join(terms, " "))
	}
	if len(labels) > 0 {
		q.Set("labels", strings.Join(labels, ","))
	}
	return q, nil
}

// gitlabTerm is the free text of an unqualified search token: its text
// without the quotes of a phrase.
func gitlabTerm(t searchToken) string {
	if t.negated {
		return "-" + t.value
	}
	return t.value
}

// gitlabSearchParams maps the paging and ordering parameters of a GitHub
// search to GitLab's.
func gitlabSearchParams(in url.Values) (url.Values, error) {
	q := url.Values{}
	for k, vs := range in {
		v := vs[0]
		switch k {
		case "page", "per_page":
			q.Set(k, v)
		case "sort":
			if v != "created" && v != "updated" {
				return nil, fmt.Errorf("sort=%q: want created or updated on GitLab: %w", v, ErrBadRequest)
			}
			q.Set("order_by", v+"_at")
		case "order":
			if v != "asc" && v != "desc" {
				return nil, fmt.Errorf("order=%q: want asc or desc: %w", v, ErrBadRequest)
			}
			q.Set("sort", v)
		}
	}
	return q, nil
}

// gitlabQualifier applies one key:val qualifier (token tok) of a search
// query to q, or returns the label it names; qualifiers GitLab cannot
// express are refused.
func gitlabQualifier(q url.Values, tok, key, val, project string) (label string, err error) {
	switch strings.ToLower(key) {
	case "repo":
		if !strings.EqualFold(val, project) {
			return "", fmt.Errorf("search: repo:%s is out of scope: %w", val, ErrScope)
		}
	case "is", "state":
		switch val {
		case "open", "closed":
			q.Set("state", gitlabState[val])
		case "issue":
		default:
			return "", fmt.Errorf("search: %s is not supported on GitLab: %w", tok, ErrBadRequest)
		}
	case "type":
		if val != "issue" {
			return "", fmt.Errorf("search: %s is not supported on GitLab: %w", tok, ErrBadRequest)
		}
	case "label":
		return val, nil
	default:
		return "", fmt.Errorf("search: qualifier %s: is not supported on GitLab: %w", key, ErrBadRequest)
	}
	return "", nil
}

type glUser struct {
	Username string `json:"username"`
}

type glIssue struct {
	IID            int      `json:"iid"`
	Title          string   `json:"title"`
	Description    string   `json:"description"`
	State          string   `json:"state"`
	Labels         []string `json:"labels"`
	Author         glUser   `json:"author"`
	WebURL         string   `json:"web_url"`
	CreatedAt      string   `json:"created_at"`
	UpdatedAt      string   `json:"updated_at"`
	ClosedAt       *string  `json:"closed_at"`
	UserNotesCount int      `json:"user_notes_count"`
}

type glNote struct {
	ID        int64  `json:"id"`
	Body      string `json:"body"`
	Author    glUser `json:"author"`
	CreatedAt string `json:"created_at"`
	UpdatedAt string `json:"updated_at"`
	System    bool   `json:"system"`
}

type ghUser struct {
	Login string `json:"login"`
}

type ghLabel struct {
	Name string `json:"name"`
}

type ghIssue struct {
	Number    int       `json:"number"`
	Title     string    `json:"title"`
	Body      string    `json:"body"`
	State     string    `json:"state"`
	Labels    []ghLabel `json:"labels"`
	User      ghUser    `json:"user"`
	HTMLURL   string    `json:"html_url"`
	CreatedAt string    `json:"created_at"`
	UpdatedAt string    `json:"updated_at"`
	ClosedAt  *string   `json:"closed_at"`
	Comments  int       `json:"comments"`
}

type ghComment struct {
	ID        int64  `json:"id"`
	Body      string `json:"body"`
	User      ghUser `json:"user"`
	CreatedAt string `json:"created_at"`
	UpdatedAt string `json:"updated_at"`
}

func (i glIssue) github() ghIssue {
	state := i.State
	if state == "opened" {
		state = "open"
	}
	labels := make([]ghLabel, len(i.Labels))
	for j, l := range i.Labels {
		labels[j] = ghLabel{Name: l}
	}
	return ghIssue{Number: i.IID, Title: i.Title, Body: i.Description, State: state, Labels: labels,
		User: ghUser{Login: i.Author.Username}, HTMLURL: i.WebURL, CreatedAt: i.CreatedAt,
		UpdatedAt: i.UpdatedAt, ClosedAt: i.ClosedAt, Comments: i.UserNotesCount}
}

func (n glNote) github() ghComment {
	return ghComment{ID: n.ID, Body: n.Body, User: ghUser{Login: n.Author.Username}, CreatedAt: n.CreatedAt, UpdatedAt: n.UpdatedAt}
}

func (gitlabBackend) response(c call, body []byte) ([]byte, error) {
	convert, ok := gitlabResponses[c.route.ID]
	if !ok {
		return body, nil
	}
	out, err := convert(body)
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("encoding GitHub-shaped response: %w", err)
	}
	return b, nil
}

// gitlabResponses convert GitLab response bodies to the GitHub shape, by
// route; other routes' bodies pass through unchanged.
var gitlabResponses = map[RouteID]func(body []byte) (any, error){
	IssueGet: func(body []byte) (any, error) {
		i, err := decodeGitLab[glIssue](body, "issue")
		return i.github(), err
	},
	IssueList: func(body []byte) (any, error) { return gitlabIssues(body) },
	SearchIssues: func(body []byte) (any, error) {
		items, err := gitlabIssues(body)
		return map[string]any{"total_count": len(items), "incomplete_results": false, "items": items}, err
	},
	CommentList: func(body []byte) (any, error) {
		ns, err := decodeGitLab[[]glNote](body, "notes")
		items := make([]ghComment, 0, len(ns))
		for _, n := range ns {
			if !n.System { // system notes ("added label") are not comments on GitHub
				items = append(items, n.github())
			}
		}
		return items, err
	},
	CommentCreate: func(body []byte) (any, error) {
		n, err := decodeGitLab[glNote](body, "note")
		return n.github(), err
	},
	LabelsAdd: func(body []byte) (any, error) {
		i, err := decodeGitLab[glIssue](body, "issue")
		return i.github().Labels, err
	},
}

// decodeGitLab decodes a GitLab response body; what names it in errors.
func decodeGitLab[T any](body []byte, what string) (T, error) {
	var v T
	if err := json.Unmarshal(body, &v); err != nil {
		return v, fmt.Errorf("decoding GitLab %s: %w", what, err)
	}
	return v, nil
}

// gitlabIssues converts a GitLab issue list.
func gitlabIssues(body []byte) ([]ghIssue, error) {
	is, err := decodeGitLab[[]glIssue](body, "issue list")
	if err != nil {
		return nil, err
	}
	items := make([]ghIssue, len(is))
	for j, i := range is {
		items[j] = i.github()
	}
	return items, nil
}
