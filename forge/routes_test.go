package forge

import (
	"errors"
	"strings"
	"testing"
)

func TestRoutesSurface(t *testing.T) {
	got := map[string]Access{}
	for _, r := range Routes() {
		got[r.Method+" "+r.Path] = r.Access
	}
	want := map[string]Access{
		"GET /repos/{owner}/{repo}/issues/{number}":           Read,
		"GET /repos/{owner}/{repo}/issues":                    Read,
		"GET /search/issues":                                  Read,
		"GET /repos/{owner}/{repo}/issues/{number}/comments":  Read,
		"POST /repos/{owner}/{repo}/issues/{number}/comments": Write,
		"POST /repos/{owner}/{repo}/issues/{number}/labels":   Write,
	}
	if len(got) != len(want) {
		t.Fatalf("surface has %d routes, want %d: %v", len(got), len(want), got)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: access %q, want %q", k, got[k], v)
		}
	}
	// Routes returns a copy: editing it does not change the table.
	rs := Routes()
	rs[0].Method = "DELETE"
	if Routes()[0].Method == "DELETE" {
		t.Fatal("Routes exposes the internal table")
	}
}

func TestMatch(t *testing.T) {
	tests := []struct {
		method, path string
		want         RouteID
		params       Params
		err          error
	}{
		{"GET", "/repos/o/r/issues/1", IssueGet, Params{"o", "r", 1}, nil},
		{"GET", "/repos/o.x/r_y-z/issues", IssueList, Params{"o.x", "r_y-z", 0}, nil},
		{"GET", "/search/issues", SearchIssues, Params{}, nil},
		{"GET", "/repos/o/r/issues/2147483647/comments", CommentList, Params{"o", "r", 2147483647}, nil},
		{"POST", "/repos/o/r/issues/5/comments", CommentCreate, Params{"o", "r", 5}, nil},
		{"POST", "/repos/o/r/issues/5/labels", LabelsAdd, Params{"o", "r", 5}, nil},
		{"GET", "/repos/o/r/issues/5/labels", "", Params{}, ErrMethodNotAllowed},
		{"HEAD", "/repos/o/r/issues/5", "", Params{}, ErrMethodNotAllowed},
		{"GET", "/repos/o/r/issues/2147483648", "", Params{}, ErrNotFound},
		{"GET", "/repos/o/r/issues/0", "", Params{}, ErrNotFound},
		{"GET", "/repos/o/r/issues/-1", "", Params{}, ErrNotFound},
		{"GET", "/repos/o/r/issues/1/", "", Params{}, ErrNotFound},
		{"GET", "//repos/o/r/issues/1", "", Params{}, ErrNotFound},
		{"GET", "/repos/./r/issues/1", "", Params{}, ErrNotFound},
		{"GET", "/repos/../r/issues/1", "", Params{}, ErrNotFound},
		{"GET", "/repos/.hidden/r/issues/1", "", Params{}, ErrNotFound},
		{"GET", "/repos/o%2Fx/r/issues/1", "", Params{}, ErrNotFound},
		{"GET", "/repos/o/r/pulls/1", "", Params{}, ErrNotFound},
		{"GET", "/repos/" + strings.Repeat("a", 101) + "/r/issues", "", Params{}, ErrNotFound},
		{"GET", "repos/o/r/issues", "", Params{}, ErrNotFound},
		{"GET", "", "", Params{}, ErrNotFound},
	}
	for _, tc := range tests {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			rt, p, allow, err := Match(tc.method, tc.path)
			if !errors.Is(err, tc.err) || (err == nil) != (tc.err == nil) {
				t.Fatalf("err %v, want %v", err, tc.err)
			}
			if rt.ID != tc.want || p != tc.params {
				t.Fatalf("got %s %+v, want %s %+v", rt.ID, p, tc.want, tc.params)
			}
			if errors.Is(err, ErrMethodNotAllowed) && allow == "" {
				t.Fatal("405 without an allowed method")
			}
		})
	}
}

