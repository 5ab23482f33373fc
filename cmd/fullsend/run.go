package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/fullsend-ai/agent-sandbox/bundle"
	"github.com/fullsend-ai/agent-sandbox/cienv"
	"github.com/fullsend-ai/agent-sandbox/ciout"
	"github.com/fullsend-ai/agent-sandbox/handover"
	"github.com/fullsend-ai/agent-sandbox/placeholder"
	"github.com/fullsend-ai/agent-sandbox/runner"

	"github.com/fullsend-ai/agent-sandbox/internal/atomicfile"
)

// runFlags holds the flags of `fullsend run`.
type runFlags struct {
	openshellFlags
	dir, digest, prompt, promptFile, workspace, artifacts, diagDir, result string
	output                                                                 outputFormat
	cpu, memory                                                            string
	gatewayPort                                                            int
	sets, downloads, envFiles, passEnv, publicEnv, providers, gatewayArgs  []string
	noStartGateway                                                         bool
	timeout, gatewayTimeout, readyTimeout                                  time.Duration
}

func newRunCmd() *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "run AGENT [DIR]",
		Short: "Run one agent inside an OpenShell sandbox with its verified, compiled policy",
		Long: `Run verifies the compiled project (the policy manifest and, with
--policies-digest, required in CI, that it is the signed one; every policy and agent file
against the manifest digests), resolves the runtime placeholders from the CI
environment (GitHub Actions, GitLab CI) and --set, checks the openshell CLI
version, ssh, the sandbox image (pinned, and exactly an image fullsend verify
verified and handed over: --verified-image, --verified-sandbox-image; refused
in CI otherwise) and the gateway (--gateway auto starts
openshell-gateway in the container, podman driver, when none is healthy),
creates a sandbox from the pinned image with the resolved policy, confirms the sandbox
enforces it, installs the agent, runs it with 'openshell sandbox exec',
downloads the declared outputs and always deletes the sandbox.

It never runs an agent outside a sandbox.

Exit codes:
` + exitCodeHelp(),
		Example: `  fullsend run summarizer
  fullsend run summarizer . --set ISSUE_NUMBER=42 --prompt-file prompt.md
  FULLSEND_POLICIES_DIGEST=sha256:... fullsend run summarizer --provider anthropic=anthropic:ANTHROPIC_API_KEY
  echo "Summarize issue 42" | fullsend run summarizer --download out --artifacts results -o json
  fullsend run summarizer --pass-env FULLSEND_AGENT_TOKEN --public-env FULLSEND_AGENT --public-env FULLSEND_SPAWN_URL`,
		// AGENT is checked in RunE, which lists the project's agents.
		Args: cobra.MaximumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := dirFromArgs(cmd, args, 1, "dir", &f.dir); err != nil {
				return err
			}
			if len(args) == 0 {
				return usageErrorf("missing AGENT (usage: %s; %s)", cmd.UseLine(), runAgentsHint(cmd, f.dir))
			}
			return runAgent(cmd, args[0], f)
		},
	}
	fl := cmd.Flags()
	deprecatedDirFlag(fl, &f.dir, "dir", "/opt/fullsend", "compiled project directory DIR (agents/, skills/, policies/; default /opt/fullsend)")
	fl.StringVar(&f.digest, "policies-digest", os.Getenv(handover.PoliciesDigest), "sha256 of policies/manifest.json, as exported by fullsend verify (env FULLSEND_POLICIES_DIGEST); required in CI, elsewhere an unpinned run says so")
	fl.StringArrayVar(&f.sets, "set", nil, "placeholder value KEY=VALUE, wins over the CI environment (repeatable)")
	fl.StringVar(&f.prompt, "prompt", "", "prompt for the agent")
	fl.StringVar(&f.promptFile, "prompt-file", "", "file holding the prompt ('-' for standard input)")
	fl.StringVar(&f.workspace, "workspace", "", "directory uploaded into the sandbox as the agent's working directory (default $GITHUB_WORKSPACE or $CI_PROJECT_DIR)")
	fl.StringArrayVar(&f.downloads, "download", nil, "sandbox path to download after the run, relative to the workspace or absolute (repeatable)")
	fl.StringVar(&f.artifacts, "artifacts", "fullsend-out", "local directory for downloaded outputs")
	fl.StringArrayVar(&f.envFiles, "env-file", nil, "KEY=VALUE file loaded into the agent's environment inside the sandbox, values masked (repeatable)")
	fl.StringArrayVar(&f.passEnv, "pass-env", nil, "pass this variable (or every variable with this PREFIX*) from the environment to the agent, through a file in the sandbox, its value masked in every log (repeatable); a PREFIX* never passes a forge or CI credential such as GITHUB_TOKEN or CI_JOB_TOKEN: name one to pass it")
	fl.StringArrayVar(&f.publicEnv, "public-env", nil, "pass this variable like --pass-env but leave its value readable in logs, for values that are not secret (a NAME, not a pattern; never a credential; repeatable)")
	fl.StringArrayVar(&f.providers, "provider", nil, "OpenShell credential provider: NAME (existing) or NAME=TYPE:ENV[,ENV] created from those variables (repeatable)")
	f.openshellFlags.add(fl)
	fl.StringArrayVar(&f.gatewayArgs, "gateway-arg", nil, "argument for a gateway the runner starts (repeatable)")
	fl.BoolVar(&f.noStartGateway, "no-start-gateway", false, "same as --gateway existing")
	fl.IntVar(&f.gatewayPort, "gateway-port", 17670, "port of a gateway the runner starts, on 127.0.0.1 (0 = a free one)")
	fl.DurationVar(&f.timeout, "timeout", 0, "bound on the whole run, cleanup excluded (0 = none)")
	fl.DurationVar(&f.gatewayTimeout, "gateway-timeout", time.Minute, "wait for a started gateway to be healthy")
	fl.DurationVar(&f.readyTimeout, "ready-timeout", 5*time.Minute, "wait for the sandbox to be Ready")
	fl.StringVar(&f.cpu, "cpu", "", "sandbox CPU limit, e.g. 2 or 500m")
	fl.StringVar(&f.memory, "memory", "", "sandbox memory limit, e.g. 4Gi")
	fl.StringVar(&f.diagDir, "diag-dir", "", "where every run keeps its OpenShell logs (run evidence) and a failed run its diagnostic bundle (default $RUNNER_TEMP/fullsend-diag or ./fullsend-diag)")
	fl.StringVar(&f.result, "result", "", "also write the JSON result to this file")
	addOutputFlag(cmd, &f.output)
	return cmd
}

