#!/usr/bin/env bash
# Lint interop tests and bench/lint.sh: the real opa and conftest CLIs, which
# must run fullsend's embedded rules (lint/rules) unchanged.
# Idempotent: installs only when a binary is missing or not the pinned version.
# conftest v0.71.1 is the newest release whose go.mod (go 1.26.8) builds with
# Go 1.26; GOTOOLCHAIN=local keeps its `toolchain go1.27.1` line from
# fetching a newer Go.
set -euo pipefail

opa_version=v1.22.2
conftest_version=v0.71.1
gobin="$(go env GOPATH)/bin"

if ! "$gobin/opa" version 2>/dev/null | grep -q "^Version: ${opa_version#v}$"; then
	GOTOOLCHAIN=local go install "github.com/open-policy-agent/opa@${opa_version}"
fi

# `go install` of a module version records it in the binary's build info.
if ! go version -m "$gobin/conftest" 2>/dev/null | grep -Eq "^[[:space:]]+mod[[:space:]]+github.com/open-policy-agent/conftest[[:space:]]+${conftest_version}[[:space:]]"; then
	GOTOOLCHAIN=local go install "github.com/open-policy-agent/conftest@${conftest_version}"
fi
