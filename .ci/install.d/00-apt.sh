#!/usr/bin/env bash
# Debian packages the integration tests use. Idempotent: installs only what is missing.
set -euo pipefail
pkgs=()
for p in "$@"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || pkgs+=("$p")
done
if [ ${#pkgs[@]} -gt 0 ]; then
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends "${pkgs[@]}"
fi
