#!/usr/bin/env bash
# Refresh or check the pins in the Containerfile (docs/image-pins.md).
#
#   bash scripts/update-pins.sh --check   offline: format and citations
#   bash scripts/update-pins.sh           online: fetch and verify, rewrite
#
# --check (no network) fails when
#   - a pin is all zeros (a placeholder) or malformed: the FROM digest and
#     OPENSHELL_SUPERVISOR_IMAGE must end in @sha256:<64 hex>, every
#     ARG *_SHA256_* must be 64 lowercase hex, NODE_RELEASE_KEY 40 hex;
#   - a pin has no `# source: ...` comment on the line above it;
#   - gpg is installed and the stored signed Node checksum file
#     (scripts/pins/) does not verify with the pinned key in scripts/keys/,
#     or does not list the pinned Node sums.
# A pin that reads UNRESOLVED (no stored public source carried it) is
# listed and allowed: the Containerfile refuses to build with it. Pass
# --strict to fail on UNRESOLVED too (release CI).
#
# Online (github.com, nodejs.org, go.dev, proxy.golang.org, ghcr.io and
# docker.io reachable; needs curl, jq, gpg, go, gh authenticated, crane):
#   - debian:<tag> index digest: `crane digest` of the tag;
#   - Go: go.dev/dl/?mode=json&include=all, the sha256 for each linux file;
#   - Node: SHASUMS256.txt.asc, whose signature must verify with the pinned
#     release key (VALIDSIG on NODE_RELEASE_KEY) before any sum is taken;
#     the signed file is stored under scripts/pins/ for --check;
#   - gh, yq: sha256 of the proxy.golang.org module zip, after
#     `go mod download -json` (which checks the zip's h1: against
#     sum.golang.org) agrees;
#   - OpenShell: the three *-checksums-sha256.txt release assets, after
#     `gh attestation verify` of each linux tarball with
#     --repo NVIDIA/OpenShell --signer-workflow
#     NVIDIA/OpenShell/.github/workflows/release-tag.yml (its actions/attest
#     step) and a sha256 of the download that matches the checksum file;
#   - the supervisor image: `crane digest ghcr.io/nvidia/openshell/supervisor:<semver>`.
# Every rewritten value keeps a `# source:` line naming where it came from.
set -euo pipefail
cd "$(dirname "$0")/.."
cf=${PINS_CONTAINERFILE:-Containerfile}
mode=update strict=0
for a in "$@"; do
	case "$a" in
	--check) mode=check ;;
	--strict) strict=1 ;;
	-h | --help) sed -n '2,40p' "$0"; exit 0 ;;
	*) echo "update-pins: unknown argument $a (want --check [--strict])" >&2; exit 2 ;;
	esac
done

zeros=0000000000000000000000000000000000000000000000000000000000000000
errors=0 unresolved=0 pins=0
fail() { echo "update-pins: $cf:$1: $2" >&2; errors=$((errors + 1)); }

# check_pin LINE NAME VALUE KIND PREV — KIND: hex64, digest, fpr.
check_pin() {
	local line=$1 name=$2 value=$3 kind=$4 prev=$5
	pins=$((pins + 1))
	case "$prev" in
	"# source: "?*) ;;
	*) fail "$line" "$name has no '# source: ...' citation on the line above" ;;
	esac
	if [[ "$value" == *UNRESOLVED* ]]; then
		echo "update-pins: $cf:$line: $name is UNRESOLVED (the build stops there; see docs/image-pins.md)"
		unresolved=$((unresolved + 1))
		return
	fi
	local hex=$value
	case "$kind" in
	digest) [[ "$value" =~ @sha256:([0-9a-f]{64})$ ]] || { fail "$line" "$name=$value is not pinned by @sha256:<64 hex>"; return; }
		hex=${BASH_REMATCH[1]} ;;
	hex64) [[ "$value" =~ ^[0-9a-f]{64}$ ]] || { fail "$line" "$name=$value is not 64 lowercase hex digits"; return; } ;;
	fpr) [[ "$value" =~ ^[0-9A-F]{40}$ ]] || { fail "$line" "$name=$value is not a 40-digit key fingerprint"; return; } ;;
	esac
	[ "$hex" != "$zeros" ] || fail "$line" "$name is an all-zero placeholder, not a real pin"
}

arg() { sed -n "s/^ARG $1=//p" "$cf" | head -1; }

