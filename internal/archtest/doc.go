// Package archtest holds no code: its tests check the module's import
// graph with `go list` against docs/architecture.md, whose every boundary
// sentence ("imports only", "must never import", "is a leaf") is a row of
// the rules table in rules_test.go, and check that every package of the
// module is described there.
package archtest
