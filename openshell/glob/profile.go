package glob

import "strings"

// ProfileHost is a host pattern as OpenShell's provider profile loader
// reads the host of a token_grant audience override and of the endpoint
// it binds to (host_pattern_matches and host_patterns_can_overlap,
// crates/openshell-providers/src/profiles.rs:2421-2451,2478-2515 @
// v0.0.111; the same functions at profiles.rs:1467-1497,1524-1561 @
// v0.0.83). It differs from Host:
//
//   - `**` stands for zero or more labels, so "**.example.com" matches
//     "example.com";
//   - only a whole-label `*` is a wildcard (any one label, the empty one
//     included); "api-*" or "a?" are plain labels;
//   - nothing is refused and nothing is trimmed: the caller trims; case is
//     folded in ASCII.
//
// Overlap is exact: a `*` label and a plain label always share a label.
type ProfileHost struct {
	labels labelSeq
}

// NewProfileHost reads a host pattern the profile loader's way.
func NewProfileHost(pattern string) ProfileHost {
	var h ProfileHost
	for _, l := range strings.Split(asciiLower(pattern), ".") {
		h.labels = append(h.labels, profileLabel(l))
	}
	return h
}

// anyLabel is the one-label wildcard of ProfileHost.
func anyLabel(string) bool { return true }

func profileLabel(l string) elem {
	switch l {
	case "**":
		return elem{rep: zeroOrMore}
	case "*":
		return elem{match: anyLabel}
	}
	return elem{lit: l}
}

// Match reports whether the host name matches the pattern; the host's own
// `*` labels are plain labels.
func (h ProfileHost) Match(host string) bool {
	return h.labels.match(strings.Split(asciiLower(host), "."))
}

// Overlaps reports whether some host matches both patterns.
func (h ProfileHost) Overlaps(o ProfileHost) bool { return h.labels.overlaps(o.labels) }
