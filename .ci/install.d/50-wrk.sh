#!/usr/bin/env bash
# wrk: the HTTP load generator bench/forge.sh drives the forge proxy with.
# Idempotent: installs the Debian package only when the binary is missing.
set -euo pipefail
command -v wrk >/dev/null 2>&1 && exit 0
bash "$(dirname "$0")/00-apt.sh" wrk