check() {
	local n=0 prev="" line from=0
	while IFS= read -r line || [ -n "$line" ]; do
		n=$((n + 1))
		if [[ "$line" =~ ^FROM[[:space:]]+([^[:space:]]+) ]]; then
			from=$((from + 1))
			check_pin "$n" FROM "${BASH_REMATCH[1]}" digest "$prev"
		elif [[ "$line" =~ ^ARG[[:space:]]+([A-Z0-9_]+_SHA256_[A-Z0-9]+)=(.*)$ ]]; then
			check_pin "$n" "${BASH_REMATCH[1]}" "${BASH_REMATCH[2]}" hex64 "$prev"
		elif [[ "$line" =~ ^ARG[[:space:]]+([A-Z0-9_]+_IMAGE)=(.*)$ ]]; then
			check_pin "$n" "${BASH_REMATCH[1]}" "${BASH_REMATCH[2]}" digest "$prev"
		elif [[ "$line" =~ ^ARG[[:space:]]+([A-Z0-9_]+_KEY)=(.*)$ ]]; then
			check_pin "$n" "${BASH_REMATCH[1]}" "${BASH_REMATCH[2]}" fpr "$prev"
		elif [[ "$line" =~ ^ARG[[:space:]]+[A-Z0-9_]+_SHA256_[A-Z0-9]+[[:space:]]*$ ]]; then
			fail "$n" "checksum ARG without a value"
		fi
		prev=$line
	done <"$cf"
	[ "$from" -ge 1 ] || fail 0 "no FROM line"

	# The signed Node checksum file, verified offline with the pinned key.
	local node_version key sig
	node_version=$(arg NODE_VERSION) key=$(arg NODE_RELEASE_KEY)
	sig=scripts/pins/node-v${node_version}-SHASUMS256.txt.asc
	if [ ! -f "$sig" ]; then
		fail 0 "$sig missing (the signed Node checksum file the NODE_SHA256_* pins come from)"
	else
		local want
		for want in "$(arg NODE_SHA256_AMD64)  node-v${node_version}-linux-x64.tar.xz" \
			"$(arg NODE_SHA256_ARM64)  node-v${node_version}-linux-arm64.tar.xz"; do
			grep -qxF "$want" "$sig" || fail 0 "$sig does not list '$want'"
		done
		if command -v gpg >/dev/null 2>&1; then
			local home
			home=$(mktemp -d)
			if ! GNUPGHOME=$home gpg --batch --quiet --import "scripts/keys/node-$key.asc" 2>/dev/null ||
				! GNUPGHOME=$home gpg --batch --status-fd 1 --verify "$sig" 2>/dev/null | grep -q "^\[GNUPG:\] VALIDSIG $key "; then
				fail 0 "$sig does not verify with scripts/keys/node-$key.asc"
			fi
			GNUPGHOME=$home gpgconf --kill all 2>/dev/null || true
			rm -rf "$home"
		else
			echo "update-pins: gpg not installed: skipped the Node signature check"
		fi
	fi

	echo "update-pins: $pins pins checked, $unresolved UNRESOLVED, $errors errors"
	[ "$errors" -eq 0 ] || exit 1
	if [ "$strict" = 1 ] && [ "$unresolved" -gt 0 ]; then
		echo "update-pins: --strict: $unresolved pins are UNRESOLVED" >&2
		exit 1
	fi
}

# set_arg NAME VALUE SOURCE: rewrite ARG NAME and the citation above it.
set_arg() {
	local name=$1 value=$2 source=$3 tmp
	tmp=$(mktemp)
	awk -v name="$name" -v value="$value" -v src="$source" '
		{ lines[NR] = $0 }
		END {
			for (i = 1; i <= NR; i++) {
				if (index(lines[i], "ARG " name "=") == 1) {
					if (i > 1 && index(lines[i-1], "# source: ") == 1) lines[i-1] = "# source: " src
					lines[i] = "ARG " name "=" value
				}
			}
			for (i = 1; i <= NR; i++) print lines[i]
		}' "$cf" >"$tmp"
	mv "$tmp" "$cf"
}

sha_of_url() { curl -fsSL --proto '=https' --tlsv1.2 "$1" | sha256sum | cut -d' ' -f1; }

