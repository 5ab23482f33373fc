// Package testregistry starts a real OCI registry server for integration
// tests: Debian's docker-registry (CNCF distribution 2.8) on a free loopback
// port, by default with htpasswd (bcrypt) authentication and TLS from a CA
// generated for the test. The server is stopped with t.Cleanup.
//
// When the docker-registry binary is missing the test is skipped, unless
// FULLSEND_INTEGRATION=1 (set by .ci/run), in which case it fails.
// .ci/install.d/20-registry.sh installs the binary.
//
// It is test-only: it imports testing, so only _test.go files (image,
// verify) may import it, never code that ships in the binary.
package testregistry
