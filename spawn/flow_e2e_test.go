package spawn

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fullsend-ai/agent-sandbox/bundle"
	"github.com/fullsend-ai/agent-sandbox/forge"
	"github.com/fullsend-ai/agent-sandbox/placeholder"
	"github.com/fullsend-ai/agent-sandbox/runner"

	"github.com/fullsend-ai/agent-sandbox/internal/testtool"
)

// This file drives the scoped-tools triage flow end to end with real
// components: the forge proxy and the spawn service as `fullsend serve
// agents` wires them, spawn.CommandRunner running the real `fullsend run`
// binary, and the compiled testdata/triage project.
//
// Two things are NOT real, and the test says so rather than hiding it:
//   - testdata/openshell-fake stands in for OpenShell. It follows the CLI
//     contract but sandboxes nothing: `sandbox exec` runs the command locally
//     in a scratch directory, and no L7 policy is enforced. What this test
//     proves about confinement is therefore the proxy's and the spawn
//     service's own checks, plus that every sandbox was created with its own
//     compiled policy, resolved with the CI values, and deleted afterwards.
//   - testdata/flow/claude-standin.sh stands in for the claude runtime: it
//     plays the model, scripted (see its header). A wrapper in front of it
//     copies the runtime's working directory, the workspace as uploaded,
//     into the evidence directory.

const (
	flowForgeToken = "ghs_FlowE2EforgeTOKENneverInASandbox01234"
	flowOwner      = "acme"
	flowRepo       = "widgets"
	flowIssue      = 42
	flowHostIP     = "172.17.0.1"
)

var flowSubagents = []string{"completeness-assessor", "duplicate-detector", "reproducibility-verifier"}

// flowEnv is the machine the flow runs on: binaries, the compiled project,
// the CI files and the fake's state.
type flowEnv struct {
	dir, bin, project, evidence, state, event, summary, diag, artifacts, workspace string
}

// flowBasicCredential is what actions/checkout (persist-credentials: true,
// its default) writes into .git/config as http.<origin>.extraheader.
var flowBasicCredential = base64.StdEncoding.EncodeToString([]byte("x-access-token:" + flowForgeToken))

// flowCheckout is the job's checkout of acme/widgets as actions/checkout
// leaves it: the forge token in .git/config.
var flowCheckout = map[string]string{
	".git/HEAD": "ref: refs/heads/main\n",
	".git/config": "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n" +
		"[remote \"origin\"]\n\turl = https://github.com/acme/widgets\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n" +
		"[http \"https://github.com/\"]\n\textraheader = AUTHORIZATION: basic " + flowBasicCredential + "\n",
	"README.md": "widgets\n",
}

// runtimeWrapper runs in front of the stand-in: it copies the working
// directory (the uploaded workspace, when the run has one) into the
// evidence directory, then runs the stand-in.
const runtimeWrapper = `#!/bin/sh
agent=; prev=
for a in "$@"; do [ "$prev" = --agent ] && agent=$a; prev=$a; done
if [ "$PWD" != "$HOME" ]; then cp -R "$PWD" "$(cd "$(dirname "$0")/.." && pwd)/evidence/$agent.uploaded-workspace"; fi
exec "$(dirname "$0")/claude-standin" "$@"
`

