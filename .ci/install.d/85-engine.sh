#!/usr/bin/env bash
# Real container engine tests (internal/enginetest): the Docker Engine must
# be up, and a Debian 13 (trixie) root filesystem with the gateway's compute
# driver (Podman and its helpers) and the ssh client, made by debootstrap
# from the Debian archive, is cached as a tarball that the tests
# `docker import` as the base image (no registry pull: the engine starts
# empty and public registries are unreachable).
#
#   bash .ci/install.d/85-engine.sh           check the engine, build the cache
#   bash .ci/install.d/85-engine.sh --rootfs  print the cached tarball path (builds it when missing)
#
# The package list is part of the cache key, so editing it rebuilds.
# Idempotent; the first build takes about a minute and a half here, later
# runs reuse the tarball.
set -euo pipefail
cd "$(dirname "$0")/../.."

suite=trixie
mirror=${FULLSEND_DEBIAN_MIRROR:-http://deb.debian.org/debian}
# Mirrors the Containerfile's driver and ssh packages, plus busybox-static
# (the tests' nested image is one static busybox).
pkgs=ca-certificates,podman,crun,fuse-overlayfs,passt,slirp4netns,uidmap,openssh-client,iproute2,busybox-static
key=$(printf '%s\n' "$suite" "$mirror" "$pkgs" | sha256sum | cut -c1-16)
cache=${FULLSEND_CI_CACHE:-$HOME/.cache/fullsend-ci}/debootstrap
tarball=$cache/$suite-$key.tar

build_rootfs() {
	[ -s "$tarball" ] && return 0
	bash .ci/install.d/00-apt.sh debootstrap >&2
	mkdir -p "$cache"
	local dir start
	dir=$(mktemp -d "$cache/rootfs.XXXXXX")
	trap 'rm -rf "$dir"' RETURN
	start=$(date +%s)
	echo "--- debootstrap $suite ($pkgs) from $mirror" >&2
	if ! debootstrap --variant=minbase --include="$pkgs" "$suite" "$dir" "$mirror" >"$cache/debootstrap.log" 2>&1; then
		tail -n 30 "$cache/debootstrap.log" >&2
		echo "85-engine: debootstrap of $suite failed (log: $cache/debootstrap.log)" >&2
		return 1
	fi
	rm -rf "$dir"/var/cache/apt/archives/*.deb "$dir"/var/lib/apt/lists/*
	tar --numeric-owner -C "$dir" -cf "$tarball.tmp" .
	mv "$tarball.tmp" "$tarball"
	echo "--- debootstrap took $(($(date +%s) - start))s; cached $tarball" >&2
}

if [ "${1:-}" = --rootfs ]; then
	build_rootfs
	echo "$tarball"
	exit 0
fi

# The engine must be up: the engine tests are part of CI, not optional.
if ! command -v docker >/dev/null 2>&1; then
	echo "85-engine: the docker CLI is not installed; the engine tests (internal/enginetest) need a running Docker Engine" >&2
	exit 1
fi
if ! docker info --format '{{.ServerVersion}}' >/dev/null 2>&1; then
	echo "85-engine: the Docker Engine is not up (docker info failed):" >&2
	docker info 2>&1 | tail -n 5 >&2 || true
	echo "85-engine: start it (systemctl start docker, or dockerd &) and rerun .ci/run" >&2
	exit 1
fi
echo "--- docker engine $(docker info --format '{{.ServerVersion}} ({{.Driver}}, cgroup v{{.CgroupVersion}})')"
build_rootfs
