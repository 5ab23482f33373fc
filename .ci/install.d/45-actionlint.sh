#!/usr/bin/env bash
# Template tests lint the GitHub Actions workflow with the real actionlint.
# Idempotent: installs only when actionlint is missing or not the pinned version.
set -euo pipefail

actionlint_version=1.7.12
gobin="$(go env GOPATH)/bin"
if ! "$gobin/actionlint" -version 2>/dev/null | head -n1 | grep -qx "v\?${actionlint_version}"; then
	go install "github.com/rhysd/actionlint/cmd/actionlint@v${actionlint_version}"
fi
