package glob

import (
	"slices"
	"strings"
)

// How OpenShell's Rego calls the matcher: regorus's glob.match(pattern,
// delimiters, value), which rewrites the delimiters to "/" and hands the
// pattern to globset (src/builtins/glob.rs @ regorus-v0.9.1).

// RegoMatch is regorus's glob.match(pattern, delimiters, value) as
// OpenShell calls it: delims nil is Rego null, an empty non-nil slice is [].
func RegoMatch(pattern string, delims []rune, value string) bool {
	return CompileRego(pattern, delims).Match(value)
}

// Rego is a pattern compiled once for regorus's glob.match with fixed
// delimiters (RegoMatch), to match many values. It is immutable and
// safe for concurrent use.
type Rego struct {
	g      *Glob // nil: the pattern matches nothing
	delims []rune
}

// CompileRego compiles pattern as RegoMatch does; an invalid pattern
// gives a Rego that matches nothing.
func CompileRego(pattern string, delims []rune) *Rego {
	pat, ok := regoRewrite(pattern, delims)
	if !ok {
		return &Rego{}
	}
	g, err := Compile(pat)
	if err != nil {
		return &Rego{}
	}
	return &Rego{g: g, delims: delims}
}

// Match reports whether glob.match(pattern, delimiters, value) holds.
func (r *Rego) Match(value string) bool {
	if r.g == nil {
		return false
	}
	val, ok := regoRewrite(value, r.delims)
	return ok && r.g.Match(val)
}

// regoRewrite applies regorus's delimiter rewriting (make_delimiters_unix_style
// and suppress_unix_style_delimiter, src/builtins/glob.rs @ regorus-v0.9.1).
func regoRewrite(s string, delims []rune) (string, bool) {
	if strings.IndexByte(s, 0) >= 0 {
		return "", false
	}
	if delims == nil {
		return strings.ReplaceAll(s, "/", "\x00"), true
	}
	if len(delims) == 0 {
		delims = []rune{'.'}
	}
	if !slices.Contains(delims, '/') {
		s = strings.ReplaceAll(s, "/", "\x00")
	}
	for _, d := range delims {
		s = rewriteDelimiter(s, d)
	}
	return s, true
}

// rewriteDelimiter rewrites delimiter d of s for globset, whose only
// separator is '/': '/' stays, ':' becomes NUL, and any other d becomes
// "/d/".
func rewriteDelimiter(s string, d rune) string {
	switch d {
	case '/':
		return s
	case ':':
		return strings.ReplaceAll(s, ":", "\x00")
	}
	return strings.ReplaceAll(s, string(d), "/"+string(d)+"/")
}

// Match is the glob.match OpenShell's Rego runs (regorus over globset):
// Match(p, v, '/') is glob.match(p, ["/"], v) (paths, binaries), Match(p,
// v, '.') is glob.match(p, ["."], v) (hosts), and Match(p, v) is
// glob.match(p, [], v), which regorus reads as ["."] (query values,
// GraphQL names, MCP methods). An invalid pattern matches nothing.
func Match(pattern string, value string, seps ...rune) bool {
	if seps == nil {
		seps = []rune{}
	}
	return RegoMatch(pattern, seps, value)
}
