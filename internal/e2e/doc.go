// Package e2e holds end-to-end tests that drive installed fullsend binaries
// as a user would, from directories outside this module. It has no code of
// its own; see newcomer_test.go.
package e2e
