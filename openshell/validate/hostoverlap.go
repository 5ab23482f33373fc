package validate

import "errors"

// HostPatternsOverlap reports whether two host patterns can admit a common
// host, with the gateway's host pattern semantics (host_patterns_overlap,
// openshell-core host_pattern.rs:236-240 @ v0.0.111); an invalid pattern is
// an error (OpenShell then treats the pair as not overlapping).
func HostPatternsOverlap(a, b string) (bool, error) {
	pa, msg := newHostPattern(a)
	if pa == nil {
		return false, errors.New(msg)
	}
	pb, msg := newHostPattern(b)
	if pb == nil {
		return false, errors.New(msg)
	}
	return pa.overlaps(pb), nil
}
