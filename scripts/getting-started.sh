#!/usr/bin/env bash
# Runs docs/getting-started.md: every fenced block whose info string is
# "sh getting-started", in order, as written, in one shell, in a fresh
# directory outside the checkout. The page's unmarked steps are mirrored
# here: fullsend is installed from this checkout (CGO_ENABLED=0 go install
# ./cmd/fullsend) instead of @vX.Y.Z, and FULLSEND_SRC (the checkout) is where
# the page builds the OpenShell fake instead of the module cache; COSIGN_PASSWORD is random instead of
# typed, and $REGISTRY is a registry server on the loopback interface
# (docker-registry, see .ci/install.d/20-registry.sh). Nothing leaves the
# machine once the Go modules are in the module cache.
#
#   bash scripts/getting-started.sh        # in a temporary directory, removed on success
#   OUT=/tmp/gs bash scripts/getting-started.sh   # kept
set -euo pipefail
cd "$(dirname "$0")/.."
src=$PWD
page=docs/getting-started.md
# Outside the checkout: no git repository around the new agents repository.
keep=${OUT:+1}
out=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/fullsend-getting-started.XXXXXX")}
rm -rf "$out"
mkdir -p "$out"
out=$(cd "$out" && pwd)

# The page's commands, extracted (the page and this script cannot drift).
steps="$out/steps.sh"
awk '/^```sh getting-started$/ { on = 1; next } /^```$/ { on = 0 } on' "$page" >"$steps"
if [ "$(grep -c . "$steps")" -lt 10 ]; then
	echo "getting-started: found only $(grep -c . "$steps") command lines in $page" >&2
	exit 1
fi

# Install (mirrors the page's go install).
mkdir -p "$out/gobin"
CGO_ENABLED=0 GOBIN="$out/gobin" go install ./cmd/fullsend
export PATH="$out/gobin:$PATH"

# A plain-HTTP registry on 127.0.0.1 (go-containerregistry speaks HTTP to
# loopback registries).
command -v docker-registry >/dev/null || {
	echo "getting-started: docker-registry is missing (bash .ci/install.d/20-registry.sh)" >&2
	exit 1
}
port=
for _ in $(seq 50); do
	p=$((20000 + RANDOM % 40000))
	if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then port=$p && break; fi
done
[ -n "$port" ] || { echo "getting-started: no free port" >&2; exit 1; }
cat >"$out/registry.yml" <<YAML
version: 0.1
log:
  level: warn
  accesslog:
    disabled: true
storage:
  filesystem:
    rootdirectory: $out/registry
http:
  addr: 127.0.0.1:$port
YAML
env -i PATH="$PATH" docker-registry serve "$out/registry.yml" >"$out/registry.log" 2>&1 &
registry_pid=$!
trap 'kill "$registry_pid" 2>/dev/null || true' EXIT
cleanup() {
	kill "$registry_pid" 2>/dev/null || true
	wait "$registry_pid" 2>/dev/null || true
	if [ -z "$keep" ]; then chmod -R u+w "$out" && rm -rf "$out"; fi
}
for _ in $(seq 100); do
	if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then break; fi
	sleep 0.1
done

# The page runs on a developer machine: no CI environment, no docker
# credentials of the caller.
mkdir -p "$out/home"
cd "$out/home"
env -u GITHUB_ACTIONS -u GITLAB_CI -u CI \
	HOME="$out/home" DOCKER_CONFIG="$out/home/.docker" \
	REGISTRY="127.0.0.1:$port" FULLSEND_SRC="$src" \
	COSIGN_PASSWORD="getting-started-$$-$RANDOM" \
	bash -euo pipefail -x "$steps"
lines=$(grep -c . "$steps")
cleanup
trap - EXIT
echo "getting-started: every command of $page ran ($lines lines)"
