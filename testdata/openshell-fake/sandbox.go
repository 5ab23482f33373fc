package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/fullsend-ai/agent-sandbox/openshell"
)

// sandbox is the fake's record of one sandbox.
type sandbox struct {
	Name      string     `json:"name"`
	Phase     string     `json:"phase"`
	Polls     int        `json:"polls"`
	Policy    []byte     `json:"policy"`
	PolicySet bool       `json:"policy_set"`
	Providers []string   `json:"providers"`
	Main      []string   `json:"main"`
	Execs     int        `json:"execs"`
	Revisions []revision `json:"revisions"`
	// Labels are the create --label pairs; CreatedMS the creation time.
	Labels    map[string]string `json:"labels,omitempty"`
	CreatedMS int64             `json:"created_ms,omitempty"`
	// From is the create --from image ("" = the gateway's default).
	From string `json:"from,omitempty"`
	// PolicyGets counts `policy get` calls (load-pending-polls).
	PolicyGets int `json:"policy_gets,omitempty"`
	// Settings are the sandbox-scoped `settings set` values (logs.go);
	// OCSFJSON is the supervisor's applied ocsf_json_enabled flag and
	// EventsEmitted whether OPENSHELL_FAKE_EVENTS was written.
	Settings      map[string]string `json:"settings,omitempty"`
	OCSFJSON      bool              `json:"ocsf_json,omitempty"`
	EventsEmitted bool              `json:"events_emitted,omitempty"`
}

// defaultSandboxImage is what a sandbox runs without --from: the driver's
// default_image (crates/openshell-core/src/image.rs / config.rs
// default_image at both tags), an unpinned tag.
const defaultSandboxImage = "ghcr.io/nvidia/openshell-community/sandboxes/base:latest"

