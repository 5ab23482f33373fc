package forge

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/fullsend-ai/agent-sandbox/secretscan"
)

// searchQualifiers are the GitHub issue-search qualifiers an agent may use.
// Scope qualifiers (repo, org, user, owner) are handled separately; anything
// else with a colon is refused rather than guessed at.
var searchQualifiers = map[string]bool{
	"is": true, "state": true, "type": true, "in": true, "label": true, "author": true,
	"assignee": true, "mentions": true, "commenter": true, "involves": true, "milestone": true,
	"no": true, "created": true, "updated": true, "closed": true, "comments": true,
	"reactions": true, "reason": true, "linked": true, "sort": true, "interactions": true,
}

// ScopeSearch confines a GitHub issue-search query to one repository. It
// tokenizes the query with searchTokens (white space separates, a quoted
// phrase groups, and whatever the forge could read another way is
// refused), refuses invisible format characters (which could hide a
// separator), repo/org/user/owner qualifiers naming anything else, boolean
// operators and parentheses (which could lift terms out of the repository
// scope), unknown qualifiers and overlong queries, and appends
// `repo:OWNER/REPO`.
func ScopeSearch(q, owner, repo string) (string, error) {
	if len(q) > maxSearchBytes {
		return "", fmt.Errorf("search query is longer than %d bytes: %w", maxSearchBytes, ErrBadRequest)
	}
	if !utf8.ValidString(q) || strings.ContainsFunc(q, isSearchControl) {
		return "", fmt.Errorf("search query has control characters (C0 or C1) or invalid UTF-8: %w", ErrBadRequest)
	}
	if strings.ContainsFunc(q, secretscan.IsIgnorable) {
		return "", fmt.Errorf("search query has invisible format characters: %w", ErrBadRequest)
	}
	toks, err := searchTokens(q)
	if err != nil {
		return "", err
	}
	want := owner + "/" + repo
	out := make([]string, 0, len(toks)+1)
	for _, t := range toks {
		keep, err := scopeToken(t, want)
		if err != nil {
			return "", err
		}
		if keep {
			out = append(out, t.text)
		}
	}
	out = append(out, "repo:"+want)
	return strings.Join(out, " "), nil
}

// isSearchControl reports a control character a search query may not
// hold: C0 and C1 controls but tab and NEL (U+0085), which are white space
// and separate tokens. A search engine may also split on the others.
func isSearchControl(r rune) bool {
	return unicode.IsControl(r) && r != '\t' && r != 0x85
}

// scopeToken judges one search token against the scope repository want: it
// is kept, dropped (the scope's own repo qualifier, re-added once), or
// refused.
func scopeToken(t searchToken, want string) (bool, error) {
	if !t.qualified {
		if t.quoted {
			return true, nil // a phrase is text to the forge, whatever it holds
		}
		switch t.text {
		case "OR", "AND", "NOT":
			return false, fmt.Errorf("search query: boolean operator %s is not allowed: %w", t.text, ErrScope)
		}
	}
	if strings.ContainsAny(t.text, "()") {
		return false, fmt.Errorf("search query: parentheses are not allowed: %w", ErrScope)
	}
	if !t.qualified {
		return true, nil
	}
	key := strings.ToLower(t.key)
	switch {
	case key == "repo":
		if t.negated || !strings.EqualFold(t.value, want) {
			return false, fmt.Errorf("search query: %s: only repo:%s may be searched: %w", t.text, want, ErrScope)
		}
		return false, nil // re-added by the caller exactly once
	case key == "org" || key == "user" || key == "owner":
		return false, fmt.Errorf("search query: qualifier %s: is not allowed (the proxy scopes to repo:%s): %w", key, want, ErrScope)
	case !searchQualifiers[key]:
		return false, fmt.Errorf("search query: unknown qualifier %q (hint: quote text containing a colon): %w", key+":", ErrBadRequest)
	}
	return true, nil
}

// searchToken is one token of a search query, in the grammar searchTokens
// accepts.
type searchToken struct {
	text      string // the token as written, and as forwarded
	negated   bool   // a leading '-'
	qualified bool   // key:value
	key       string // the qualifier's name, as written
	value     string // the qualifier's value, or the text, without its quotes
	quoted    bool   // the value is a quoted phrase
}

