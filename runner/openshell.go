package runner

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fullsend-ai/agent-sandbox/openshell"
	"github.com/fullsend-ai/agent-sandbox/runner/childproc"
	"github.com/fullsend-ai/agent-sandbox/runner/redact"
	"golang.org/x/mod/semver"
)

// versionJSONOutput is the first OpenShell release whose CLI has
// `status -o json` and `sandbox get -o json` (read from NVIDIA/OpenShell
// crates/openshell-cli/src/main.rs at each tag). It is a CLI flag, not a
// policy feature, so it lives here rather than in policycue.
const versionJSONOutput = "v0.0.92"

// CallError is a non-zero exit of one openshell invocation.
type CallError struct {
	Args   []string
	Code   int
	Stderr string
}

// Error names the subcommand only (`openshell sandbox create`), not the
// whole argv, which the diagnostic bundle's calls.jsonl keeps.
func (e *CallError) Error() string {
	msg := strings.TrimSpace(e.Stderr)
	if len(msg) > 600 {
		msg = "..." + msg[len(msg)-600:]
	}
	cmd := subcommand(e.Args)
	if msg == "" {
		return fmt.Sprintf("openshell %s: exit status %d", cmd, e.Code)
	}
	return fmt.Sprintf("openshell %s: exit status %d: %s", cmd, e.Code, msg)
}

// subcommand is the leading words of args before the first flag or name
// ("sandbox create", "policy set").
func subcommand(args []string) string {
	n := 0
	for n < len(args) && n < 2 && !strings.HasPrefix(args[n], "-") {
		n++
	}
	if n == 0 && len(args) > 0 {
		return args[0]
	}
	return strings.Join(args[:n], " ")
}

// Call is one recorded openshell invocation (for the diagnostic bundle).
// Argv never holds a secret; Env holds variable names only.
type Call struct {
	Argv       []string `json:"argv"`
	Env        []string `json:"env"`
	Exit       int      `json:"exit"`
	DurationMS float64  `json:"duration_ms"`
	Stderr     string   `json:"stderr,omitempty"`
}

// driver runs the openshell CLI. It is the only code that starts openshell.
type driver struct {
	bin     string
	env     []string // the minimal environment every call gets
	version string   // "v0.0.111", set by preflight
	mask    *redact.Masker

	// killAfter is how long a cancelled call's process group has, after
	// SIGTERM, before it is SIGKILLed (0: defaultKillAfter).
	killAfter time.Duration

	mu      sync.Mutex
	calls   []Call
	inCalls time.Duration // wall time spent inside openshell processes
}

// defaultKillAfter is driver.killAfter's default.
const defaultKillAfter = 10 * time.Second

type callOpts struct {
	extraEnv []string // KEY=VALUE added for this call only (credentials)
	stdin    io.Reader
	stdout   io.Writer // streamed; captured when nil
	stderr   io.Writer // streamed in addition to the captured tail
}

type callResult struct {
	stdout []byte
	stderr []byte
	code   int
}

// stderrTail bounds how much of a call's stderr is kept in memory.
const stderrTail = 64 << 10

func (d *driver) run(ctx context.Context, o callOpts, args ...string) (callResult, error) {
	var res callResult
	cmd := exec.CommandContext(ctx, d.bin, args...)
	cmd.Env = append(append([]string(nil), d.env...), o.extraEnv...)
	cmd.Stdin = o.stdin
	var out bytes.Buffer
	if o.stdout != nil {
		cmd.Stdout = o.stdout
	} else {
		cmd.Stdout = &out
	}
	errBuf := &childproc.TailBuffer{Max: stderrTail}
	if o.stderr != nil {
		cmd.Stderr = io.MultiWriter(errBuf, o.stderr)
	} else {
		cmd.Stderr = errBuf
	}
	childproc.SetProcessGroup(cmd)
	cmd.WaitDelay = cmp.Or(d.killAfter, defaultKillAfter)
	start := time.Now()
	err := childproc.Run(cmd)
	elapsed := time.Since(start)
	res.stdout, res.stderr = out.Bytes(), errBuf.Bytes()
	res.code = exitCode(cmd, err)
	d.record(args, o.extraEnv, res, elapsed)
	if cerr := ctxErr(ctx); cerr != nil {
		return res, cerr
	}
	if err != nil {
		if res.code == -1 {
			return res, fmt.Errorf("running %s: %w", d.bin, err)
		}
		return res, &CallError{Args: args, Code: res.code, Stderr: d.mask.String(string(res.stderr))}
	}
	return res, nil
}

