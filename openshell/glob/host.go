package glob

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Host is a compiled host pattern with the semantics of OpenShell's
// gateway and supervisor (HostPattern, openshell-core/src/host_pattern.rs
// @ v0.0.111; the module is new since v0.0.83): the pattern is split at
// '.' into DNS labels and compared case-insensitively (ASCII);
//
//   - a label that is exactly `**` stands for one or more labels, never
//     none ("**.example.com" does not match "example.com",
//     host_pattern.rs:306-312);
//   - any other label is a Rust glob::Pattern for one label (`*` and `?`
//     stay inside the label, `[...]` classes), so "*-api.example.com"
//     matches "tenant-api.example.com";
//   - a host with an empty label ("a..b", a trailing dot) matches nothing.
//
// Middleware endpoint selectors and the gateway's credentialed-endpoint
// scopes use it. Overlap is conservative where OpenShell's is: two labels
// that are both globs are taken to share a label.
type Host struct {
	src    string // the pattern, ASCII-lowercased
	labels labelSeq
}

// CompileHost compiles a host pattern, refusing what HostPattern::new
// refuses (host_pattern.rs:91-128 @ v0.0.111): an empty pattern,
// whitespace, brace alternates (the glob crate would take them literally),
// an empty label and a label that is not a valid glob.
func CompileHost(pattern string) (*Host, error) {
	if err := checkHostText(pattern); err != nil {
		return nil, err
	}
	src := asciiLower(pattern)
	h := &Host{src: src}
	for _, l := range strings.Split(src, ".") {
		e, err := hostLabel(l)
		if err != nil {
			return nil, err
		}
		h.labels = append(h.labels, e)
	}
	return h, nil
}

// checkHostText refuses the pattern texts no label split can repair.
func checkHostText(p string) error {
	switch {
	case p == "":
		return errors.New("host pattern must not be empty")
	case strings.ContainsFunc(p, isSpace):
		return errors.New("host pattern must not contain whitespace")
	case strings.ContainsAny(p, "{}"):
		return errors.New("host pattern must not contain brace alternates; list each host pattern separately")
	case p == "." || strings.HasPrefix(p, ".") || strings.HasSuffix(p, ".") || strings.Contains(p, ".."):
		return errors.New("host pattern must not contain empty DNS labels")
	}
	return nil
}

// hostLabel compiles one label of a Host.
func hostLabel(l string) (elem, error) {
	switch {
	case l == "**":
		return elem{rep: oneOrMore}, nil
	case !strings.ContainsAny(l, "*?["):
		return elem{lit: l}, nil
	}
	p, ok := ParseRust(l)
	if !ok {
		return elem{}, fmt.Errorf("invalid host pattern: label %q is not a valid glob", l)
	}
	return elem{match: p.Match}, nil
}

// String returns the pattern as compiled (ASCII-lowercased).
func (h *Host) String() string { return h.src }

// Match reports whether the host name matches the pattern.
func (h *Host) Match(host string) bool {
	labels := strings.Split(asciiLower(host), ".")
	if slices.Contains(labels, "") {
		return false
	}
	return h.labels.match(labels)
}

// Overlaps reports whether some host could match both patterns; it is
// true for two glob labels in the same place even when no label matches
// both (OpenShell's conservative answer, host_pattern.rs:181-222,258-281).
func (h *Host) Overlaps(o *Host) bool { return h.labels.overlaps(o.labels) }

// Literal returns the one host the pattern matches when it has no glob
// and no `**`.
func (h *Host) Literal() (string, bool) {
	for _, e := range h.labels {
		if !e.literal() {
			return "", false
		}
	}
	return h.src, true
}

// Universal reports whether the pattern is `**`, which matches every
// host.
func (h *Host) Universal() bool { return len(h.labels) == 1 && h.labels[0].rep == oneOrMore }

// HostsOverlap compiles two host patterns and reports whether they
// overlap (host_patterns_overlap, host_pattern.rs:234-240 @ v0.0.111); an
// invalid pattern is an error.
func HostsOverlap(a, b string) (bool, error) {
	ha, err := CompileHost(a)
	if err != nil {
		return false, err
	}
	hb, err := CompileHost(b)
	if err != nil {
		return false, err
	}
	return ha.Overlaps(hb), nil
}

// HostSelector is a middleware endpoint selector: hosts matching an
// include pattern and no exclude pattern (HostSelector,
// host_pattern.rs:31-88 @ v0.0.111).
type HostSelector struct {
	include, exclude []*Host
}

// NewHostSelector returns the selector of the compiled include and
// exclude patterns.
func NewHostSelector(include, exclude []*Host) *HostSelector {
	return &HostSelector{include: include, exclude: exclude}
}

// MayMatch reports whether the selector may select some host the
// candidate pattern matches, as OpenShell answers it
// (may_match_pattern, host_pattern.rs:65-87): an include that overlaps the
// candidate counts unless the excludes are known to remove what the two
// share (removes).
func (s *HostSelector) MayMatch(cand *Host) bool {
	return slices.ContainsFunc(s.include, func(inc *Host) bool {
		return inc.Overlaps(cand) && !s.removes(inc, cand)
	})
}

// removes reports whether the excludes remove every host inc and cand
// share, as far as OpenShell tells: when either pattern is one literal
// host, an exclude matching that host; otherwise only an exclude that is
// `**` or written the same as one of the two.
func (s *HostSelector) removes(inc, cand *Host) bool {
	host, ok := cand.Literal()
	if !ok {
		host, ok = inc.Literal()
	}
	return slices.ContainsFunc(s.exclude, func(ex *Host) bool {
		if ok {
			return ex.Match(host)
		}
		return ex.Universal() || ex.src == inc.src || ex.src == cand.src
	})
}
