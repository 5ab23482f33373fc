#!/usr/bin/env bash
# curl: the runtime stand-in of spawn's end-to-end triage flow test
# (spawn/flow_e2e_test.go) calls the forge proxy and the spawn service with it,
# as an agent in its sandbox would. Idempotent: installs only when missing.
set -euo pipefail
command -v curl >/dev/null 2>&1 && exit 0
bash "$(dirname "$0")/00-apt.sh" curl ca-certificates