// exitCode is the exit status of a finished call (err is what running it
// returned): 128+N when signal N killed it, -1 when it did not run.
func exitCode(cmd *exec.Cmd, err error) int {
	code := 0
	if cmd.ProcessState != nil {
		code = cmd.ProcessState.ExitCode()
	}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		if code < 0 { // killed by a signal
			code = 128 + childproc.SignalNumber(ee)
		}
	default:
		code = -1
	}
	return code
}

func (d *driver) record(args, extraEnv []string, res callResult, elapsed time.Duration) {
	names := envNames(d.env)
	names = append(names, envNames(extraEnv)...)
	c := Call{
		Argv:       append([]string{"openshell"}, d.mask.Strings(args)...),
		Env:        names,
		Exit:       res.code,
		DurationMS: float64(elapsed.Microseconds()) / 1000,
	}
	if res.code != 0 {
		s := string(res.stderr)
		if len(s) > 4096 {
			s = s[len(s)-4096:]
		}
		c.Stderr = d.mask.String(s)
	}
	d.mu.Lock()
	d.calls = append(d.calls, c)
	d.inCalls += elapsed
	d.mu.Unlock()
}

// Calls returns the recorded calls so far.
func (d *driver) Calls() []Call {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]Call(nil), d.calls...)
}

// TimeInCalls returns the wall time spent inside openshell processes.
func (d *driver) TimeInCalls() time.Duration {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.inCalls
}

func envNames(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		out = append(out, k)
	}
	return out
}

func (d *driver) supports(first string) bool {
	return d.version != "" && semver.Compare(d.version, first) >= 0
}

// versionRE finds the version in `openshell --version` output
// ("openshell 0.0.111", possibly "0.0.112-dev.3+gabc1234").
var versionRE = regexp.MustCompile(`\bv?(\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?)\b`)

// ParseVersion extracts the semantic version from `openshell --version`
// output and returns it with a leading "v".
func ParseVersion(out string) (string, error) {
	m := versionRE.FindStringSubmatch(out)
	if m == nil {
		return "", fmt.Errorf("no version in %q", strings.TrimSpace(out))
	}
	v := "v" + m[1]
	if !semver.IsValid(v) {
		return "", fmt.Errorf("invalid version %q", m[1])
	}
	return v, nil
}

func (d *driver) Version(ctx context.Context) (string, error) {
	res, err := d.run(ctx, callOpts{}, "--version")
	if err != nil {
		return "", err
	}
	return ParseVersion(string(res.stdout))
}

// Gateway status values (`openshell status -o json`, field "status").
const (
	statusConnected     = "connected"
	statusConnectedHTTP = "connected_http"
)

var ansiRE = regexp.MustCompile(`\x1b\[[0-9;]*[A-Za-z]`)

// statusUnreachable is what Status reports when `openshell status` exits
// 1: a registered gateway that refuses connections.
const statusUnreachable = "unreachable"

// Status reports the gateway status: exit 0 with "connected" is healthy,
// exit 0 with "not_configured" means no gateway is registered, and exit 1
// means a registered one refuses connections (crates/openshell-cli/src/
// main.rs v0.0.83:2090-2105, v0.0.111:2360-2385; commands/gateway.rs
// v0.0.111:52-110, where the HTTP health check's error is propagated).
// Down is a state, never an error.
func (d *driver) Status(ctx context.Context) (string, error) {
	return d.status(ctx, nil)
}

// StatusAt reports the status of the gateway at endpoint, named through
// OPENSHELL_GATEWAY_ENDPOINT (main.rs v0.0.83:411, v0.0.111:443).
func (d *driver) StatusAt(ctx context.Context, endpoint string) (string, error) {
	return d.status(ctx, []string{"OPENSHELL_GATEWAY_ENDPOINT=" + endpoint})
}

