// Package archtest holds no code: its tests check the module's import
// graph with `go list`, so the package boundaries written in
// docs/architecture.md stay true (readers of a compiled bundle never link
// CUE or OPA, only cmd/fullsend imports compile, only sign imports cosign).
package archtest
