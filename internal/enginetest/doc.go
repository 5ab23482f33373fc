// Package enginetest holds tests that need the real world around the
// agent-sandbox image rather than a model of it: the Containerfile's pins
// (shape, citations, no placeholders; scripts/update-pins.sh --check) and a
// real Docker Engine. The engine tests build the image with `fullsend image
// build` on a base made from Debian packages (debootstrap, then `docker
// import`), push it to a loopback registry, verify it with `fullsend
// verify`, pull it by digest and run it the ways GitLab's Docker executor
// and a GitHub Actions container job do, then start Podman nested in a
// privileged container of it (fullsend ADR 0036).
//
// The package has no non-test code and nothing imports it; its tests use
// image, runner, internal/testregistry and internal/testtool.
package enginetest
