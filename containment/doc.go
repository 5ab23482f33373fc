// Package containment proves that one OpenShell policy grants nothing
// another does not: every (binary, host, port, method, path) the child
// policy lets through, the parent lets through too, and the child reads and
// writes no path and runs under no process setting the parent does not
// have. The compiler runs it on every spawn target against its parent
// (issue 33 §3); the same Check proves any policy against an
// organisation's maximum policy.
//
// # How
//
// Requests cannot be enumerated, so Check works on the policies'
// structure. Each grant of the child (an endpoint's host, port and binary;
// each of its effective L7 rules: a method and a path glob, with query
// matchers) is a set of requests. Check looks for a parent endpoint whose
// host pattern covers the child's host pattern, whose binaries cover the
// child's binary, whose ports hold the port, and whose rules cover the
// child's rule (method, path glob, query), by subsumption of the glob
// patterns segment by segment (cover.go), with globset's semantics as
// package openshell/glob implements them. It then confirms the proof with
// the decision engine (openshell/decide) on both policies: for each child
// grant, witness requests (its most general instances and the boundary
// cases of its globs: an empty trailing segment, a deep path, a dotted
// segment, a private address) that the child allows must be allowed by the
// parent (witness.go).
//
// # Soundness: fail closed
//
// Check never reports a policy contained when it is not, within the
// model below. Whatever the structural proof does not understand is a
// Violation with the reason, never a pass:
//
//   - a glob with a class, an alternate or an escape is covered only by
//     the same text, by a parent pattern matching everything, or, when the
//     child's text is literal, by the decision engine's own match;
//   - a parent endpoint that could take part in deciding the child's
//     request and changes the decision in ways not modelled here (deny
//     rules the child's endpoint does not carry too, an endpoint path
//     that routes requests, allow_encoded_slash, a protocol other than
//     REST unless it is the child's endpoint verbatim, allowed_ips that
//     differ between the endpoints of either side, a credentialed provider
//     layer's raw tunnel) makes the grant unproven;
//   - a child endpoint that is not inspected (L4, tls: skip, or enforcement
//     other than enforce) is taken to allow every request, and needs a
//     parent endpoint that does the same, with no L7 inspection on the host;
//   - network middlewares must be equal on both sides;
//   - a witness the child allows and the parent denies is a violation
//     even when the structure looked contained: the engine wins.
//
// The child's grants are over-approximated (its deny rules and its own
// narrowing by other endpoints are ignored) and the parent's
// under-approximated, so a Violation may name a grant that is in fact
// contained; the fix is then to write the child's grant the way the
// parent's is written, or to declare the widening.
//
// Placeholders are opaque: Check substitutes the same value for a
// placeholder on both sides (Options.Values, else a sentinel no literal
// can equal by accident), which holds when both policies run with the same
// job values, as a spawned child does. Both policies are decided at one
// OpenShell release (Options.Version) with strict binary identity; a child
// run with relaxed binary identity is not covered by this proof.
//
// It imports bundle, openshell, openshell/decide, openshell/glob and
// placeholder only, and never compile, CUE or OPA: the policies to compare
// are its only input.
package containment
