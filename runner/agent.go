package runner

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/fullsend-ai/agent-sandbox/runner/redact"
	"github.com/fullsend-ai/agent-sandbox/runner/stage"
)

// runtimeDir is where a runtime reads user-level agents and skills.
func runtimeDir(runtime string) (local, parent string) {
	if runtime == RuntimeOpenCode {
		return "opencode", sandboxHome + "/.config/"
	}
	return ".claude", sandboxHome + "/"
}

// bootstrap uploads the verified agent and skill files, the runner's own
// files (env file, the Claude Code --agents definition) and the staged
// workspace.
func (x *run) bootstrap(ctx context.Context) error {
	stage := filepath.Join(x.tmp, "stage")
	local, parent := runtimeDir(x.agent.Entry.Runtime)
	cfg := filepath.Join(stage, local)
	for _, t := range slices.Sorted(maps.Keys(x.agent.Files)) {
		if err := writeStaged(filepath.Join(cfg, filepath.FromSlash(x.agentFilePath(t))), x.agent.Files[t]); err != nil {
			return err
		}
	}
	if err := x.upload(ctx, cfg, parent); err != nil {
		return err
	}
	x.logf("installed %d verified file(s) under %s%s", len(x.agent.Files), parent, local)
	if err := x.installRunnerFiles(ctx, filepath.Join(stage, ".fullsend")); err != nil {
		return err
	}
	if x.staged != nil {
		if err := x.upload(ctx, x.staged.Dir, x.stageRoot()+"/"); err != nil {
			return err
		}
		x.logf("uploaded the staged workspace to %s", x.workdir())
	}
	return nil
}

// agentFilePath is where a verified file (target, slash-separated) goes
// in the runtime's directory: OpenCode's agent directory is singular.
func (x *run) agentFilePath(target string) string {
	if rest, ok := strings.CutPrefix(target, "agents/"); ok && x.agent.Entry.Runtime == RuntimeOpenCode {
		return "agent/" + rest
	}
	return target
}

// writeStaged writes a file the runner stages for upload (0600, its
// directories 0700).
func writeStaged(p string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return fmt.Errorf("%w: staging: %w", ErrSandbox, err)
	}
	if err := os.WriteFile(p, data, 0o600); err != nil {
		return fmt.Errorf("%w: staging: %w", ErrSandbox, err)
	}
	return nil
}

// Files the runner installs under its directory (runnerDir) for the
// runtime command line, relative to that directory.
const (
	envFile    = "env/run.env"
	agentsFile = "agents.json"
)

// tmpRoot is where the runner stages when the policy keeps /sandbox read-only:
// every tier's baseline has /tmp in read_write
// (policycue/schema/catalog/runtimes.cue).
const tmpRoot = "/tmp"

// stageRoot is the sandbox directory the runner's files and the workspace
// are uploaded into. An upload is `tar xf` run as the sandbox user under
// Landlock (see checkWritable), so it must be a path the policy lets that
// user write: /sandbox in tiers that may write it, /tmp otherwise (the
// read-only tiers keep /sandbox in read_only).
func (x *run) stageRoot() string {
	if x.root == "" {
		return sandboxHome
	}
	return x.root
}

// runnerDir is the runner's own directory in the sandbox.
func (x *run) runnerDir() string { return path.Join(x.stageRoot(), ".fullsend") }

// installRunnerFiles writes and uploads /sandbox/.fullsend: the env file
// (one canonical file written from the pairs validated in prepare, not the
// caller's file again) and, for Claude Code, the verified definition as
// --agents JSON.
func (x *run) installRunnerFiles(ctx context.Context, dir string) error {
	files, err := x.runnerFiles()
	if err != nil || len(files) == 0 {
		return err
	}
	for _, f := range files {
		if err := writeStaged(filepath.Join(dir, filepath.FromSlash(f[0])), []byte(f[1])); err != nil {
			return err
		}
	}
	return x.upload(ctx, dir, x.stageRoot()+"/")
}

// runnerFiles are the runner's files, as (path, content) pairs: the env
// file when there are variables, the --agents JSON for Claude Code.
func (x *run) runnerFiles() ([][2]string, error) {
	var files [][2]string
	if len(x.envVars) > 0 {
		var b strings.Builder
		for _, kv := range x.envVars {
			b.WriteString(kv[0] + "=" + kv[1] + "\n")
		}
		files = append(files, [2]string{"env/run.env", b.String()})
	}
	if x.agent.Entry.Runtime != RuntimeOpenCode {
		def, err := stage.ClaudeAgentsJSON(x.agent.Name, x.agent.Files["agents/"+x.agent.Name+".md"])
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrPolicy, err)
		}
		files = append(files, [2]string{"agents.json", string(def)})
	}
	return files, nil
}