// newFlowEnv builds fullsend and the openshell fake, installs the runtime
// stand-in, and copies the compiled triage project.
func newFlowEnv(t *testing.T) *flowEnv {
	t.Helper()
	dir := t.TempDir()
	e := &flowEnv{dir: dir, bin: filepath.Join(dir, "bin"), project: filepath.Join(dir, "opt-fullsend"),
		evidence: filepath.Join(dir, "evidence"), state: filepath.Join(dir, "openshell-state"),
		event: filepath.Join(dir, "event.json"), summary: filepath.Join(dir, "step-summary.md"),
		diag: filepath.Join(dir, "diag"), artifacts: filepath.Join(dir, "artifacts"), workspace: filepath.Join(dir, "checkout", flowRepo)}
	for _, d := range []string{e.bin, e.evidence, e.state, filepath.Join(dir, "home")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	for pkg, out := range map[string]string{"../cmd/fullsend": "fullsend", "../testdata/openshell-fake": "openshell"} {
		cmd := exec.Command("go", "build", "-o", filepath.Join(e.bin, out), pkg)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", pkg, err, b)
		}
	}
	standin, err := os.ReadFile("testdata/flow/claude-standin.sh")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.bin, "claude-standin"), standin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.bin, "claude"), []byte(runtimeWrapper), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range flowCheckout {
		p := filepath.Join(e.workspace, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.CopyFS(e.project, os.DirFS("../testdata/triage")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(e.event, []byte(`{"action":"opened","issue":{"number":42,"title":"app crashes on start"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	return e
}

// runArgs is `fullsend run` as the spawn service and the CI job call it;
// the agent name comes last.
func (e *flowEnv) runArgs() []string {
	// The agent's token is a secret (masked in every log); the agent name,
	// run id and service URLs are not, and stay readable in the result.
	return []string{filepath.Join(e.bin, "fullsend"), "run", "--dir", e.project, "--pass-env", "FULLSEND_AGENT_TOKEN",
		"--public-env", "FULLSEND_AGENT", "--public-env", "FULLSEND_RUN_ID", "--public-env", "FULLSEND_FORGE_URL", "--public-env", "FULLSEND_SPAWN_URL",
		"--set", "HOST_IP=" + flowHostIP, "--set", "GCP_PROJECT=acme-ci", "--set", "GCP_REGION=global", "--diag-dir", e.diag, "--artifacts", e.artifacts, "--timeout", "50s"}
}

// ciEnv is the GitHub Actions job environment both the spawn service and
// the orchestrator's `fullsend run` see. GITHUB_TOKEN holds the forge token,
// as a workflow hands it to the forge proxy; GITHUB_WORKSPACE is the
// checkout, uploaded by the orchestrator's run (the spawn service passes
// it to no subagent).
func (e *flowEnv) ciEnv() map[string]string {
	manifest, _ := os.ReadFile(filepath.Join(e.project, "policies", "manifest.json"))
	return map[string]string{
		"PATH":                   e.bin + string(os.PathListSeparator) + os.Getenv("PATH"),
		"HOME":                   filepath.Join(e.dir, "home"),
		"TMPDIR":                 os.TempDir(),
		"GITHUB_ACTIONS":         "true",
		"GITHUB_REPOSITORY":      flowOwner + "/" + flowRepo,
		"GITHUB_EVENT_PATH":      e.event,
		"GITHUB_SERVER_URL":      "https://github.com",
		"GITHUB_STEP_SUMMARY":    e.summary,
		"GITHUB_TOKEN":           flowForgeToken,
		"GITHUB_WORKSPACE":       e.workspace,
		"OPENSHELL_FAKE_STATE":   e.state,
		"OPENSHELL_FAKE_GATEWAY": "up",
		// The job's own image, as the verify job hands it over.
		"FULLSEND_IMAGE": "ghcr.io/fullsend-ai/agent-sandbox@sha256:1111111111111111111111111111111111111111111111111111111111111111",
		// The policies digest the verify job exports; CI runs need it.
		EnvPoliciesDigest: "sha256:" + bundle.SHA256Hex(manifest),
	}
}

// TestTriageFlowRealRunner is the acceptance test of issue 7: the triage
// orchestrator, run by the real `fullsend run` in an (openshell-fake)
// sandbox, spawns its three subagents through the real spawn service, which
// runs each with the real `fullsend run` in its own sandbox; all forge
// traffic goes through the real forge proxy, which alone holds the token.
func TestTriageFlowRealRunner(t *testing.T) {
	if testing.Short() {
		t.Skip("builds fullsend and the openshell fake and runs four sandboxes")
	}
	for _, tool := range []string{"go", "curl", "sh", "sed"} {
		testtool.Find(t, tool, ".ci/install.d/70-spawn-flow.sh")
	}
	e := newFlowEnv(t)
	env := e.ciEnv()
	for k, v := range env {
		t.Setenv(k, v)
	}

	// The forge API, and the services as `fullsend serve agents` builds
	// them: the credential from $GITHUB_TOKEN, one registry shared by the
	// proxy and the spawn service, one audit log, CommandRunner with
	// --pass-env for the CI variables.
	gh := newFakeGitHub(t)
	auditLog, errLog, runLog := &syncBuffer{}, &syncBuffer{}, &syncBuffer{}
	audit := forge.NewAudit(auditLog)
	cred, err := forge.CredentialFromEnv("GITHUB_TOKEN")
	if err != nil {
		t.Fatal(err)
	}
	reg := forge.NewRegistry()
	manifest, _, err := bundle.ReadManifest(os.DirFS(filepath.Join(e.project, "policies")))
	if err != nil {
		t.Fatal(err)
	}
	fln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	sln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fln.Close()
		t.Fatal(err)
	}
	cr := &CommandRunner{Args: e.runArgs(), Stderr: runLog, GracePeriod: 10 * time.Second, PoliciesDigest: env[EnvPoliciesDigest],
		PassEnv: []string{"PATH", "HOME", "TMPDIR", "GITHUB_ACTIONS", "GITHUB_REPOSITORY", "GITHUB_EVENT_PATH",
			"GITHUB_SERVER_URL", "GITHUB_STEP_SUMMARY", "OPENSHELL_FAKE_STATE", "OPENSHELL_FAKE_GATEWAY", "FULLSEND_IMAGE"}}
	// The orchestrator's token, minted as `serve agents --mint triage=FILE`
	// does (tier from the manifest), reaches its run through the variables
	// --pass-env FULLSEND_AGENT_TOKEN (masked) and --public-env hand to the
	// sandbox.
	tokFile := filepath.Join(t.TempDir(), "triage.token")
	stack, err := NewStack(StackConfig{
		Forge: forge.Config{Upstream: gh.srv.URL, Credential: cred, Registry: reg, Audit: audit,
			Scope:    forge.Scope{Owner: flowOwner, Repo: flowRepo, Issue: flowIssue, Labels: []string{"duplicate", "needs-info"}, MaxCommentBytes: 65536},
			ErrorLog: log.New(errLog, "fullsend serve: ", 0), MaxWrites: 20, UpstreamTimeout: 30 * time.Second},
		ForgeListen: fln.Addr().String(), Listen: sln.Addr().String(),
		Service: Config{Manifest: manifest, Runner: cr, Timeout: 60 * time.Second},
		Mints:   []Mint{{Agent: "triage", File: tokFile}},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- stack.Serve(ctx, fln, sln) }()
	// shutdown stops both services and waits until they have returned (the
	// spawn service only after its runs have ended); it runs once.
	shutdown := sync.OnceFunc(func() {
		stop()
		if err := <-served; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	defer shutdown()

	tokBytes, err := os.ReadFile(tokFile)
	if err != nil {
		t.Fatal(err)
	}
	triageTok := strings.TrimSpace(string(tokBytes))
	if id, err := reg.Lookup(triageTok); err != nil || id.Tier != forge.TierFromManifest(manifest.Agents["triage"].Tier) {
		t.Fatalf("minted triage token resolves to %+v, %v; want the manifest tier", id, err)
	}
	orchEnv := []string{EnvAgent + "=triage", EnvForgeURL + "=http://" + fln.Addr().String(),
		EnvAgentToken + "=" + triageTok, EnvSpawnURL + "=http://" + sln.Addr().String()}
	for k, v := range env {
		orchEnv = append(orchEnv, k+"="+v)
	}
	rctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	orch := exec.CommandContext(rctx, e.runArgs()[0], append(e.runArgs()[1:], "triage")...)
	orch.Env = orchEnv
	// Like CommandRunner: SIGTERM first, so the runner deletes its sandbox.
	orch.Cancel = func() error { return orch.Process.Signal(syscall.SIGTERM) }
	orch.WaitDelay = 15 * time.Second
	var orchOut, orchErr bytes.Buffer
	orch.Stdout, orch.Stderr = &orchOut, &orchErr
	runErr := orch.Run()
	shutdown()
	if runErr != nil {
		t.Fatalf("fullsend run triage: %v\nstdout:\n%s\nstderr:\n%s\nsubagent runs:\n%s", runErr, orchOut.String(), orchErr.String(), runLog.String())
	}

	t.Run("orchestrator", func(t *testing.T) {
		var got struct {
			Spawn           map[string]int `json:"spawn"`
			Comment, Labels int
		}
		readJSON(t, filepath.Join(e.evidence, "triage.result.json"), &got)
		for _, sub := range flowSubagents {
			if got.Spawn[sub] != 200 {
				t.Errorf("spawn %s: status %d, want 200 (response: %s)", sub, got.Spawn[sub], readFile(t, filepath.Join(e.evidence, "spawn-"+sub+".json")))
			}
		}
		if got.Comment != 201 || got.Labels != 200 {
			t.Errorf("orchestrator writes: comment %d, labels %d; want 201, 200", got.Comment, got.Labels)
		}
		if !strings.Contains(orchOut.String(), `"comment":201,"labels":200}`) {
			t.Errorf("fullsend run triage did not print the agent's result on stdout:\n%s", orchOut.String())
		}
	})

	t.Run("subagents", func(t *testing.T) {
		for _, sub := range flowSubagents {
			var resp RunAgentResponse
			readJSON(t, filepath.Join(e.evidence, "spawn-"+sub+".json"), &resp)
			if resp.Agent != sub || resp.ExitCode != 0 || resp.ID == "" {
				t.Errorf("%s: response %+v", sub, resp)
			}
			res, err := agentResult(resp.Result)
			if err != nil {
				t.Errorf("%s: %v", sub, err)
				continue
			}
			if res.Read != 200 || res.CommentAttempt != 403 {
				t.Errorf("%s: %+v; want the issue read (200) and the comment refused by the proxy (403)", sub, res)
			}
		}
	})

	// The spawn service documents the result as the subagent's stdout, JSON
	// when that is JSON: through the real `fullsend run` too, with the
	// runtime's stderr kept out of it and non-secret variables unmasked.
	t.Run("result contract", func(t *testing.T) {
		for _, sub := range flowSubagents {
			var resp RunAgentResponse
			readJSON(t, filepath.Join(e.evidence, "spawn-"+sub+".json"), &resp)
			var res stubResult
			if err := json.Unmarshal(resp.Result, &res); err != nil {
				t.Errorf("%s: result is not the agent's JSON object: %v\n%s", sub, err, resp.Result)
			}
			if res.Agent != sub {
				t.Errorf("%s: result names agent %q", sub, res.Agent)
			}
		}
	})

	t.Run("forge", func(t *testing.T) {
		reqs, auths := gh.requests()
		issue := "/repos/acme/widgets/issues/42"
		want := []string{
			"GET " + issue, "GET " + issue, "GET " + issue,
			`POST ` + issue + `/comments {"body":"Triage: duplicate-detector, completeness-assessor and reproducibility-verifier reported; needs more information."}`,
			`POST ` + issue + `/labels {"labels":["needs-info"]}`,
		}
		got := slices.Clone(reqs)
		sort.Strings(got)
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("the forge received:\n%s\nwant exactly the three reads and the orchestrator's two writes:\n%s", strings.Join(reqs, "\n"), strings.Join(want, "\n"))
		}
		for i, a := range auths {
			if a != "Bearer "+flowForgeToken {
				t.Errorf("forge request %q did not carry the forge token", reqs[i])
			}
		}
		denied, spawned := map[string]bool{}, map[string]bool{}
		for _, en := range auditEntries(t, auditLog.String()) {
			if en.Service == "spawn" {
				if en.Decision != forge.DecisionAllow || en.Agent != "triage" || en.ExitCode == nil || *en.ExitCode != 0 {
					t.Errorf("unexpected spawn audit entry %+v", en)
				}
				spawned[en.Target] = true
			}
			if en.Service == "forge" && en.Decision == forge.DecisionDeny {
				if en.Status != 403 || en.Method != "POST" || !strings.HasSuffix(en.Path, "/comments") {
					t.Errorf("unexpected denial %+v", en)
				}
				denied[en.Agent] = true
			}
		}
		if len(denied) != 3 || !denied["duplicate-detector"] || !denied["completeness-assessor"] || !denied["reproducibility-verifier"] {
			t.Errorf("audited forge denials by agent: %v, want the three subagents' comments", denied)
		}
		if len(spawned) != 3 || !spawned["duplicate-detector"] || !spawned["completeness-assessor"] || !spawned["reproducibility-verifier"] {
			t.Errorf("audited spawns: %v, want the three subagents", spawned)
		}
		if n := reg.Len(); n != 1 {
			t.Errorf("%d live agent tokens after the run, want 1 (the orchestrator's): subagent tokens must be revoked", n)
		}
	})

	calls := fakeCalls(t, filepath.Join(e.state, "calls.jsonl"))
	t.Run("sandboxes", func(t *testing.T) {
		project, err := runner.LoadProject(os.DirFS(e.project), "")
		if err != nil {
			t.Fatal(err)
		}
		values := placeholder.Values{"OWNER": flowOwner, "REPO_NAME": flowRepo, "ISSUE_NUMBER": "42", "HOST_IP": flowHostIP, "GCP_PROJECT": "acme-ci", "GCP_REGION": "global"}
		created, deleted := map[string]bool{}, map[string]bool{}
		for _, c := range calls {
			if len(c.Argv) < 3 || c.Argv[1] != "sandbox" {
				continue
			}
			switch c.Argv[2] {
			case "create":
				if !slices.Contains(c.Argv, "--policy") || !slices.Contains(c.Argv, "--name") {
					t.Errorf("sandbox create without --policy and --name: %q", c.Argv)
				}
				created[flagValue(c.Argv, "--name")] = true
			case "delete":
				for _, n := range c.Argv[3:] {
					deleted[n] = true
				}
			}
		}
		if len(created) != 4 {
			t.Errorf("%d sandboxes created, want 4 (orchestrator and three subagents): %v", len(created), created)
		}
		for n := range created {
			if !deleted[n] {
				t.Errorf("sandbox %s was not deleted", n)
			}
		}
		left, _ := filepath.Glob(filepath.Join(e.state, "sandboxes", "*"))
		if len(left) != 0 {
			t.Errorf("the fake still holds sandboxes: %v", left)
		}
		seen := map[string]bool{}
		for _, agent := range append([]string{"triage"}, flowSubagents...) {
			var sb struct {
				Name   string `json:"name"`
				Policy []byte `json:"policy"`
			}
			readJSON(t, filepath.Join(e.evidence, agent+".sandbox.json"), &sb)
			if !created[sb.Name] || seen[sb.Name] {
				t.Errorf("%s ran in sandbox %q, which is not one fresh sandbox of its own", agent, sb.Name)
			}
			seen[sb.Name] = true
			a, err := project.Agent(agent)
			if err != nil {
				t.Fatal(err)
			}
			_, want, err := a.Resolve(values)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(sb.Policy, want) {
				t.Errorf("%s: sandbox create --policy got:\n%s\nwant its compiled policy resolved with the CI values:\n%s", agent, sb.Policy, want)
			}
			pol := string(sb.Policy)
			if strings.Contains(pol, "{{") {
				t.Errorf("%s: an unresolved placeholder reached OpenShell", agent)
			}
			if slices.Contains(a.Entry.Placeholders, "ISSUE_NUMBER") &&
				(!strings.Contains(pol, "/repos/acme/widgets/issues/42") || !strings.Contains(pol, flowHostIP)) {
				t.Errorf("%s: the policy is not scoped to acme/widgets#42 via %s:\n%s", agent, flowHostIP, pol)
			}
		}
	})

	t.Run("uploaded workspace", func(t *testing.T) {
		// The orchestrator's runtime worked in the checkout as uploaded:
		// its files, its repository without the checkout's credential; the
		// checkout itself unchanged.
		up := filepath.Join(e.evidence, "triage.uploaded-workspace")
		if got := readFile(t, filepath.Join(up, "README.md")); got != flowCheckout["README.md"] {
			t.Fatalf("the orchestrator did not run in the uploaded checkout (README.md %q)", got)
		}
		cfg := readFile(t, filepath.Join(up, ".git", "config"))
		if !strings.Contains(cfg, "https://github.com/acme/widgets") || strings.Contains(strings.ToLower(cfg), "extraheader") {
			t.Errorf("uploaded .git/config: want the remote and no extraheader:\n%s", cfg)
		}
		for name, want := range flowCheckout {
			if got := readFile(t, filepath.Join(e.workspace, filepath.FromSlash(name))); got != want {
				t.Errorf("the job's checkout changed: %s", name)
			}
		}
	})

	t.Run("no token leaks", func(t *testing.T) {
		// Every place a token could surface: the fake's call records (argv
		// and environment names), what each runtime received (the env file,
		// its environment and the uploaded workspace), the audit and server
		// logs, every `fullsend run` log and stdout, the job summary, the
		// artifacts and any diagnostic bundle. The token is looked for as
		// it is and as the checkout's basic credential.
		places := map[string]string{
			"openshell call records":           readFile(t, filepath.Join(e.state, "calls.jsonl")),
			"audit log":                        auditLog.String(),
			"server error log":                 errLog.String(),
			"subagent fullsend run logs":       runLog.String(),
			"orchestrator fullsend run stdout": orchOut.String(),
			"orchestrator fullsend run stderr": orchErr.String(),
		}
		for _, dir := range []string{e.evidence, e.diag, e.artifacts} {
			_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
				if err == nil && d.Type().IsRegular() {
					places[p] = readFile(t, p)
				}
				return nil
			})
		}
		if s, err := os.ReadFile(e.summary); err == nil {
			places["job summary"] = string(s)
		}
		for where, text := range places {
			if strings.Contains(text, flowForgeToken) || strings.Contains(text, flowBasicCredential) {
				t.Errorf("the forge token appears in %s", where)
			}
		}
		// Agent tokens reach their own runtime through the env file only:
		// never an openshell argv or environment.
		agentTokens := []string{triageTok}
		for _, sub := range flowSubagents {
			kv := readFile(t, filepath.Join(e.evidence, sub+".run.env"))
			for _, line := range strings.Split(kv, "\n") {
				if tok, ok := strings.CutPrefix(line, EnvAgentToken+"="); ok && tok != "" {
					agentTokens = append(agentTokens, tok)
				}
			}
			if !strings.Contains(kv, EnvAgent+"="+sub+"\n") || strings.Contains(kv, EnvSpawnURL) {
				t.Errorf("%s env file: want its own FULLSEND_AGENT and no spawn URL:\n%s", sub, kv)
			}
		}
		if len(agentTokens) != 4 {
			t.Errorf("found %d agent tokens in the env files, want 4", len(agentTokens))
		}
		recorded := readFile(t, filepath.Join(e.state, "calls.jsonl"))
		for _, tok := range agentTokens {
			if strings.Contains(recorded, tok) {
				t.Errorf("an agent token appears in an openshell call record")
			}
		}
		for _, c := range calls {
			for _, name := range c.Env {
				if strings.HasPrefix(name, "FULLSEND_") || strings.HasPrefix(name, "GITHUB_") {
					t.Errorf("openshell %q ran with %s in its environment", c.Argv[1:], name)
				}
			}
		}
	})
}

// stubResult is what the runtime stand-in prints as its result.
type stubResult struct {
	Agent          string `json:"agent"`
	Read           int    `json:"read"`
	CommentAttempt int    `json:"comment_attempt"`
}

// agentResult decodes the stand-in's result: the agent's own JSON object.
func agentResult(raw json.RawMessage) (stubResult, error) {
	var res stubResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return res, fmt.Errorf("result %s is not the agent's JSON object: %w", raw, err)
	}
	return res, nil
}

// fakeCall is one line of the openshell fake's call log.
type fakeCall struct {
	Argv []string `json:"argv"`
	Env  []string `json:"env"`
}

func fakeCalls(t *testing.T, path string) []fakeCall {
	t.Helper()
	var calls []fakeCall
	dec := json.NewDecoder(strings.NewReader(readFile(t, path)))
	for dec.More() {
		var c fakeCall
		if err := dec.Decode(&c); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		calls = append(calls, c)
	}
	return calls
}

func flagValue(argv []string, name string) string {
	for i, a := range argv {
		if a == name && i+1 < len(argv) {
			return argv[i+1]
		}
		if v, ok := strings.CutPrefix(a, name+"="); ok {
			return v
		}
	}
	return ""
}

func auditEntries(t *testing.T, text string) []forge.AuditEntry {
	t.Helper()
	var out []forge.AuditEntry
	dec := json.NewDecoder(strings.NewReader(text))
	for dec.More() {
		var en forge.AuditEntry
		if err := dec.Decode(&en); err != nil {
			t.Fatalf("audit log: %v", err)
		}
		out = append(out, en)
	}
	return out
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	return string(b)
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (the stand-in did not record it)", err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v\n%s", path, err, b)
	}
}
