package glob

import "strings"

// CredentialHost is a host pattern as OpenShell's policy prover reads a
// credential's target host or a policy endpoint's host when it decides
// which credentials are in scope (host_patterns_overlap and its helpers,
// crates/openshell-prover/src/credentials.rs:169-260 @ v0.0.111). It
// differs from Host:
//
//   - the text is trimmed of whitespace and of every trailing '.', then
//     ASCII-lowercased (normalize_host, credentials.rs:169-171); nothing is
//     refused;
//   - `**` is a run of one or more labels only as the first label and only
//     with more labels after it; a lone `**` matches nothing (but overlaps
//     itself, being equal);
//   - any other label holding `*` is a one-label glob of `*` alone (`?` and
//     `[` are plain characters) that needs a non-empty label; `**` after
//     the first label is such a glob;
//   - overlap is not a meeting of two languages: two patterns overlap when
//     they are equal or when one, as a pattern, matches the other's text
//     taken as a host name, its wildcards as plain characters
//     (credentials.rs:173-180). So "a*.example.com" and "*b.example.com"
//     do not overlap, though "ab.example.com" matches both.
//
// At v0.0.83 the prover was narrower (credentials.rs:182-209 @ v0.0.83):
// a wildcard counted only in the first label ("api.*.github.com" did not
// cover "api.v3.github.com", credentials.rs:422-425 @ v0.0.83) and the
// labels after a leading `**` were compared literally. The prover here
// models v0.0.111.
type CredentialHost struct {
	norm   string
	labels labelSeq // nil: the pattern matches no host
}

// NewCredentialHost reads a host pattern the prover's way.
func NewCredentialHost(pattern string) CredentialHost {
	norm := asciiLower(strings.TrimRight(strings.TrimFunc(pattern, isSpace), "."))
	c := CredentialHost{norm: norm}
	if norm == "" || norm == "**" {
		return c
	}
	for i, l := range strings.Split(norm, ".") {
		c.labels = append(c.labels, credentialLabel(l, i == 0))
	}
	return c
}

// credentialLabel compiles one label of a CredentialHost.
func credentialLabel(l string, first bool) elem {
	switch {
	case first && l == "**":
		return elem{rep: oneOrMore}
	case strings.Contains(l, "*"):
		return elem{match: func(s string) bool { return s != "" && starMatch(l, s) }}
	}
	return elem{lit: l}
}

// String returns the pattern as the prover normalizes it: trimmed, without
// trailing dots, ASCII-lowercased (is_known_metadata_hostname,
// queries.rs:61-64 @ v0.0.111, normalizes a host the same way).
func (c CredentialHost) String() string { return c.norm }

// Covers reports whether the pattern matches host, read as a host name
// (its own wildcards plain characters), normalized as patterns are.
func (c CredentialHost) Covers(host string) bool {
	return c.covers(NewCredentialHost(host).norm)
}

func (c CredentialHost) covers(norm string) bool {
	return c.labels != nil && norm != "" && c.labels.match(strings.Split(norm, "."))
}

// Overlaps reports whether the prover takes the two patterns to name a
// common host: equal, or one covering the other's text.
func (c CredentialHost) Overlaps(o CredentialHost) bool {
	if c.norm == "" || o.norm == "" {
		return false
	}
	return c.norm == o.norm || c.covers(o.norm) || o.covers(c.norm)
}

// starMatch reports whether s matches the glob p, in which `*` is any run
// of bytes and every other byte stands for itself. It scans both once,
// remembering the last `*` seen and, when a later byte fails, letting that
// `*` take one more byte of s: a later `*` can always do what an earlier
// one could, so no older choice needs revisiting.
func starMatch(p, s string) bool {
	pi, si := 0, 0
	star, resume := -1, 0
	for si < len(s) {
		switch {
		case pi < len(p) && p[pi] == '*':
			star, resume = pi, si
			pi++
		case pi < len(p) && p[pi] == s[si]:
			pi++
			si++
		case star >= 0:
			resume++
			pi, si = star+1, resume
		default:
			return false
		}
	}
	return strings.Trim(p[pi:], "*") == ""
}
