#!/bin/sh
# A stand-in for the claude and opencode runtimes in the runner tests. The
# openshell fake runs it locally in the scratch dir that plays the sandbox.
prompt=$(cat)
echo "runtime-stub $(basename "$0") args: $*"
echo "prompt: $prompt"
mkdir -p out/repo/.git/hooks
echo "triaged" > out/result.txt
# A declared output outside the workspace (manifest outputs: /sandbox/report).
mkdir -p "$HOME/report" && echo "summary" > "$HOME/report/summary.md"
if [ -n "$FULLSEND_TEST_RUNTIME_ENV" ]; then echo "runtime env: $FULLSEND_TEST_RUNTIME_ENV"; fi
ln -s /etc/passwd out/escape
echo "#!/bin/sh" > out/repo/.git/hooks/post-checkout
if [ -n "$FULLSEND_TOKEN" ]; then echo "token: $FULLSEND_TOKEN"; fi
if [ -n "$FULLSEND_AGENT_TOKEN" ]; then echo "agent token: $FULLSEND_AGENT_TOKEN"; fi
if [ -n "$LITERAL" ]; then
	if [ "$LITERAL" = 'a b $HOME "q" `id`' ]; then echo "literal value intact"; else echo "literal value altered"; fi
fi
# A test may drop a script into the workspace: it runs as the agent would.
if [ -f .stub-script ]; then . ./.stub-script; fi
if [ -f .stub-sleep ]; then sleep 20; fi
if [ -f .stub-exit ]; then exit "$(cat .stub-exit)"; fi
exit 0