func (x *run) upload(ctx context.Context, local, dest string) error {
	if err := x.d.Upload(ctx, x.res.Sandbox, local, dest); err != nil {
		return fmt.Errorf("%w: upload %s: %w", ErrSandbox, filepath.Base(local), errOr(ctxErr(ctx), err))
	}
	return nil
}

// workdir is the directory the agent runs in inside the sandbox.
func (x *run) workdir() string {
	if x.req.Workspace == "" {
		return sandboxHome
	}
	abs, err := filepath.Abs(x.req.Workspace)
	if err != nil {
		return sandboxHome
	}
	return path.Join(x.stageRoot(), filepath.Base(abs))
}

// runtimeCommand is the command line of the agent runtime: the agent name
// and the tier's flags from the manifest, never a secret. The verified
// definition wins over anything in the workspace:
//   - Claude Code loads user-level settings only (--setting-sources user:
//     not the project's .claude/settings.json or settings.local.json with
//     their hooks, permissions and env), no MCP server from any
//     configuration (--strict-mcp-config: not .mcp.json), and gets the
//     definition as --agents JSON, which it ranks above project and user
//     agents. The JSON is read from the file the runner installed, inside
//     the sandbox, so the call records stay short.
//   - OpenCode runs with OPENCODE_DISABLE_PROJECT_CONFIG and
//     OPENCODE_DISABLE_CLAUDE_CODE (runtimeEnv), so neither the project's
//     opencode.json, .opencode/ and AGENTS.md nor CLAUDE.md and
//     .claude/skills are read; the user-level definition is the only one.
//
// The project's runtime config is also left out of the staged workspace.
func (x *run) runtimeCommand() []string {
	e := x.agent.Entry
	var cmd, script []string
	switch e.Runtime {
	case RuntimeOpenCode:
		cmd = []string{"opencode", "run", "--agent", x.agent.Name}
	default:
		cmd = []string{"claude", "--print", "--agent", x.agent.Name, "--setting-sources", "user", "--strict-mcp-config"}
	}
	cmd = append(cmd, e.RuntimeFlags[e.Runtime]...)
	if len(x.envVars) > 0 {
		// Export the env file inside the sandbox so its values stay out of
		// argv. `export "$line"` takes each KEY=VALUE literally: no word
		// splitting, quoting or expansion of the value.
		script = append(script, `while IFS= read -r line; do export "$line"; done < `+path.Join(x.runnerDir(), envFile))
	}
	switch {
	case e.Runtime != RuntimeOpenCode:
		// --agents goes right after the program name, before the tier's
		// flags (one of which may take several values).
		script = append(script, `a=$(cat `+path.Join(x.runnerDir(), agentsFile)+`) || exit 70`, `c=$1`, `shift`, `exec "$c" --agents "$a" "$@"`)
	case len(script) > 0:
		script = append(script, `exec "$@"`)
	default:
		return cmd
	}
	return append([]string{"sh", "-c", strings.Join(script, "; "), "fullsend-env"}, cmd...)
}

// execAgent runs the runtime with `sandbox exec`, streaming its output, and
// retries once when the first egress met OpenShell's transient 403.
func (x *run) execAgent(ctx context.Context) error {
	cmd, prompt, timeout := x.runtimeCommand(), x.prompt(), remaining(ctx)
	for attempt := 1; ; attempt++ {
		code, stderr, started, err := x.execRuntime(ctx, cmd, prompt, timeout)
		if cerr := ctxErr(ctx); cerr != nil {
			return cerr
		}
		if err != nil {
			return fmt.Errorf("%w: exec: %w", ErrSandbox, err)
		}
		if code == 0 {
			x.logf("agent %s exited 0", x.agent.Name)
			return nil
		}
		if attempt == 1 && time.Since(started) < egressRaceWindow && bytes.Contains(stderr, []byte(`"policy_denied"`)) {
			x.logf("agent failed on its first egress with policy_denied within %s (OpenShell #1942); retrying once", egressRaceWindow)
			if err := sleep(ctx, x.r.backoff(2)); err != nil {
				return err
			}
			continue
		}
		return x.agentFailed(ctx, code, stderr)
	}
}

// prompt is the request's prompt, or one describing the CI context when
// it gave none.
func (x *run) prompt() string {
	if strings.TrimSpace(x.req.Prompt) == "" {
		return x.defaultPrompt()
	}
	return x.req.Prompt
}

// remaining is the time left before ctx's deadline, 0 when it has none.
func remaining(ctx context.Context) time.Duration {
	if dl, ok := ctx.Deadline(); ok {
		return time.Until(dl)
	}
	return 0
}

