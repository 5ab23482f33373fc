package secretscan

import "slices"

// Rule is one credential shape, with gitleaks' semantics: it fires on a
// text when one of Keywords occurs in the lowercased text, Regex matches,
// the secret (capture group SecretGroup, or the first non-empty group, or
// the whole match) has a Shannon entropy above Entropy, and no allowlist
// (Allow, and the global one when GlobalAllow is set) accepts it.
type Rule struct {
	// ID names the kind of credential (gitleaks' rule id); several rules
	// may report the same kind.
	ID string
	// Regex is an RE2 pattern (Go regexp and OPA's regex builtins alike).
	Regex string
	// Keywords are lowercase literals; the rule runs only when the
	// lowercased text holds one. A rule without keywords always runs.
	Keywords []string
	// SecretGroup is the capture group holding the secret (0: the first
	// non-empty group, or the whole match without groups).
	SecretGroup int
	// Entropy is the Shannon entropy (bits per character) the secret must
	// exceed; 0 means no threshold.
	Entropy float64
	// Allow lists this rule's allowlists.
	Allow []Allow
	// GlobalAllow applies gitleaks' global allowlist (GlobalAllow()).
	GlobalAllow bool
	// Joinable marks rules whose regex starts with a literal prefix of at
	// least three characters: they also run on the text with its white
	// space removed (Join). Rules shaped like `key = value` do not, since
	// joining prose would make them match it.
	Joinable bool
}

// Allow is one allowlist: a finding it accepts is not reported.
type Allow struct {
	// Target is what Regexes are matched against: "" (the secret),
	// "match" (the whole regex match) or "line" (the line holding it).
	Target string
	// Regexes accept a finding when one matches the target.
	Regexes []string
	// StopWords (lowercase) accept a finding whose lowercased secret
	// contains one.
	StopWords []string
	// And requires every kind of check present (regexes, stop words) to
	// accept, rather than any one.
	And bool
}

// Rules returns the rule set, in the order the scanner tries it: the
// fullsend supplement, then gitleaks' default rules.
func Rules() []Rule {
	return slices.Concat(fullsendRules, gitleaksRules)
}

// GlobalAllow returns gitleaks' global allowlist.
func GlobalAllow() []Allow {
	return slices.Clone(gitleaksAllow)
}
