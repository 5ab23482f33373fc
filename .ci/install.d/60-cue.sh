#!/usr/bin/env bash
# OpenShell schema tests (policycue TestCUEVetCLI) and bench/compile.sh: the
# real cue CLI, which must check policies against
# policycue/schema/openshell/policy.cue on its own (`cue vet -d '#Policy'`).
# Idempotent: installs only when cue is missing or not the pinned version.
set -euo pipefail

cue_version=v0.17.1
gobin="$(go env GOPATH)/bin"
if ! "$gobin/cue" version 2>/dev/null | grep -q "^cue version ${cue_version}$"; then
	GOTOOLCHAIN=local go install "cuelang.org/go/cmd/cue@${cue_version}"
fi