// execRuntime runs the runtime command once with `sandbox exec`, in a log
// group, and returns its exit code, its stderr and when it started.
func (x *run) execRuntime(ctx context.Context, cmd []string, prompt string, timeout time.Duration) (code int, stderr []byte, started time.Time, err error) {
	end := x.rep.Group(fmt.Sprintf("agent %s (sandbox %s)", x.agent.Name, x.res.Sandbox))
	defer end()
	// The agent's stdout is its result; its stderr (and the CLI's) is
	// log, kept apart so a caller reading the result gets only the
	// agent's output. Both are untrusted: masked first (a secret must
	// be matched as the agent wrote it), then fenced for the CI.
	stdoutW, stderrW, endUntrusted := x.rep.Untrusted(x.r.opts.Stdout, x.r.opts.Log)
	defer endUntrusted()
	out := redact.NewWriter(x.mask, stdoutW)
	errOut := redact.NewWriter(x.mask, stderrW)
	started = time.Now()
	code, stderr, err = x.d.Exec(ctx, execSpec{
		name: x.res.Sandbox, workdir: x.workdir(), timeout: timeout, command: cmd, env: x.runtimeEnv(),
		stdin: strings.NewReader(prompt), stdout: out, stderr: errOut,
	})
	_ = out.Flush()
	_ = errOut.Flush()
	return code, stderr, started, err
}

// agentFailed is the error of a run whose exec exited code. The CLI exits
// non-zero for its own failures too (the sandbox went away, the gateway
// dropped): only a sandbox still Ready makes the status the agent's.
func (x *run) agentFailed(ctx context.Context, code int, stderr []byte) error {
	if phase, perr := x.d.Phase(ctx, x.res.Sandbox); perr != nil || !strings.EqualFold(phase, "Ready") {
		if cerr := ctxErr(ctx); cerr != nil {
			return cerr
		}
		// perr is nil when the phase is not Ready: %v, not %w.
		return fmt.Errorf("%w: sandbox %s lost during the run (exec exit %d, phase %q, %v): %s",
			ErrSandbox, x.res.Sandbox, code, phase, perr, lastLine(x.mask.String(string(stderr))))
	}
	return &AgentExitError{Agent: x.agent.Name, Code: code}
}

// lastLine returns the last non-empty line of s.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// defaultPrompt describes the CI context when no prompt was given.
func (x *run) defaultPrompt() string {
	v := x.res.Placeholders
	msg := fmt.Sprintf("Run as the %s agent", x.agent.Name)
	if v["OWNER"] != "" && v["REPO_NAME"] != "" {
		msg += fmt.Sprintf(" for %s/%s", v["OWNER"], v["REPO_NAME"])
	}
	if v["ISSUE_NUMBER"] != "" {
		msg += fmt.Sprintf(", item #%s", v["ISSUE_NUMBER"])
	}
	return msg + "."
}

// openCodeEnv is set for every OpenCode run, over the manifest's
// runtime_env: no project config (opencode.json, .opencode/, AGENTS.md)
// and no Claude Code compatibility (CLAUDE.md, .claude/skills).
var openCodeEnv = map[string]string{"OPENCODE_DISABLE_PROJECT_CONFIG": "1", "OPENCODE_DISABLE_CLAUDE_CODE": "1"}

// runtimeEnv is the tier's non-secret environment for the runtime, from
// the manifest (runtime_env) and the runner's own settings, as sorted
// KEY=VALUE pairs for `exec --env`.
func (x *run) runtimeEnv() []string {
	env := maps.Clone(x.agent.Entry.RuntimeEnv[x.agent.Entry.Runtime])
	if env == nil {
		env = map[string]string{}
	}
	if x.agent.Entry.Runtime == RuntimeOpenCode {
		maps.Copy(env, openCodeEnv)
		x.mirrorPermission(env)
	}
	out := make([]string, 0, len(env))
	for _, k := range slices.Sorted(maps.Keys(env)) {
		out = append(out, k+"="+env[k])
	}
	return out
}

// mirrorPermission makes the tier's OPENCODE_PERMISSION map, if env has
// one, carry the agent's own command allowances, as Claude Code's
// --allowedTools does (stage.OpenCodePermission).
func (x *run) mirrorPermission(env map[string]string) {
	if p, ok := env["OPENCODE_PERMISSION"]; ok {
		if mirrored, err := stage.OpenCodePermission(p, x.agent.Files["agents/"+x.agent.Name+".md"]); err == nil {
			env["OPENCODE_PERMISSION"] = mirrored
		}
	}
}