func runAgent(cmd *cobra.Command, agent string, f runFlags) error {
	if err := f.check(); err != nil {
		return err
	}
	if err := compiledProject(f.dir); err != nil {
		return exitError{code: runner.ExitPolicy, err: err}
	}
	// An unknown agent is refused before the runner starts: no diagnostic
	// bundle is left for a run that never was.
	if err := unknownAgent(f.dir, agent); err != nil {
		return exitError{code: runner.ExitPolicy, err: err}
	}
	values, err := placeholder.ParseSet(f.sets)
	if err != nil {
		return exitError{code: runner.ExitPolicy, err: setFlagError(err)}
	}
	providers, err := parseProviders(f.providers)
	if err != nil {
		return err
	}
	prompt, err := readPrompt(cmd.InOrStdin(), f)
	if err != nil {
		return usageErrorf("%v", err)
	}
	// The agent's output is the command's output; with -o json the result
	// document takes stdout and the agent's output joins the log on stderr.
	agentOut, logOut := cmd.OutOrStdout(), cmd.ErrOrStderr()
	if f.output == outputJSON {
		agentOut = logOut
	}
	env, public, err := runEnvVars(cmd.ErrOrStderr(), os.Environ(), f.passEnv, f.publicEnv)
	if err != nil {
		return usageErrorf("%v", err)
	}
	ci := cienv.Detect(os.Getenv)
	workspace, diag := runDirs(f, ci)
	r, err := runner.New(f.runnerOptions(providers, agentOut, logOut, diag))
	if err != nil {
		return exitError{code: runner.ExitCode(err), err: cliError(fmt.Errorf("%s: %w", f.dir, err), nil)}
	}
	res, runErr := r.Run(cmd.Context(), runner.Request{
		Agent: agent, Prompt: prompt, Values: values, Workspace: workspace,
		Outputs: f.downloads, OutputDir: f.artifacts, ExtraEnvFiles: f.envFiles, Env: env, PublicEnv: public, Timeout: f.timeout,
	})
	res.Calls = nil
	if runErr = writeResults(cmd.OutOrStdout(), f, res, runErr); runErr != nil {
		return exitError{code: runner.ExitCode(runErr), err: logSafe(ci, res, runErr)}
	}
	return nil
}