func (d *driver) status(ctx context.Context, extra []string) (string, error) {
	if d.supports(versionJSONOutput) {
		res, err := d.run(ctx, callOpts{extraEnv: extra}, "status", "-o", "json")
		if err != nil {
			return downStatus(err)
		}
		return parseStatusJSON(res.stdout)
	}
	res, err := d.run(ctx, callOpts{extraEnv: extra}, "status")
	if err != nil {
		return downStatus(err)
	}
	return parseStatusText(string(res.stdout)), nil
}

// downStatus is the status of a failed `openshell status`: exit 1 is a
// gateway that refuses connections, any other failure an error.
func downStatus(err error) (string, error) {
	var ce *CallError
	if errors.As(err, &ce) && ce.Code == 1 {
		return statusUnreachable, nil
	}
	return "", err
}

// parseStatusJSON reads the status field `openshell status -o json`
// prints from v0.0.92.
func parseStatusJSON(out []byte) (string, error) {
	var st struct {
		Status string `json:"status"`
		Error  string `json:"error"`
	}
	if err := json.Unmarshal(out, &st); err != nil {
		return "", fmt.Errorf("decoding `openshell status -o json`: %w", err)
	}
	if st.Status == "" {
		return "", errors.New("`openshell status -o json` has no status field")
	}
	return st.Status, nil
}

// GatewayAdd registers a plaintext local gateway with the CLI: `gateway add
// URL --local --name N` (main.rs v0.0.83:1024, v0.0.111:1121-1157: an
// http:// endpoint with --local stores a local plaintext registration).
func (d *driver) GatewayAdd(ctx context.Context, endpoint, name string) error {
	_, err := d.run(ctx, callOpts{}, "gateway", "add", endpoint, "--local", "--name", name)
	return err
}

// parseStatusText reads the Status line of the table `openshell status`
// prints before v0.0.92.
func parseStatusText(out string) string {
	v, ok := tableField(out, "Status")
	if !ok {
		return "unknown"
	}
	if st, known := statusTexts[v]; known {
		return st
	}
	return "disconnected"
}

// statusTexts maps the Status values of that table to the names `status
// -o json` gives the same states.
var statusTexts = map[string]string{
	"Connected":              statusConnected,
	"Connected (HTTP)":       statusConnectedHTTP,
	"Error":                  "error",
	"No gateway configured.": "not_configured",
}

// tableField returns the value of the first "key: value" line of a table
// the CLI printed, its ANSI colours removed.
func tableField(out, key string) (string, bool) {
	for _, line := range strings.Split(ansiRE.ReplaceAllString(out, ""), "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), ":"); ok && k == key {
			return strings.TrimSpace(v), true
		}
	}
	return "", false
}

// createSpec is what `sandbox create` needs.
type createSpec struct {
	name      string
	policy    string // file path
	from      string
	providers []string
	cpu       string
	memory    string
	labels    map[string]string
	progress  io.Writer // the CLI's progress lines (stderr), streamed
}

func (d *driver) Create(ctx context.Context, s createSpec) error {
	args := []string{"sandbox", "create", "--name", s.name, "--policy", s.policy, "--no-auto-providers", "--no-tty"}
	if s.from != "" {
		args = append(args, "--from", s.from)
	}
	for _, p := range s.providers {
		args = append(args, "--provider", p)
	}
	for _, k := range slices.Sorted(maps.Keys(s.labels)) {
		args = append(args, "--label", k+"="+s.labels[k])
	}
	if s.cpu != "" {
		args = append(args, "--cpu", s.cpu)
	}
	if s.memory != "" {
		args = append(args, "--memory", s.memory)
	}
	if openshell.Supports(openshell.FeatureCreateCommandMain, d.version) {
		// Since v0.0.111 the command after -- is the sandbox's main process:
		// keep it alive and do not attach.
		args = append(args, "--detach", "--", "sleep", "infinity")
	} else {
		// Before, the command ran once after Ready; `true` returns at once
		// and the sandbox stays.
		args = append(args, "--", "true")
	}
	_, err := d.run(ctx, callOpts{stderr: s.progress}, args...)
	return err
}