func TestScopeSearch(t *testing.T) {
	tests := []struct {
		q, want string
		err     error
	}{
		{"crash on start", "crash on start repo:o/r", nil},
		{`"null pointer" is:issue is:open`, `"null pointer" is:issue is:open repo:o/r`, nil},
		{`label:"good first issue" -label:wontfix`, `label:"good first issue" -label:wontfix repo:o/r`, nil},
		{"repo:O/R crash", "crash repo:o/r", nil},
		{`"foo:bar" baz`, `"foo:bar" baz repo:o/r`, nil},
		{"", "repo:o/r", nil},
		{"crash repo:o/other", "", ErrScope},
		{"crash -repo:o/r", "", ErrScope},
		{"crash org:o", "", ErrScope},
		{"crash user:someone", "", ErrScope},
		{"crash OWNER:o", "", ErrScope},
		{"a OR b", "", ErrScope},
		{"a AND b", "", ErrScope},
		{"NOT a", "", ErrScope},
		{"(a b)", "", ErrScope},
		{"http://example.com", "", ErrBadRequest},
		{`"unbalanced`, "", ErrBadRequest},
		{strings.Repeat("a", 257), "", ErrBadRequest},
		{"a\x00b", "", ErrBadRequest},
		{"\xff", "", ErrBadRequest},
		{`-"a b" x`, `-"a b" x repo:o/r`, nil},
		{`repo:"O/R" x`, "x repo:o/r", nil},
		{`"repo:other/x" x`, `"repo:other/x" x repo:o/r`, nil},
		{`""`, `"" repo:o/r`, nil},
		{`label:"(x)"`, "", ErrScope},
		// Issue 33 (T5-2): what a forge may read another way is refused.
		{`label:\" repo:other/x \"`, "", ErrBadRequest},
		{`label:x"y repo:other/x"`, "", ErrBadRequest},
		{`"a b"c`, "", ErrBadRequest},
		{`a"b"`, "", ErrBadRequest},
		{`label:"a""b"`, "", ErrBadRequest},
		{`label:"a"" repo:other/x"`, "", ErrBadRequest},
		{`crash \`, "", ErrBadRequest},
		{`"a \" b"`, "", ErrBadRequest},
		{"label:\u0090repo:x/y", "", ErrBadRequest}, // a C1 control: a separator to some engines
	}
	for _, tc := range tests {
		t.Run(tc.q, func(t *testing.T) {
			got, err := ScopeSearch(tc.q, "o", "r")
			if !errors.Is(err, tc.err) || (err == nil) != (tc.err == nil) {
				t.Fatalf("err %v, want %v", err, tc.err)
			}
			if got != tc.want {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestScanSecrets(t *testing.T) {
	tests := []struct{ text, want string }{
		{"ghp_" + strings.Repeat("A", 36), "github-token"},
		{"token ghs_" + strings.Repeat("b1", 18) + " end", "github-token"},
		{"github_pat_" + strings.Repeat("x", 30), "github-fine-grained-pat"},
		{"glpat-" + strings.Repeat("z", 20), "gitlab-token"},
		{"AKIAIOSFODNN7EXAMPLE", "aws-access-key-id"},
		{`aws_secret_access_key = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"`, "aws-secret-access-key"},
		{"-----BEGIN RSA PRIVATE KEY-----", "private-key"},
		{"-----BEGIN PRIVATE KEY-----", "private-key"},
		{"-----BEGIN PGP PRIVATE KEY BLOCK-----", "private-key"},
		{"AIza" + strings.Repeat("Q", 35), "gcp-api-key"},
		{"xoxb-1234567890-abc", "slack-token"},
		{"fsa_" + strings.Repeat("k", 43), "fullsend-agent-token"},
		{"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U", "jwt"},
		{"This looks like a duplicate of #12; ghp is a prefix, AKIA too.", ""},
		{"-----BEGIN PUBLIC KEY-----", ""},
		{"sha256:" + strings.Repeat("a", 64), ""},
	}
	for _, tc := range tests {
		t.Run(tc.want+"/"+tc.text[:min(len(tc.text), 12)], func(t *testing.T) {
			if got := ScanSecrets(tc.text); got != tc.want {
				t.Fatalf("ScanSecrets = %q, want %q", got, tc.want)
			}
		})
	}
}