// parseProviders parses the --provider flags.
func parseProviders(specs []string) ([]runner.Provider, error) {
	var providers []runner.Provider
	for _, p := range specs {
		pr, err := runner.ParseProvider(p)
		if err != nil {
			return nil, usageErrorf("--provider %v", err)
		}
		providers = append(providers, pr)
	}
	return providers, nil
}

// writeResults writes the run's result to --result and, with -o json, to
// w. It returns the run's error, else the first of its own.
func writeResults(w io.Writer, f runFlags, res runner.Result, runErr error) error {
	if f.result != "" {
		if err := writeRunResult(f.result, res); err != nil && runErr == nil {
			runErr = err
		}
	}
	if f.output == outputJSON {
		if err := writeJSON(w, res); err != nil && runErr == nil {
			runErr = err
		}
	}
	return runErr
}

// runnerOptions are the runner's options from the flags: the agent's
// output goes to agentOut, the run's log to logOut.
func (f runFlags) runnerOptions(providers []runner.Provider, agentOut, logOut io.Writer, diag string) runner.Options {
	return runner.Options{
		Project:         os.DirFS(f.dir),
		PoliciesDigest:  f.digest,
		OpenShell:       f.openshell,
		Gateway:         f.gateway,
		GatewayArgs:     f.gatewayArgs,
		StartGateway:    !f.noStartGateway,
		GatewayMode:     gatewayMode(f),
		GatewayPort:     f.gatewayPort,
		GatewayDriver:   f.gatewayDriver,
		SupervisorImage: f.supervisorImage,
		GatewayTimeout:  f.gatewayTimeout,
		ReadyTimeout:    f.readyTimeout,
		Env: runner.Environment{
			Getenv:     os.LookupEnv,
			Environ:    os.Environ,
			Root:       os.DirFS("/"),
			LookupHost: net.DefaultResolver.LookupHost,
			Explicit:   "--set",
		},
		Stdout:       agentOut,
		Log:          logOut,
		SandboxImage: f.sandboxImage,
		Verified:     f.verified,
		CPU:          f.cpu,
		Memory:       f.memory,
		Providers:    providers,
		DiagDir:      diag,
	}
}

// envOr returns the variable's value, or def when it is unset or empty.
func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// gatewayMode is --gateway, with --no-start-gateway meaning existing.
func gatewayMode(f runFlags) string {
	if f.noStartGateway {
		return runner.GatewayExisting
	}
	return f.gatewayMode
}

// compiledProject says where run looked when dir holds no compiled
// project: the manifest path, and what DIR is by default.
func compiledProject(dir string) error {
	manifest := filepath.Join(dir, "policies", bundle.ManifestFile)
	if _, err := os.Stat(manifest); err != nil {
		return fmt.Errorf("no compiled project in %s: %s: %w (hint: inside the image the project is /opt/fullsend, the default; elsewhere give the directory you compiled: fullsend run AGENT DIR, after fullsend policy compile DIR)", dir, manifest, errors.Unwrap(err))
	}
	return nil
}

