#!/usr/bin/env bash
# Sign/verify interop tests and bench/sign.sh: the real cosign CLI, the peer
# tool whose signatures and attestations fullsend must produce and accept.
# Idempotent: installs only when cosign is missing or not the pinned version.
set -euo pipefail

cosign_version=v2.6.5
gobin="$(go env GOPATH)/bin"
if ! "$gobin/cosign" version 2>/dev/null | grep -Eq "GitVersion:[[:space:]]+${cosign_version}$"; then
	go install "github.com/sigstore/cosign/v2/cmd/cosign@${cosign_version}"
fi