update() {
	for t in curl jq gpg go gh crane; do
		command -v "$t" >/dev/null || { echo "update-pins: online refresh needs $t" >&2; exit 1; }
	done
	local work
	work=$(mktemp -d)
	trap 'rm -rf "$work"' EXIT

	# Base image: the index digest of the tag the FROM names.
	local from tag digest
	from=$(sed -n 's/^FROM[[:space:]]\+\([^@[:space:]]*\).*/\1/p' "$cf" | head -1)
	digest=$(crane digest "$from")
	sed -i "s|^FROM ${from}@sha256:[0-9a-fA-FA-Z]*|FROM ${from}@${digest}|" "$cf"
	echo "base: $from@$digest (crane digest $from)"

	# Go.
	local gov json
	gov=$(arg GO_VERSION)
	json=$(curl -fsSL 'https://go.dev/dl/?mode=json&include=all')
	for a in amd64 arm64; do
		local s
		s=$(jq -r --arg f "go${gov}.linux-${a}.tar.gz" '.[].files[] | select(.filename == $f) | .sha256' <<<"$json")
		[[ "$s" =~ ^[0-9a-f]{64}$ ]] || { echo "update-pins: go.dev has no sha256 for go${gov}.linux-${a}" >&2; exit 1; }
		set_arg "GO_SHA256_${a^^}" "$s" "https://go.dev/dl/?mode=json&include=all (go${gov}.linux-${a}.tar.gz)"
	done

	# Node: signature first, then the sums.
	local nv key sig
	nv=$(arg NODE_VERSION) key=$(arg NODE_RELEASE_KEY)
	sig=scripts/pins/node-v${nv}-SHASUMS256.txt.asc
	curl -fsSL --proto '=https' "https://nodejs.org/dist/v${nv}/SHASUMS256.txt.asc" -o "$work/shasums.asc"
	GNUPGHOME=$work gpg --batch --quiet --import "scripts/keys/node-$key.asc"
	GNUPGHOME=$work gpg --batch --status-fd 1 --verify "$work/shasums.asc" 2>/dev/null | grep -q "^\[GNUPG:\] VALIDSIG $key " ||
		{ echo "update-pins: Node SHASUMS256.txt.asc is not signed by $key (a new releaser? add their key from nodejs/release-keys)" >&2; exit 1; }
	cp "$work/shasums.asc" "$sig"
	set_arg NODE_SHA256_AMD64 "$(awk -v f="node-v${nv}-linux-x64.tar.xz" '$2 == f {print $1}' "$sig")" "https://nodejs.org/dist/v${nv}/SHASUMS256.txt.asc (signed by $key; node-v${nv}-linux-x64.tar.xz)"
	set_arg NODE_SHA256_ARM64 "$(awk -v f="node-v${nv}-linux-arm64.tar.xz" '$2 == f {print $1}' "$sig")" "https://nodejs.org/dist/v${nv}/SHASUMS256.txt.asc (signed by $key; node-v${nv}-linux-arm64.tar.xz)"

	# gh and yq: module zips, checked against sum.golang.org by go mod download.
	local mod ver name zip h1
	for spec in GH:github.com/cli/cli/v2 YQ:github.com/mikefarah/yq/v4; do
		name=${spec%%:*} mod=${spec#*:} ver=v$(arg "${name}_VERSION")
		zip=$(GOFLAGS=-mod=mod GOSUMDB=sum.golang.org go mod download -json "$mod@$ver" | jq -r .Zip)
		h1=$(GOFLAGS=-mod=mod go mod download -json "$mod@$ver" | jq -r .Sum)
		local s
		s=$(sha_of_url "https://proxy.golang.org/$mod/@v/$ver.zip")
		[ "$s" = "$(sha256sum "$zip" | cut -d' ' -f1)" ] || { echo "update-pins: proxy zip of $mod@$ver differs from the sumdb-checked one" >&2; exit 1; }
		for a in AMD64 ARM64; do
			set_arg "${name}_SHA256_$a" "$s" "https://proxy.golang.org/$mod/@v/$ver.zip (sum.golang.org $h1)"
		done
	done

	# OpenShell: attestation, then the publisher's checksum files.
	local osv base
	osv=$(arg OPENSHELL_VERSION)
	base="https://github.com/NVIDIA/OpenShell/releases/download/$osv"
	for part in ":openshell:musl:" "GATEWAY_:openshell-gateway:gnu:-gateway" "SANDBOX_:openshell-sandbox:gnu:-sandbox"; do
		IFS=: read -r prefix asset libc sumsfx <<<"$part"
		curl -fsSL --proto '=https' "$base/openshell${sumsfx}-checksums-sha256.txt" -o "$work/sums.txt"
		for a in AMD64:x86_64 ARM64:aarch64; do
			local A=${a%%:*} arch=${a#*:} file s
			file="$asset-$arch-unknown-linux-$libc.tar.gz"
			curl -fsSL --proto '=https' "$base/$file" -o "$work/$file"
			gh attestation verify "$work/$file" --repo NVIDIA/OpenShell \
				--signer-workflow NVIDIA/OpenShell/.github/workflows/release-tag.yml >/dev/null
			s=$(awk -v f="$file" '$2 == f || $2 == "*" f {print $1}' "$work/sums.txt")
			[ "$s" = "$(sha256sum "$work/$file" | cut -d' ' -f1)" ] || { echo "update-pins: $file does not match its checksum file" >&2; exit 1; }
			set_arg "OPENSHELL_${prefix}SHA256_$A" "$s" "$base/openshell${sumsfx}-checksums-sha256.txt ($file, gh attestation verified)"
		done
	done
	local sup
	sup="ghcr.io/nvidia/openshell/supervisor:${osv#v}"
	set_arg OPENSHELL_SUPERVISOR_IMAGE "$sup@$(crane digest "$sup")" "crane digest $sup"

	check
}

if [ "$mode" = check ]; then check; else update; fi
