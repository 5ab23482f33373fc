package runner

import (
	"fmt"
	"io"
	"io/fs"
	"regexp"
	"strings"
	"time"

	"github.com/fullsend-ai/agent-sandbox/cienv"
	"github.com/fullsend-ai/agent-sandbox/ciout"
	"github.com/fullsend-ai/agent-sandbox/denial"
	"github.com/fullsend-ai/agent-sandbox/placeholder"
	"github.com/fullsend-ai/agent-sandbox/runner/evidence"
)

// Agent runtimes the runner can start.
const (
	RuntimeClaude   = "claude"
	RuntimeOpenCode = "opencode"
)

// Provider is an OpenShell credential provider attached to the sandbox.
// With Type empty it names a provider that already exists on the gateway;
// otherwise the runner creates it from the named environment variables,
// whose values reach openshell through its environment only.
type Provider struct {
	Name          string
	Type          string
	CredentialEnv []string
}

var providerType = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]*$`)

// ParseProvider parses a provider spec: NAME, or NAME=TYPE:ENV[,ENV...].
// Errors quote the spec and name no flag; the CLI adds its own.
func ParseProvider(s string) (Provider, error) {
	name, spec, hasSpec := strings.Cut(s, "=")
	if !dnsLabel.MatchString(name) {
		return Provider{}, fmt.Errorf("%q: name must be lower-case letters, digits and '-'", s)
	}
	if !hasSpec {
		return Provider{Name: name}, nil
	}
	typ, envs, ok := strings.Cut(spec, ":")
	if !ok || typ == "" || envs == "" {
		return Provider{}, fmt.Errorf("%q: want NAME=TYPE:ENV[,ENV...], for example anthropic=anthropic:ANTHROPIC_API_KEY", s)
	}
	if !providerType.MatchString(typ) {
		return Provider{}, fmt.Errorf("%q: type %q must be lower-case letters, digits, '-' and '_'", s, typ)
	}
	credEnv, err := parseCredentialEnv(s, envs)
	if err != nil {
		return Provider{}, err
	}
	return Provider{Name: name, Type: typ, CredentialEnv: credEnv}, nil
}

// parseCredentialEnv parses the ENV[,ENV...] of the provider spec s.
func parseCredentialEnv(s, envs string) ([]string, error) {
	var names []string
	for _, e := range strings.Split(envs, ",") {
		if !envName.MatchString(e) {
			return nil, fmt.Errorf("%q: %q is not an environment variable name", s, e)
		}
		names = append(names, e)
	}
	return names, nil
}

// Options configure a Runner; they hold what is the same for every agent
// run in one job.
type Options struct {
	// Project is the compiled project root (agents/, skills/, policies/).
	Project fs.FS
	// PoliciesDigest must equal the manifest's sha256 (the digest the verify
	// step read from the signed image). It is required in CI (GitHub
	// Actions, GitLab CI: New fails with ErrUnpinned); elsewhere an empty
	// one runs the project as found, and each run logs that.
	PoliciesDigest string
	// OpenShell is the openshell CLI path; empty looks it up on PATH.
	OpenShell string
	// Gateway is the openshell-gateway path; empty looks it up on PATH.
	Gateway string
	// GatewayArgs are extra arguments for a gateway the runner starts.
	GatewayArgs []string
	// StartGateway lets the runner start openshell-gateway inside the
	// container when none is healthy; it is GatewayMode auto (true) or
	// existing (false) when GatewayMode is empty.
	StartGateway bool
	// GatewayMode is GatewayAuto, GatewayExisting or GatewayStart.
	GatewayMode string
	// GatewayPort is the port of a gateway the runner starts on 127.0.0.1
	// (0 = a free one).
	GatewayPort int
	// GatewayDriver is the compute driver of a started gateway ("" =
	// podman, the only one supported).
	GatewayDriver string
	// SupervisorImage is the supervisor image of a started gateway; it
	// must be pinned by digest.
	SupervisorImage string
	// Podman and SSH are the podman and ssh paths; empty looks them up on
	// PATH.
	Podman, SSH string
	// GatewayTimeout bounds the wait for a started gateway to be healthy.
	GatewayTimeout time.Duration
	// ReadyTimeout bounds the wait for a sandbox to be Ready.
	ReadyTimeout time.Duration
	// PollInterval is the first delay of every backoff loop.
	PollInterval time.Duration
	// Env is the machine the runner reads from.
	Env Environment
	// Stdout receives the agent's output; Log receives the runner's.
	Stdout io.Writer
	Log    io.Writer
	// Reporter renders logs for the CI; nil picks one from the environment.
	Reporter ciout.Reporter
	// SandboxImage is a separate image every sandbox is created from
	// (`sandbox create --from`), REPO@sha256:...; empty means
	// Verified.SandboxImage, else Verified.Image, the job's own image.
	// Preflight refuses an image that is not pinned by digest (ErrPreflight)
	// or not exactly one of Verified's refs (ErrUnverifiedImage); outside CI
	// only, an image with no hand-over at all runs with a warning.
	SandboxImage string
	// Verified is the verify step's hand-over: the images it verified.
	Verified VerifiedImages
	// CPU and Memory are passed to `sandbox create --cpu/--memory`.
	CPU, Memory string
	// Providers are created (when typed) and attached to every sandbox.
	Providers []Provider
	// DiagDir receives a diagnostic bundle when a run fails ("" = none).
	DiagDir string
	// EvidenceDir receives every run's OpenShell logs, in a directory
	// named after the sandbox ("" = DiagDir; both empty = none kept).
	EvidenceDir string
	// TempDir holds the resolved policy and staged files ("" = os.TempDir).
	TempDir string
	// StateDir holds the owner records of the sandboxes this runner created
	// and has not deleted yet, so that a later run reaps those a killed run
	// left ("" = DefaultStateDir of Env).
	StateDir string
}

// Request is one agent run.
type Request struct {
	// Agent is the agent name in the manifest.
	Agent string
	// Prompt is fed to the runtime on standard input.
	Prompt string
	// Values are explicit placeholder values; they win over the CI's.
	Values placeholder.Values
	// Workspace is a local directory uploaded into the sandbox; the agent
	// runs there. Empty runs in /sandbox.
	Workspace string
	// Outputs are sandbox paths (absolute, or relative to the workspace)
	// downloaded into OutputDir after the agent exits.
	Outputs   []string
	OutputDir string
	// ExtraEnvFiles are local KEY=VALUE files (for example a spawn-service
	// token) installed in the sandbox and loaded into the runtime's
	// environment; their values never reach argv and are masked in logs.
	ExtraEnvFiles []string
	// Env holds more variables for the runtime (the spawn service's
	// FULLSEND_AGENT_TOKEN...), delivered like ExtraEnvFiles: through a
	// file in the sandbox, never argv; every value is masked.
	Env map[string]string
	// PublicEnv holds variables delivered like Env whose values are not
	// secret and stay readable in logs (FULLSEND_AGENT, FULLSEND_SPAWN_URL).
	// A name may not be in both, and a credential (IsCredentialEnv) may not
	// be public.
	PublicEnv map[string]string
	// Timeout bounds the whole run, cleanup excluded (0 = none).
	Timeout time.Duration
}

// Result describes a finished run.
type Result struct {
	Agent            string            `json:"agent"`
	Sandbox          string            `json:"sandbox,omitempty"`
	CI               CIKind            `json:"ci"`
	ExitCode         int               `json:"exit_code"`
	Error            string            `json:"error,omitempty"`
	ManifestSHA256   string            `json:"manifest_sha256,omitempty"`
	PolicySHA256     string            `json:"policy_sha256,omitempty"`
	ResolvedSHA256   string            `json:"resolved_policy_sha256,omitempty"`
	OpenShellVersion string            `json:"openshell_version,omitempty"`
	Placeholders     map[string]string `json:"placeholders,omitempty"`
	PlaceholderFrom  map[string]string `json:"placeholder_sources,omitempty"`
	Outputs          []string          `json:"outputs,omitempty"`
	Removed          []string          `json:"removed_from_outputs,omitempty"`
	Missing          []string          `json:"missing_outputs,omitempty"` // not written by the agent: a warning
	Deleted          bool              `json:"sandbox_deleted"`
	GatewayStarted   bool              `json:"gateway_started"`
	GatewayEndpoint  string            `json:"gateway_endpoint,omitempty"`
	SandboxImage     string            `json:"sandbox_image,omitempty"`
	DiagDir          string            `json:"diagnostics,omitempty"`
	Duration         time.Duration     `json:"duration_ns"`
	// InOpenShell is the time spent inside openshell processes; Duration
	// minus InOpenShell is the runner's own overhead.
	InOpenShell time.Duration `json:"in_openshell_ns"`
	Calls       []Call        `json:"calls,omitempty"`
	// Steps are the run's steps with their wall time.
	Steps []StepTiming `json:"steps,omitempty"`
	// Reaped are sandboxes of earlier, killed runs this run deleted.
	Reaped []string `json:"reaped_sandboxes,omitempty"`
	// Denials counts the sandbox's denied requests by kind, the kinds of
	// package denial's table (the names `policy suggest` prints);
	// denial.KindAudit counts audit verdicts, which were forwarded.
	Denials map[denial.Kind]int `json:"denials,omitempty"`
	// Evidence describes the OpenShell logs the run kept.
	Evidence *evidence.Record `json:"evidence,omitempty"`
}

// StepTiming is one step of a run and how long it took.
type StepTiming struct {
	Name   string  `json:"name"`
	MS     float64 `json:"ms"`
	Failed bool    `json:"failed,omitempty"`
}

// Runner runs agents in OpenShell sandboxes. It holds no per-run state, so
// one Runner may serve concurrent Run calls (the spawn service does).
type Runner struct {
	opts     Options
	project  *Project
	stateDir string
}

// New verifies the project manifest (and its digest when one is pinned; in
// CI one must be) and returns a Runner.
func New(opts Options) (*Runner, error) {
	if opts.Project == nil {
		return nil, fmt.Errorf("%w: no compiled project", ErrPolicy)
	}
	opts = opts.withDefaults()
	if ci := cienv.Detect(opts.Env.Getenv.value); opts.PoliciesDigest == "" && ci.IsCI() {
		return nil, fmt.Errorf("%w: in CI (%s) only the signed project the verify step checked may run, named by its policies digest", ErrUnpinned, ci.Kind())
	}
	p, err := LoadProject(opts.Project, opts.PoliciesDigest)
	if err != nil {
		return nil, err
	}
	stateDir := opts.StateDir
	if stateDir == "" {
		stateDir = DefaultStateDir(opts.Env.Getenv)
	}
	return &Runner{opts: opts, project: p, stateDir: stateDir}, nil
}

// withDefaults fills in the options left unset: no environment, output
// and log discarded, the default timeouts and poll interval.
func (opts Options) withDefaults() Options {
	if opts.Env.Getenv == nil {
		opts.Env.Getenv = MapEnv(nil)
	}
	if opts.Stdout == nil {
		opts.Stdout = io.Discard
	}
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	if opts.GatewayTimeout <= 0 {
		opts.GatewayTimeout = time.Minute
	}
	if opts.ReadyTimeout <= 0 {
		opts.ReadyTimeout = 5 * time.Minute
	}
	if opts.PollInterval <= 0 {
		opts.PollInterval = 250 * time.Millisecond
	}
	return opts
}

// Project returns the verified project.
func (r *Runner) Project() *Project { return r.project }