var dnsLabel = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]*[a-z0-9])?$`)

func (f *fake) path(name string) string { return filepath.Join(f.state, "sandboxes", name+".json") }

// root is the scratch directory standing in for the sandbox filesystem.
func (f *fake) root(name string) string { return filepath.Join(f.state, "sandboxes", name+".root") }

func (f *fake) load(name string) (*sandbox, int) {
	b, err := os.ReadFile(f.path(name))
	if err != nil {
		return nil, fail(1, "status: NotFound, message: \"sandbox not found\" (%s)", name)
	}
	var s sandbox
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fail(1, "corrupt fake state: %v", err)
	}
	return &s, 0
}

func (f *fake) save(s *sandbox) {
	b, _ := json.Marshal(s)
	os.WriteFile(f.path(s.Name), b, 0o600)
}

// counter increments and returns a named counter in the state directory.
func (f *fake) counter(name string) int {
	p := filepath.Join(f.state, "counter-"+name)
	b, _ := os.ReadFile(p)
	n, _ := strconv.Atoi(string(b))
	n++
	os.WriteFile(p, []byte(strconv.Itoa(n)), 0o600)
	return n
}

// create is `openshell sandbox create`: it validates the name and the
// inputs, records the sandbox with its first policy revisions and brings
// it to Ready (or to the injected failure).
func (f *fake) create(args []string) int {
	spec := map[string]bool{"--name": true, "--from": true, "--policy": true, "--provider": true, "--cpu": true,
		"--memory": true, "--label": true, "--env": true, "--no-tty": false, "--tty": false,
		"--no-auto-providers": false, "--auto-providers": false, "--keep": false}
	if f.atLeast(0, 0, 111) {
		spec["--detach"] = false
	}
	fl, code := parseFlags(args, spec, 0)
	if code != 0 {
		return code
	}
	name := fl.value("--name")
	if code := f.checkCreateName(name); code != 0 {
		return code
	}
	pol, labels, code := f.createInputs(fl)
	if code != 0 {
		return code
	}
	if code := f.injectedCreateFailure(); code != 0 {
		return code
	}
	s := &sandbox{Name: name, Phase: "Provisioning", Policy: pol, Providers: fl.vals["--provider"], Main: fl.after,
		Labels: labels, CreatedMS: time.Now().UnixMilli(), From: fl.value("--from")}
	if s.From == "" {
		fmt.Fprintf(os.Stderr, "openshell-fake: no --from: the sandbox runs the default image %s\n", defaultSandboxImage)
	}
	s.Revisions = f.firstRevisions(pol)
	if code := f.provision(s); code != 0 {
		return code
	}
	if f.atLeast(0, 0, 111) && !fl.has("--detach") && len(fl.after) > 0 {
		// Since v0.0.111 the command is the main process: when it ends, so
		// does the sandbox.
		s.Phase = "Stopped"
	}
	f.save(s)
	fmt.Fprintf(os.Stderr, "Created sandbox: %s\n", name)
	return 0
}

// checkCreateName refuses a missing name, one that is not a DNS-1123
// label (since v0.0.88), one already used, and the injected
// name-taken-once race.
func (f *fake) checkCreateName(name string) int {
	if name == "" {
		return fail(2, "openshell-fake requires --name")
	}
	if f.atLeast(0, 0, 88) && (len(name) > 19 || !dnsLabel.MatchString(name) || strings.Contains(name, "--")) {
		return fail(1, "invalid sandbox name %q: must be a DNS-1123 label of at most 19 characters without '--'", name)
	}
	if _, err := os.Stat(f.path(name)); err == nil {
		return fail(1, "sandbox %q already exists", name)
	}
	if _, ok := f.fails["name-taken-once"]; ok && f.counter("name-taken") == 1 {
		return fail(1, "status: AlreadyExists, message: \"sandbox %s already exists\" (openshell-fake: taken by another run)", name)
	}
	return 0
}

// injectedCreateFailure is the create, create-once and create-transient
// failures OPENSHELL_FAKE_FAIL asks for; 0 when none applies.
func (f *fake) injectedCreateFailure() int {
	if _, ok := f.fails["create"]; ok {
		return fail(1, "failed to create sandbox: injected failure (openshell-fake)")
	}
	if _, ok := f.fails["create-once"]; ok && f.counter("create") == 1 {
		return fail(1, "failed to create sandbox: transport error: connection reset by peer (injected first-attempt failure, openshell-fake)")
	}
	if _, ok := f.fails["create-transient"]; ok {
		return fail(1, "failed to create sandbox: status: Unavailable, message: \"transport error\" (injected, openshell-fake)")
	}
	return 0
}

// firstRevisions is a new sandbox's policy history: revision 1 of pol,
// loaded, or pending, or failed, or (policy-differs) superseded by the
// supervisor's default policy as revision 2.
func (f *fake) firstRevisions(pol []byte) []revision {
	first := revision{Version: 1, Status: "loaded", Hash: policyHash(pol)}
	_, slow := f.fails["load-pending-polls"]
	if _, ok := f.fails["load-pending"]; ok || slow {
		first.Status = "pending"
	}
	if _, ok := f.fails["load-failed"]; ok {
		first = revision{Version: 1, Status: "failed", LoadError: "injected supervisor validation failure (openshell-fake)"}
	}
	if _, ok := f.fails["policy-differs"]; ok {
		// The supervisor synced back a different policy as a new revision
		// (the reference's "may enrich it and sync it back").
		dp, _ := openshell.Marshal(defaultPolicy, "")
		return []revision{{Version: 1, Status: "superseded", Hash: first.Hash}, {Version: 2, Status: "loaded", Hash: policyHash(dp)}}
	}
	return []revision{first}
}

// provision makes the sandbox's scratch root and brings it to Ready,
// saved, with its supervisor logs started; phase-error and never-ready
// stop it on the way.
func (f *fake) provision(s *sandbox) int {
	if err := os.MkdirAll(filepath.Join(f.root(s.Name), "sandbox"), 0o700); err != nil {
		return fail(1, "%v", err)
	}
	if _, ok := f.fails["phase-error"]; ok {
		s.Phase = "Error"
		f.save(s)
		return fail(1, "sandbox %s entered phase Error (openshell-fake)", s.Name)
	}
	// The CLI blocks until the sandbox is Ready and fails on phase Error
	// (crates/openshell-cli/src/run.rs sandbox_create watch loop
	// v0.0.83:2019-2185, v0.0.111:652-835), streaming progress to stderr.
	fmt.Fprintf(os.Stderr, "Creating sandbox %s (image %s)\n", s.Name, orDefault(s.From, defaultSandboxImage))
	if _, never := f.fails["never-ready"]; never {
		f.save(s)
		return fail(1, "sandbox %s did not become ready: still Provisioning (openshell-fake)", s.Name)
	}
	s.Phase = "Ready"
	fmt.Fprintf(os.Stderr, "Sandbox %s is Ready\n", s.Name)
	f.save(s)
	f.startSupervisorLogs(s)
	return 0
}

// createInputs reads what `sandbox create` takes besides the name: the
// labels, the policy file and the providers, which must exist.
func (f *fake) createInputs(fl flags) (pol []byte, labels map[string]string, code int) {
	if labels, code = parseLabels(fl.vals["--label"]); code != 0 {
		return nil, nil, code
	}
	if file := fl.value("--policy"); file != "" {
		if _, pol, code = readPolicy(file); code != 0 {
			return nil, nil, code
		}
	}
	for _, p := range fl.vals["--provider"] {
		if _, err := os.Stat(filepath.Join(f.state, "provider-"+p)); err != nil {
			return nil, nil, fail(1, "provider %q not found", p)
		}
	}
	return pol, labels, 0
}

func (f *fake) get(args []string) int {
	spec := map[string]bool{"--policy-only": false}
	if f.atLeast(0, 0, 92) {
		spec["-o"], spec["--output"] = true, true
	}
	fl, code := parseFlags(args, spec, 1)
	if code != 0 {
		return code
	}
	if len(fl.pos) != 1 {
		return fail(2, "openshell-fake requires a sandbox name")
	}
	s, code := f.load(fl.pos[0])
	if code != 0 {
		return code
	}
	if fl.has("--policy-only") {
		if fl.has("-o", "--output") {
			return fail(2, "the argument '--policy-only' cannot be used with '--output <OUTPUT>'")
		}
		return f.printPolicy(s)
	}
	s.Polls++
	ready := 1
	if v, err := strconv.Atoi(os.Getenv("OPENSHELL_FAKE_READY_POLLS")); err == nil {
		ready = v
	}
	if _, never := f.fails["never-ready"]; s.Phase == "Provisioning" && !never && s.Polls >= ready {
		s.Phase = "Ready"
	}
	f.save(s)
	if fl.value("-o", "--output") == "json" {
		b, _ := json.Marshal(f.sandboxJSON(s))
		fmt.Println(string(b))
		return 0
	}
	fmt.Println("\x1b[36;1mSandbox:\x1b[0m")
	fmt.Println()
	fmt.Printf("  \x1b[2mId:\x1b[0m fake-%s\n  \x1b[2mName:\x1b[0m %s\n  \x1b[2mPhase:\x1b[0m %s\n", s.Name, s.Name, s.Phase)
	return 0
}

// mapPath maps a sandbox path into the scratch root.
func (f *fake) mapPath(name, p string) (string, error) {
	if !strings.HasPrefix(p, "/") {
		p = "/sandbox/" + p
	}
	clean := filepath.Clean(p)
	if strings.Contains(p, "..") {
		return "", errors.New("path escapes the sandbox")
	}
	return filepath.Join(f.root(name), clean), nil
}

// exec is `openshell sandbox exec -n NAME -- CMD...`: after the injected
// failures it runs CMD on the host in the sandbox's scratch root (NOT a
// sandbox), its sandbox paths mapped there.
func (f *fake) exec(args []string) int {
	fl, code := parseFlags(args, map[string]bool{"-n": true, "--name": true, "--workdir": true, "--timeout": true,
		"--tty": false, "--no-tty": false, "--env": true}, 0)
	if code != 0 {
		return code
	}
	if len(fl.after) == 0 {
		return fail(2, "the following required arguments were not provided: <COMMAND>...")
	}
	s, code := f.load(fl.value("-n", "--name"))
	if code != 0 {
		return code
	}
	if s.Phase != "Ready" {
		return fail(1, "sandbox %s is not Ready (phase %s)", s.Name, s.Phase)
	}
	s.Execs++
	f.save(s)
	if code := f.emitEvents(s); code != 0 {
		return code
	}
	if code, ok := f.injectedExecFailure(s); ok {
		return code
	}
	workdir := fl.value("--workdir")
	if workdir == "" {
		workdir = "/sandbox"
	}
	dir, code := f.execDir(s.Name, workdir)
	if code != 0 {
		return code
	}
	root := f.root(s.Name)
	fmt.Fprintf(os.Stderr, "[openshell-fake] NOT A SANDBOX: running %q locally in scratch dir %s\n", fl.after[0], dir)
	cmdArgs := scratchArgs(root, fl.after)
	cmd := exec.Command(cmdArgs[0], cmdArgs[1:]...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + filepath.Join(root, "sandbox"),
		"OPENSHELL_FAKE_SANDBOX_ROOT=" + root, "OPENSHELL_SANDBOX=" + s.Name}
	cmd.Env = append(cmd.Env, fl.vals["--env"]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	secs, _ := strconv.Atoi(fl.value("--timeout"))
	return runForwarding(cmd, secs)
}

// injectedExecFailure is the exec-exit, sandbox-lost and egress-403-once
// failures OPENSHELL_FAKE_FAIL asks for: the exit code and true when one
// applies.
func (f *fake) injectedExecFailure(s *sandbox) (int, bool) {
	if v, ok := f.fails["exec-exit"]; ok {
		n, _ := strconv.Atoi(v)
		fmt.Fprintf(os.Stderr, "openshell-fake: injected exit status %d\n", n)
		return n, true
	}
	if _, ok := f.fails["sandbox-lost"]; ok {
		s.Phase = "Error"
		f.save(s)
		return fail(1, "exec stream closed: sandbox %s terminated (openshell-fake)", s.Name), true
	}
	if _, ok := f.fails["egress-403-once"]; ok && s.Execs == 1 {
		fmt.Fprintln(os.Stderr, `HTTP 403 {"error":"policy_denied","detail":"injected transient denial on first egress (openshell-fake)"}`)
		return 1, true
	}
	return 0, false
}

// execDir maps the exec's working directory into the scratch root; it
// must exist there as a directory.
func (f *fake) execDir(name, workdir string) (string, int) {
	dir, err := f.mapPath(name, workdir)
	if err != nil {
		return "", fail(1, "%v", err)
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return "", fail(1, "workdir %s does not exist in the sandbox", workdir)
	}
	return dir, 0
}

// scratchArgs maps the sandbox paths in an exec's argv into the scratch
// root.
func scratchArgs(root string, argv []string) []string {
	cmdArgs := make([]string, len(argv))
	for i, a := range argv {
		// The command runs on the host: the sandbox paths the runner stages
		// into (/sandbox, or /tmp for tiers that keep /sandbox read-only)
		// point into the scratch root.
		// One pass, so a scratch root under /tmp is not rewritten again.
		// /var/log/ is the supervisor's log directory (logs.go).
		cmdArgs[i] = strings.NewReplacer("/sandbox/", root+"/sandbox/", " /tmp/", " "+root+"/tmp/", "/var/log/", root+"/var/log/").Replace(a)
		// An argument that is itself a /tmp path the scratch sandbox holds
		// (the runner's `tar cf - -C /tmp/repo -- out` for a read-only
		// tier's output) too; a host path under /tmp that the scratch root
		// does not hold (a test's marker file) stays as it is.
		if a == "/tmp" || strings.HasPrefix(a, "/tmp/") {
			if _, err := os.Lstat(root + a); err == nil {
				cmdArgs[i] = root + a
			}
		}
	}
	return cmdArgs
}

// runForwarding runs cmd to its end, forwarding SIGTERM and SIGINT to it
// and killing it after timeoutSecs (when above 0, exit 124). A command
// ended by a signal exits 128+signal, as a shell reports it.
func runForwarding(cmd *exec.Cmd, timeoutSecs int) int {
	if err := cmd.Start(); err != nil {
		return fail(1, "exec failed: %v", err)
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var timeout <-chan time.Time
	if timeoutSecs > 0 {
		timeout = time.After(time.Duration(timeoutSecs) * time.Second)
	}
	for {
		select {
		case err := <-done:
			if err != nil && cmd.ProcessState == nil {
				return fail(1, "%v", err)
			}
			if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				return 128 + int(ws.Signal())
			}
			return cmd.ProcessState.ExitCode()
		case s := <-sig:
			cmd.Process.Signal(s)
		case <-timeout:
			cmd.Process.Kill()
			<-done
			return fail(124, "command timed out")
		}
	}
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// delete deletes each name; a missing one prints "! Sandbox N not found"
// and still exits 0 (run.rs sandbox_delete v0.0.83:3627-3685,
// v0.0.111:2348-2412: DeleteSandboxResponse.deleted false is not an error).
func (f *fake) delete(args []string) int {
	fl, code := parseFlags(args, map[string]bool{"--all": false}, 64)
	if code != 0 {
		return code
	}
	if _, ok := f.fails["delete"]; ok {
		return fail(1, "failed to delete sandbox: injected failure (openshell-fake)")
	}
	for _, n := range fl.pos {
		if _, err := os.Stat(f.path(n)); err != nil {
			fmt.Printf("! Sandbox %s not found\n", n)
			continue
		}
		os.Remove(f.path(n))
		os.Remove(f.streamPath(n)) // the gateway frees the tail (tracing_bus.rs:73-77@v0.0.111)
		os.RemoveAll(f.root(n))
		fmt.Printf("✓ Deleted sandbox %s\n", n)
	}
	return 0
}

func (f *fake) provider(args []string) int {
	if len(args) == 0 {
		return fail(2, "'openshell provider' requires a subcommand")
	}
	spec := map[string]bool{"--credential": true, "--config": true}
	max := 1
	if args[0] == "create" {
		spec["--name"], spec["--type"], max = true, true, 0
		if f.atLeast(0, 0, 111) {
			spec["--global-profile"] = false
		}
	} else if args[0] != "update" {
		return fail(2, "openshell-fake implements provider create and update only")
	}
	fl, code := parseFlags(args[1:], spec, max)
	if code != 0 {
		return code
	}
	name := fl.value("--name")
	if args[0] == "update" && len(fl.pos) == 1 {
		name = fl.pos[0]
	}
	if name == "" {
		return fail(2, "a provider name is required")
	}
	for _, c := range fl.vals["--credential"] {
		if k, _, inline := strings.Cut(c, "="); !inline && os.Getenv(k) == "" {
			return fail(1, "credential %s: environment variable %s is not set", k, k)
		}
	}
	return f.saveProvider(args[0], name, fl)
}

// saveProvider writes the record of a created or updated provider (the
// credential keys only; create resolves --type, profiles.go).
func (f *fake) saveProvider(cmd, name string, fl flags) int {
	rec, exists := f.providerRecord(name)
	switch {
	case cmd == "update" && !exists:
		return fail(1, "provider %q not found", name)
	case cmd == "create":
		typ, ok := f.resolveType(fl.value("--type"))
		if !ok {
			return fail(1, "unsupported provider type or profile: %s", fl.value("--type"))
		}
		if exists {
			return fail(1, "status: AlreadyExists, message: \"provider already exists\"")
		}
		rec.Type = typ
	}
	rec.Credentials = nil
	for _, c := range fl.vals["--credential"] {
		k, _, _ := strings.Cut(c, "=")
		rec.Credentials = append(rec.Credentials, k)
	}
	b, _ := json.Marshal(rec)
	os.WriteFile(filepath.Join(f.state, "provider-"+name), b, 0o600)
	return 0
}
