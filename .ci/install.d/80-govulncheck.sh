#!/usr/bin/env bash
# .ci/run's vulnerability gate: govulncheck, and a Go vulnerability database it
# reads offline (-db file://...), because CI reaches the Go module proxy but
# not vuln.go.dev. The database comes from the module proxy too: the module
# golang.org/x/vulndb carries every report as OSV JSON (data/osv/*.json), and
# its own cmd/indexdb writes them out in govulncheck's database format v1
# (index/db.json, index/modules.json, index/vulns.json, ID/<id>.json, each
# also gzipped). Both versions are pinned so a run is reproducible; bump
# vulndb_version (`go list -m -json golang.org/x/vulndb@latest`) to pick up
# new reports. data/osv leaves "modified" at zero (vuln.go.dev fills it in from
# git history), so the built database reports a last-modified of 0001-01-01;
# govulncheck does not use that date for matching.
#
# Idempotent: installs govulncheck only when missing or not the pinned
# version, and builds the database once per vulndb version into
# ${XDG_CACHE_HOME:-~/.cache}/fullsend-ci/vulndb/<version>.
#
#   bash .ci/install.d/80-govulncheck.sh           # install and build
#   bash .ci/install.d/80-govulncheck.sh --db-dir  # print the database dir only
set -euo pipefail

govulncheck_version=v1.9.0
vulndb_version=v0.0.0-20261105234957-e22db6528018
db="${XDG_CACHE_HOME:-$HOME/.cache}/fullsend-ci/vulndb/${vulndb_version}"

if [ "${1:-}" = --db-dir ]; then
	echo "$db"
	exit 0
fi

gobin="$(go env GOPATH)/bin"
if ! go version -m "$gobin/govulncheck" 2>/dev/null | grep -Eq "^[[:space:]]+mod[[:space:]]+golang.org/x/vuln[[:space:]]+${govulncheck_version}[[:space:]]"; then
	GOTOOLCHAIN=local go install "golang.org/x/vuln/cmd/govulncheck@${govulncheck_version}"
fi

# .complete is written last, inside the temporary directory, so a database
# directory without it was never finished and is rebuilt.
[ -f "$db/.complete" ] && exit 0

tmp="$db.tmp.$$"
trap 'rm -rf "$tmp"' EXIT
rm -rf "$db" "$tmp"
mkdir -p "$tmp"
# Outside any module, so the project's go.mod and go.sum are never touched.
src=$(cd "$tmp" && GOTOOLCHAIN=local go mod download -json "golang.org/x/vulndb@${vulndb_version}" |
	sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p')
[ -d "$src/data/osv" ] || { echo "80-govulncheck: no data/osv in golang.org/x/vulndb@${vulndb_version} ($src)" >&2; exit 1; }
(cd "$tmp" && GOTOOLCHAIN=local go run "golang.org/x/vulndb/cmd/indexdb@${vulndb_version}" -vulns "$src/data/osv" -out "$tmp/db")

want=$(find "$src/data/osv" -name '*.json' | wc -l)
got=$(find "$tmp/db/ID" -name '*.json' | wc -l)
if [ "$want" -eq 0 ] || [ "$want" -ne "$got" ] || [ ! -s "$tmp/db/index/db.json" ] || [ ! -s "$tmp/db/index/modules.json" ]; then
	echo "80-govulncheck: incomplete database from golang.org/x/vulndb@${vulndb_version}: $got of $want entries" >&2
	exit 1
fi
echo "golang.org/x/vulndb@${vulndb_version}: $got entries" >"$tmp/db/.complete"
# Another run may have finished the same version meanwhile; either copy is good.
mv -T "$tmp/db" "$db" 2>/dev/null || [ -f "$db/.complete" ]
