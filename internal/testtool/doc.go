// Package testtool finds the real command-line tools integration tests run
// (cosign, conftest, opa, cue, crane, actionlint, docker-registry, curl):
// a missing tool skips the test on a developer machine and fails it under
// FULLSEND_INTEGRATION=1, which .ci/run sets after installing every tool.
//
// It is test-only: it imports testing, so only _test.go files and
// internal/testregistry may import it, never code that ships in the binary.
package testtool