// listedSandbox is one entry of `sandbox list -o json` (sandbox_to_json in
// NVIDIA/OpenShell crates/openshell-cli/src/run.rs, v0.0.83:3427 and
// v0.0.111:2088; both have these fields).
type listedSandbox struct {
	Name   string            `json:"name"`
	Labels map[string]string `json:"labels"`
	Phase  string            `json:"phase"`
}

// List returns the sandboxes carrying every label of selector
// ("k1=v1,k2=v2"): `sandbox list --selector S -o json`, which both v0.0.83
// and v0.0.111 have (crates/openshell-cli/src/main.rs v0.0.83:1363-1386,
// v0.0.111:1497-1525); the JSON is an array, "[]" when none match.
func (d *driver) List(ctx context.Context, selector string) ([]listedSandbox, error) {
	res, err := d.run(ctx, callOpts{}, "sandbox", "list", "--selector", selector, "-o", "json")
	if err != nil {
		return nil, err
	}
	var out []listedSandbox
	if err := json.Unmarshal(res.stdout, &out); err != nil {
		return nil, fmt.Errorf("decoding `openshell sandbox list -o json`: %w", err)
	}
	return out, nil
}

// Phase returns the sandbox phase (Provisioning, Ready, Error, ...).
func (d *driver) Phase(ctx context.Context, name string) (string, error) {
	if d.supports(versionJSONOutput) {
		res, err := d.run(ctx, callOpts{}, "sandbox", "get", name, "-o", "json")
		if err != nil {
			return "", err
		}
		var sb struct {
			Phase string `json:"phase"`
		}
		if err := json.Unmarshal(res.stdout, &sb); err != nil {
			return "", fmt.Errorf("decoding `openshell sandbox get -o json`: %w", err)
		}
		return sb.Phase, nil
	}
	res, err := d.run(ctx, callOpts{}, "sandbox", "get", name)
	if err != nil {
		return "", err
	}
	if phase, ok := tableField(string(res.stdout), "Phase"); ok {
		return phase, nil
	}
	return "", errors.New("`openshell sandbox get` printed no Phase line")
}

// ActivePolicy returns the policy the sandbox enforces now.
func (d *driver) ActivePolicy(ctx context.Context, name string) ([]byte, error) {
	res, err := d.run(ctx, callOpts{}, "sandbox", "get", name, "--policy-only")
	return res.stdout, err
}

// policyRevision is one policy revision's load state, from
// `openshell policy get -o json`.
type policyRevision struct {
	Version       int    `json:"version"`
	ActiveVersion int    `json:"active_version"`
	Status        string `json:"status"`
	LoadError     string `json:"load_error"`
}

// PolicyRevision reports the load status of the sandbox's current policy
// revision: pending, loaded, failed or superseded. Since v0.0.111 `policy
// get` without --rev shows the effective policy (status "effective"), so the
// revision is then asked for by number.
func (d *driver) PolicyRevision(ctx context.Context, name string) (policyRevision, error) {
	var rev policyRevision
	res, err := d.run(ctx, callOpts{}, "policy", "get", name, "-o", "json")
	if err != nil {
		return rev, err
	}
	if err := json.Unmarshal(res.stdout, &rev); err != nil {
		return rev, fmt.Errorf("decoding `openshell policy get -o json`: %w", err)
	}
	if rev.Status != "effective" {
		return rev, nil
	}
	res, err = d.run(ctx, callOpts{}, "policy", "get", name, "--rev", strconv.Itoa(rev.Version), "-o", "json")
	if err != nil {
		return rev, err
	}
	rev = policyRevision{}
	if err := json.Unmarshal(res.stdout, &rev); err != nil {
		return rev, fmt.Errorf("decoding `openshell policy get --rev -o json`: %w", err)
	}
	return rev, nil
}

// PolicySet replaces the sandbox policy and waits for it to load. It returns
// the CLI's exit code: 0 loaded, 1 failed, 124 still pending at the timeout.
func (d *driver) PolicySet(ctx context.Context, name, file string, timeout time.Duration) (int, error) {
	res, err := d.run(ctx, callOpts{}, "policy", "set", name, "--policy", file, "--wait",
		"--timeout", strconv.Itoa(int(timeout.Seconds())))
	var ce *CallError
	if errors.As(err, &ce) {
		return ce.Code, err
	}
	return res.code, err
}