// logSafe returns the run error to print: in CI its message quotes
// openshell and the sandbox, so it is printed masked (Result.Error) and
// escaped like every line of the run's log.
func logSafe(ci cienv.Env, res runner.Result, err error) error {
	if res.Error != "" {
		// The runner reported it already, once, as the CI's error
		// annotation (locally: its error line) with its cause and next
		// step: do not repeat it.
		return logSafeError{err: err, msg: fmt.Sprintf("run %s failed with exit %d; the error is reported above", res.Agent, res.ExitCode)}
	}
	if !ci.IsCI() {
		return err
	}
	return logSafeError{err: err, msg: ciout.Escape(ci.Kind(), err.Error())}
}

// logSafeError is a run error whose message is printed as msg.
type logSafeError struct {
	err error
	msg string
}

func (e logSafeError) Error() string { return e.msg }
func (e logSafeError) Unwrap() error { return e.err }

// runDirs are the agent's workspace and the diagnostic bundle directory:
// the flags, else the CI job's checkout and temporary directory.
func runDirs(f runFlags, ci cienv.Env) (workspace, diag string) {
	workspace, diag = f.workspace, f.diagDir
	if workspace == "" {
		workspace = ci.Workspace()
	}
	if diag == "" {
		diag = "fullsend-diag"
		if tmp := ci.TempDir(); tmp != "" {
			diag = filepath.Join(tmp, "fullsend-diag")
		}
	}
	return workspace, diag
}

// runEnvVars collects the variables of --pass-env (masked) and
// --public-env (shown) from environ; a --public-env name wins over a
// --pass-env pattern. It tells w which credentials the patterns left out.
func runEnvVars(w io.Writer, environ, pass, public []string) (env, pub map[string]string, err error) {
	env, skipped, err := runner.SelectEnv(environ, pass)
	if err != nil {
		return nil, nil, fmt.Errorf("--pass-env %w", err)
	}
	for _, n := range public {
		if strings.Contains(n, "*") {
			return nil, nil, fmt.Errorf("--public-env %q: give a variable name, not a pattern", n)
		}
	}
	pub, _, err = runner.SelectEnv(environ, public)
	if err != nil {
		return nil, nil, fmt.Errorf("--public-env %w", err)
	}
	for k := range pub {
		delete(env, k)
	}
	if len(skipped) > 0 {
		fmt.Fprintf(w, "fullsend: --pass-env patterns leave out %s (forge or CI credentials); name one with --pass-env NAME to pass it\n",
			strings.Join(skipped, ", "))
	}
	return env, pub, nil
}

// readPrompt takes --prompt, else --prompt-file, else piped standard input.
func readPrompt(stdin io.Reader, f runFlags) (string, error) {
	switch {
	case f.prompt != "" && f.promptFile != "":
		return "", fmt.Errorf("give --prompt or --prompt-file, not both")
	case f.prompt != "":
		return f.prompt, nil
	case f.promptFile == "-":
		return readStdinPrompt(stdin)
	case f.promptFile != "":
		b, err := os.ReadFile(f.promptFile)
		return string(b), err
	}
	if st, ok := stdin.(*os.File); ok && !piped(st) {
		return "", nil
	}
	return readStdinPrompt(stdin)
}

// piped reports whether standard input is a pipe or a file, not a
// terminal.
func piped(stdin *os.File) bool {
	info, err := stdin.Stat()
	return err == nil && (info.Mode()&os.ModeNamedPipe != 0 || info.Mode().IsRegular())
}

// readStdinPrompt reads the prompt from standard input, at most 1 MiB.
func readStdinPrompt(stdin io.Reader) (string, error) {
	b, err := io.ReadAll(io.LimitReader(stdin, 1<<20))
	return string(b), err
}

// writeRunResult writes v as JSON atomically (temp file + rename).
func writeRunResult(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.Write(path, append(b, '\n'), 0o644)
}

// exitCodeHelp is run's exit-code table (runner.ExitCodes) for --help.
func exitCodeHelp() string {
	var b strings.Builder
	for _, e := range runner.ExitCodes() {
		fmt.Fprintf(&b, "  %-4s %s\n", e.Code, strings.ReplaceAll(e.Meaning, "`", ""))
	}
	return strings.TrimSuffix(b.String(), "\n")
}
