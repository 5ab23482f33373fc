package forge

import (
	"errors"
	"strconv"
	"strings"
)

// Access says whether a route reads from or writes to the forge.
type Access string

// Route access classes.
const (
	Read  Access = "read"
	Write Access = "write"
)

// RouteID names one endpoint of the proxy surface.
type RouteID string

// The proxy surface. Nothing else is served.
const (
	IssueGet      RouteID = "issue.get"
	IssueList     RouteID = "issue.list"
	SearchIssues  RouteID = "search.issues"
	CommentList   RouteID = "comment.list"
	CommentCreate RouteID = "comment.create"
	LabelsAdd     RouteID = "labels.add"
)

// maxPathSegment bounds owner and repository names, as GitHub does.
const maxPathSegment = 100

// Route is one endpoint of the proxy surface: a method and a GitHub-shaped
// path template whose `{owner}`, `{repo}` and `{number}` segments are
// variables. Compiled L7 policies allow exactly these method/path pairs.
type Route struct {
	ID     RouteID `json:"id"`
	Method string  `json:"method"`
	Path   string  `json:"path"`
	Access Access  `json:"access"`
	// Query lists the query parameters the route accepts; any other is refused.
	Query []string `json:"query,omitempty"`

	segs []string
}

var routeTable = func() []Route {
	rs := []Route{
		{ID: IssueGet, Method: "GET", Path: "/repos/{owner}/{repo}/issues/{number}", Access: Read},
		{ID: IssueList, Method: "GET", Path: "/repos/{owner}/{repo}/issues", Access: Read,
			Query: []string{"direction", "labels", "page", "per_page", "since", "sort", "state"}},
		{ID: SearchIssues, Method: "GET", Path: "/search/issues", Access: Read,
			Query: []string{"order", "page", "per_page", "q", "sort"}},
		{ID: CommentList, Method: "GET", Path: "/repos/{owner}/{repo}/issues/{number}/comments", Access: Read,
			Query: []string{"page", "per_page", "since"}},
		{ID: CommentCreate, Method: "POST", Path: "/repos/{owner}/{repo}/issues/{number}/comments", Access: Write},
		{ID: LabelsAdd, Method: "POST", Path: "/repos/{owner}/{repo}/issues/{number}/labels", Access: Write},
	}
	for i := range rs {
		rs[i].segs = strings.Split(strings.TrimPrefix(rs[i].Path, "/"), "/")
	}
	return rs
}()

// Routes returns the proxy surface as data: every method, path template and
// access class the proxy serves. Callers get a copy.
func Routes() []Route {
	out := make([]Route, len(routeTable))
	for i, r := range routeTable {
		r.Query = append([]string(nil), r.Query...)
		r.segs = nil
		out[i] = r
	}
	return out
}

// Params are the path variables of a matched route.
type Params struct {
	Owner  string
	Repo   string
	Number int // 0 when the route has no {number}
}

// Routing errors; the server maps them to 404 and 405.
var (
	ErrNotFound         = errors.New("no such endpoint")
	ErrMethodNotAllowed = errors.New("method not allowed")
)

// Match resolves a method and an escaped request path (r.URL.EscapedPath())
// to a route and its parameters. Paths must be canonical: no empty, `.` or
// `..` segments, no percent-encoding, no trailing slash, and variables must
// be well-formed forge names or positive issue numbers. A path that matches
// a route under another method yields ErrMethodNotAllowed and the allowed
// method.
func Match(method, escapedPath string) (Route, Params, string, error) {
	if !strings.HasPrefix(escapedPath, "/") || len(escapedPath) > 1024 {
		return Route{}, Params{}, "", ErrNotFound
	}
	segs := strings.Split(escapedPath[1:], "/")
	allow := ""
	for _, r := range routeTable {
		p, ok := matchSegs(r.segs, segs)
		if !ok {
			continue
		}
		if r.Method != method {
			allow = r.Method
			continue
		}
		return r, p, "", nil
	}
	if allow != "" {
		return Route{}, Params{}, allow, ErrMethodNotAllowed
	}
	return Route{}, Params{}, "", ErrNotFound
}

func matchSegs(tmpl, segs []string) (Params, bool) {
	var p Params
	if len(tmpl) != len(segs) {
		return p, false
	}
	for i, t := range tmpl {
		s := segs[i]
		switch t {
		case "{owner}":
			if !validName(s) {
				return p, false
			}
			p.Owner = s
		case "{repo}":
			if !validName(s) {
				return p, false
			}
			p.Repo = s
		case "{number}":
			n, ok := parseIssueNumber(s)
			if !ok {
				return p, false
			}
			p.Number = n
		default:
			if s != t {
				return p, false
			}
		}
	}
	return p, true
}

// validName accepts forge owner and repository names: ASCII letters, digits,
// `-`, `_` and `.`, not starting with `.`, at most 100 bytes. This also
// rejects `.`/`..` segments and any percent-encoding.
func validName(s string) bool {
	if s == "" || len(s) > maxPathSegment || s[0] == '.' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-', c == '_', c == '.':
		default:
			return false
		}
	}
	return true
}

// parseIssueNumber accepts a canonical positive decimal integer that fits in
// 31 bits (no sign, no leading zero).
func parseIssueNumber(s string) (int, bool) {
	if s == "" || len(s) > 10 || s[0] == '0' {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(s, 10, 32)
	if err != nil || n <= 0 {
		return 0, false
	}
	return int(n), true
}