func (d *driver) Upload(ctx context.Context, name, local, dest string) error {
	_, err := d.run(ctx, callOpts{}, "sandbox", "upload", name, local, dest)
	return err
}

func (d *driver) Download(ctx context.Context, name, remote, dest string) error {
	_, err := d.run(ctx, callOpts{}, "sandbox", "download", name, remote, dest)
	return err
}

// execSpec is one command run in the sandbox.
type execSpec struct {
	name    string
	workdir string
	timeout time.Duration
	env     []string // non-secret KEY=VALUE for the command
	command []string
	stdin   io.Reader
	stdout  io.Writer
	stderr  io.Writer
}

// Exec runs a command in the sandbox and returns its exit code. A non-zero
// remote exit is returned as the code with a nil error.
func (d *driver) Exec(ctx context.Context, s execSpec) (code int, stderr []byte, err error) {
	args := []string{"sandbox", "exec", "-n", s.name, "--no-tty"}
	if s.workdir != "" {
		args = append(args, "--workdir", s.workdir)
	}
	if s.timeout > 0 {
		secs := int(s.timeout.Seconds())
		if secs < 1 {
			secs = 1
		}
		args = append(args, "--timeout", strconv.Itoa(secs))
	}
	for _, e := range s.env {
		args = append(args, "--env", e)
	}
	args = append(args, "--")
	args = append(args, s.command...)
	res, err := d.run(ctx, callOpts{stdin: s.stdin, stdout: s.stdout, stderr: s.stderr}, args...)
	var ce *CallError
	if errors.As(err, &ce) {
		return ce.Code, res.stderr, nil
	}
	return res.code, res.stderr, err
}

func (d *driver) Delete(ctx context.Context, name string) error {
	_, err := d.run(ctx, callOpts{}, "sandbox", "delete", name)
	return err
}

// logsOut is one `openshell logs` capture.
type logsOut struct {
	data      []byte
	truncated bool
}

// LogsSource returns the last n lines the gateway keeps for one source
// ("sandbox" or "gateway"): `logs NAME --source S -n N`, which v0.0.83 and
// v0.0.111 both have (crates/openshell-cli/src/main.rs:467-494@v0.0.83,
// :510-537@v0.0.111). At most max bytes of stdout are kept.
func (d *driver) LogsSource(ctx context.Context, name, source string, n, max int) (logsOut, error) {
	w := &childproc.CapWriter{Max: max}
	_, err := d.run(ctx, callOpts{stdout: w}, "logs", name, "--source", source, "-n", strconv.Itoa(n))
	return logsOut{data: w.Bytes(), truncated: w.Truncated()}, err
}

// SettingSetGlobal sets a gateway-wide setting: `settings set --global
// --key K --value V --yes` (main.rs:1791-1811@v0.0.83, :1926-1946
// @v0.0.111; without --yes and a terminal the CLI refuses,
// crates/openshell-cli/src/commands/common.rs:670-679@v0.0.111).
func (d *driver) SettingSetGlobal(ctx context.Context, key, value string) error {
	_, err := d.run(ctx, callOpts{}, "settings", "set", "--global", "--key", key, "--value", value, "--yes")
	return err
}

// ProviderCreate creates (or, when it exists, updates) a credential
// provider. Credential values travel in the child's environment only, named
// by bare --credential KEY flags; they never reach argv.
func (d *driver) ProviderCreate(ctx context.Context, p Provider, values []string) error {
	args := []string{"provider", "create", "--name", p.Name, "--type", p.Type}
	for _, k := range p.CredentialEnv {
		args = append(args, "--credential", k)
	}
	_, err := d.run(ctx, callOpts{extraEnv: values}, args...)
	var ce *CallError
	if errors.As(err, &ce) && strings.Contains(strings.ToLower(ce.Stderr), "already exists") {
		args = []string{"provider", "update", p.Name}
		for _, k := range p.CredentialEnv {
			args = append(args, "--credential", k)
		}
		_, err = d.run(ctx, callOpts{extraEnv: values}, args...)
	}
	return err
}
