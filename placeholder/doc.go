// Package placeholder implements fullsend's typed policy placeholders such as
// {{OWNER}} and {{ISSUE_NUMBER}}.
//
// Placeholders are values, not text: each name has a validator and a set of
// policy fields where it may appear, and substitution happens on the decoded
// policy model, never on YAML text. A value can therefore never inject YAML,
// widen a glob or escape a path.
//
// It owns the names, their validators, Values (and ParseSet for KEY=VALUE
// assignments), the field kinds, and Find, Check and Expand on one string.
// compile resolves --set values with it, the runner resolves the CI's, and
// package openshell applies it to every field of a Policy
// (ApplyPlaceholders). It is a leaf: the standard library only. It must
// never import openshell, which imports it.
package placeholder
