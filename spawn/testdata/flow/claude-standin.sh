#!/bin/sh
# claude-standin.sh: a STAND-IN for the claude runtime in the spawn flow test
# (flow_e2e_test.go). It PLAYS THE MODEL: no model runs. The openshell fake
# runs it LOCALLY in a scratch directory that plays the sandbox (the fake
# sandboxes nothing and does not enforce the L7 policy), as
#   claude --print --agent NAME <runtime flags>
# with the prompt on stdin and, loaded by the runner from the env file it
# installed in the sandbox, FULLSEND_FORGE_URL, FULLSEND_AGENT_TOKEN and, for
# the orchestrator, FULLSEND_SPAWN_URL.
#
# The orchestrator (triage) spawns its three subagents through POST
# /run-agent, then comments on the issue and labels it. Each subagent reads
# the issue through the forge proxy and ATTEMPTS to comment, which the
# proxy must refuse (read tier). Every status is reported in the agent's JSON
# result on stdout.
#
# Evidence for the test harness (not something an agent in a real sandbox
# could reach) goes to ../evidence next to this script: the env file the
# runner delivered, the environment the runtime saw, the fake's record of the
# sandbox (holding the policy given to `sandbox create --policy`), and the
# result.
set -eu

agent=
while [ $# -gt 0 ]; do
	case "$1" in
	--agent) agent=$2; shift 2 ;;
	*) shift ;;
	esac
done
[ -n "$agent" ] || { echo "stand-in: no --agent" >&2; exit 64; }

ev=$(cd "$(dirname "$0")/.." && pwd)/evidence
prompt=$(cat)

# The runner stages under /sandbox, or /tmp when the tier keeps /sandbox
# read-only (runner/agent.go stageRoot).
envf="$HOME/.fullsend/env/run.env"
[ -f "$envf" ] || envf="$OPENSHELL_FAKE_SANDBOX_ROOT/tmp/.fullsend/env/run.env"
cp "$envf" "$ev/$agent.run.env"
env | sort > "$ev/$agent.environ"
cp "$(dirname "$OPENSHELL_FAKE_SANDBOX_ROOT")/$OPENSHELL_SANDBOX.json" "$ev/$agent.sandbox.json"

# The prompt names the item: "... for OWNER/REPO, item #N ...".
repo=$(printf '%s\n' "$prompt" | sed -n 's/.* for \([A-Za-z0-9_.-]*\/[A-Za-z0-9_.-]*\), item #\([0-9]*\).*/\1/p' | head -n 1)
issue=$(printf '%s\n' "$prompt" | sed -n 's/.* for \([A-Za-z0-9_.-]*\/[A-Za-z0-9_.-]*\), item #\([0-9]*\).*/\2/p' | head -n 1)
[ -n "$repo" ] && [ -n "$issue" ] || { echo "stand-in: no OWNER/REPO and item in the prompt: $prompt" >&2; exit 65; }

# The bearer token goes to curl in a header file, never in its argv.
auth="$HOME/.fullsend-auth"
umask 077
printf 'Authorization: Bearer %s\n' "$FULLSEND_AGENT_TOKEN" > "$auth"

# call METHOD URL [JSON BODY]: prints the HTTP status; the body goes to $out.
call() {
	out="$HOME/.last-response"
	if [ $# -ge 3 ]; then
		curl -sS --max-time 60 -o "$out" -w '%{http_code}' -X "$1" -H @"$auth" \
			-H 'Content-Type: application/json' --data-binary "$3" "$2"
	else
		curl -sS --max-time 60 -o "$out" -w '%{http_code}' -X "$1" -H @"$auth" "$2"
	fi
}

api="$FULLSEND_FORGE_URL/repos/$repo/issues/$issue"

case "$agent" in
triage)
	[ -n "${FULLSEND_SPAWN_URL:-}" ] || { echo "stand-in: the orchestrator got no spawn URL" >&2; exit 66; }
	subagents="duplicate-detector completeness-assessor reproducibility-verifier"
	for sub in $subagents; do
		(
			curl -sS --max-time 90 -o "$ev/spawn-$sub.json" -w '%{http_code}' -X POST -H @"$auth" \
				-H 'Content-Type: application/json' \
				--data-binary "{\"agent\":\"$sub\",\"prompt\":\"Run as the $sub agent for $repo, item #$issue: assess it.\"}" \
				"$FULLSEND_SPAWN_URL/run-agent" > "$ev/spawn-$sub.status"
		) &
	done
	wait
	comment=$(call POST "$api/comments" '{"body":"Triage: duplicate-detector, completeness-assessor and reproducibility-verifier reported; needs more information."}')
	labels=$(call POST "$api/labels" '{"labels":["needs-info"]}')
	result="{\"agent\":\"triage\",\"spawn\":{"
	sep=
	for sub in $subagents; do
		result="$result$sep\"$sub\":$(cat "$ev/spawn-$sub.status")"
		sep=,
	done
	result="$result},\"comment\":$comment,\"labels\":$labels}"
	;;
*)
	read=$(call GET "$api")
	# A prompt-injected subagent tries to write: the proxy must refuse it.
	write=$(call POST "$api/comments" "{\"body\":\"$agent closes this issue\"}")
	result="{\"agent\":\"$agent\",\"read\":$read,\"comment_attempt\":$write}"
	;;
esac

printf '%s\n' "$result" > "$ev/$agent.result.json"
printf '%s\n' "$result"