// searchTokens splits a search query into tokens. The grammar is the
// common ground of GitHub's documented issue-search syntax and what a
// search engine could read differently, and nothing beyond it:
//
//	query  = { space } [ token { space { space } token } ] { space }
//	token  = [ "-" ] ( phrase | word | name ":" ( phrase | word ) )
//	phrase = `"` { any character but `"` } `"`, then a space or the end
//	word   = { any character but space and `"` }
//
// where space is unicode.IsSpace (NBSP, U+2000..U+200A, U+3000 and the
// rest, not only ' ' and tab: a search engine may split on them) and a
// name holds no colon. GitHub documents double quotes around a phrase or a
// qualifier's value ("Use quotation marks for queries with whitespace":
// `cats NOT "hello world"`, `build label:"bug fix"`, docs.github.com
// search-github/getting-started-with-searching-on-github/
// understanding-the-search-syntax) and no escape for issue search, while
// its code search (search-github/github-code-search/
// understanding-github-code-search-syntax, "Query for an exact match")
// and GitLab's advanced search read a backslash as an escape (`\"` is a
// quote inside a phrase). A query holding a backslash therefore has two
// readings, and one of them can end a phrase where the other does not
// (`label:\" repo:other/x \"`): it is refused. So is a quote anywhere but
// at the start of a token or of a qualifier's value, or a closing quote
// not followed by a space or the end (`label:x"y repo:other/x"`), whose
// grouping differs between engines. An unbalanced quote is an error too.
func searchTokens(q string) ([]searchToken, error) {
	if strings.ContainsRune(q, '\\') {
		return nil, fmt.Errorf("search query has a backslash, which a forge may read as an escape (hint: leave it out; quote a phrase with double quotes): %w", ErrBadRequest)
	}
	var toks []searchToken
	for i := skipSearchSpace(q, 0); i < len(q); i = skipSearchSpace(q, i) {
		t, next, err := readSearchToken(q, i)
		if err != nil {
			return nil, err
		}
		toks = append(toks, t)
		i = next
	}
	return toks, nil
}

// skipSearchSpace returns the index of the first non-space rune of q at or
// after i.
func skipSearchSpace(q string, i int) int {
	for i < len(q) {
		r, n := utf8.DecodeRuneInString(q[i:])
		if !unicode.IsSpace(r) {
			break
		}
		i += n
	}
	return i
}

// wordEnd returns the index of the first space or double quote of q at or
// after i, or len(q).
func wordEnd(q string, i int) int {
	if j := strings.IndexFunc(q[i:], func(r rune) bool { return r == '"' || unicode.IsSpace(r) }); j >= 0 {
		return i + j
	}
	return len(q)
}

// readSearchToken reads the token that starts at q[i] and returns it with
// the index just past it.
func readSearchToken(q string, i int) (searchToken, int, error) {
	end := wordEnd(q, i)
	t := headToken(q[i:end])
	if end == len(q) || q[end] != '"' {
		t.text = q[i:end]
		return t, end, nil
	}
	if t.value != "" {
		return searchToken{}, 0, quoteError(q[i:min(len(q), end+1)])
	}
	n := strings.IndexByte(q[end+1:], '"')
	if n < 0 {
		return searchToken{}, 0, fmt.Errorf("search query has an unbalanced double quote: %w", ErrBadRequest)
	}
	after := end + 1 + n + 1
	if after < len(q) {
		if r, _ := utf8.DecodeRuneInString(q[after:]); !unicode.IsSpace(r) {
			return searchToken{}, 0, quoteError(q[i:wordEnd(q, after)])
		}
	}
	t.text, t.value, t.quoted = q[i:after], q[end+1:after-1], true
	return t, after, nil
}

// headToken parses the part of a token before any quote: a leading '-',
// a qualifier name and colon, and the bare value or text.
func headToken(head string) searchToken {
	t := searchToken{text: head, value: head}
	if rest, ok := strings.CutPrefix(head, "-"); ok {
		t.negated, t.value = true, rest
	}
	if key, val, ok := strings.Cut(t.value, ":"); ok {
		t.qualified, t.key, t.value = true, key, val
	}
	return t
}

// quoteError explains a double quote in a place whose reading differs
// between search engines.
func quoteError(tok string) error {
	return fmt.Errorf("search query: token %q: a double quote may only open a token (\"a b\") or a qualifier's value (label:\"a b\") and close at the token's end: %w", tok, ErrBadRequest)
}
