#!/usr/bin/env bash
# The main job, offline, on the bundled example (testdata/triage):
#   compile -> lint -> policy tests -> build -> sign -> verify
# into an OCI layout, with a freshly generated key. Nothing leaves the machine.
#
#   bash scripts/quickstart.sh            # output under out/quickstart
#   OUT=/tmp/qs bash scripts/quickstart.sh
set -euo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-out/quickstart}
rm -rf "$out"
mkdir -p "$out"
step() { printf '\n== %s\n' "$*"; }

step "build fullsend"
go build -trimpath -o "$out/fullsend" ./cmd/fullsend
fs="$out/fullsend"
"$fs" version

step "compile the triage system (agents/*.md + skills/*/SKILL.md -> policies/)"
cp -R testdata/triage "$out/project"
rm -rf "$out/project/policies"
"$fs" policy compile "$out/project"
# The committed golden policies must be what the compiler emits today.
"$fs" policy compile --check testdata/triage

step "lint the compiled policies (OPA rules; deny findings fail)"
"$fs" policy lint "$out/project/policies"

step "policy tests: would these requests be allowed?"
"$fs" policy test "$out/project"

step "explain where the orchestrator's capabilities come from"
"$fs" policy explain triage "$out/project" | head -n 30

step "generate a signing key (password from the environment, never argv)"
export COSIGN_PASSWORD="quickstart-$$-$RANDOM"
"$fs" image keygen --output-prefix "$out/cosign"

step "build the image daemonlessly, sign it, attach SBOM and provenance"
repo=localhost/fullsend/agent-sandbox
"$fs" image build "$out/project" --base scratch --oci-layout "$out/image" \
	--tag "$repo:quickstart" --sign --key "$out/cosign.key" --builder-id "https://fullsend.dev/quickstart" \
	--digest-file "$out/digest.txt"

step "verify before run (fails closed)"
policies_digest="sha256:$(sha256sum "$out/project/policies/manifest.json" | cut -d' ' -f1)"
"$fs" verify --key "$out/cosign.pub" --oci-layout "$out/image" \
	--policies-digest "$policies_digest" --require-provenance --require-sbom \
	--github-output=false "$repo@$(cat "$out/digest.txt")"

step "done: image in $out/image, key pair $out/cosign.{key,pub}"
