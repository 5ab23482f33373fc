#!/usr/bin/env bash
# Image-build tests and bench: a real registry server (CNCF distribution 2.8,
# Debian package docker-registry) for the integration tests in
# internal/testregistry and image, and crane (the peer tool bench/image.sh
# compares against). Idempotent: installs only what is missing or outdated.
set -euo pipefail
cd "$(dirname "$0")/../.."

bash .ci/install.d/00-apt.sh docker-registry

crane_version=v0.22.1
gobin="$(go env GOPATH)/bin"
if ! "$gobin/crane" version 2>/dev/null | grep -qx -e "$crane_version" -e "${crane_version#v}"; then
	go install "github.com/google/go-containerregistry/cmd/crane@${crane_version}"
fi
