package templates

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fullsend-ai/agent-sandbox/internal/testtool"
)

// fullsendStub records the arguments it is called with (one per line) in
// STUB_DIR/args and its environment in STUB_DIR/env.
const fullsendStub = `#!/bin/sh
for a in "$@"; do printf '%s\n' "$a"; done > "$STUB_DIR/args"
env > "$STUB_DIR/env"
`

// reusableRunStep returns the step of the reusable workflow that runs
// fullsend run, and the workflow.
func reusableRunStep(t *testing.T) (step, doc map[string]any) {
	t.Helper()
	doc = decodeAll(t, readAll(t, "github", "workflows/fullsend.yml"))[0]
	for _, s := range asList(asMap(asMap(doc["jobs"])["run"])["steps"]) {
		if strings.Contains(asString(asMap(s)["run"]), "exec fullsend run") {
			return asMap(s), doc
		}
	}
	t.Fatal("the reusable workflow has no fullsend run step")
	return nil, nil
}

// TestReusableWorkflowProviderCredentials: the reusable workflow used to
// hand fullsend run only ANTHROPIC_API_KEY, so an agent whose provider
// profile needs GH_TOKEN failed with "no credential". The provider-env
// secret's NAME=VALUE lines now reach fullsend run's environment, never its
// argv; a malformed line or a name that steers the shell, the runner or
// fullsend fails (78) without printing the value.
func TestReusableWorkflowProviderCredentials(t *testing.T) {
	bash := testtool.Find(t, "bash", "the base system")
	step, doc := reusableRunStep(t)
	call := asMap(asMap(doc["on"])["workflow_call"])
	if asMap(asMap(call["secrets"])["provider-env"]) == nil || asMap(asMap(call["inputs"])["providers"]) == nil {
		t.Fatalf("workflow_call lacks the provider-env secret or the providers input: %v", call)
	}
	env := asMap(step["env"])
	if env["PROVIDER_ENV"] != "${{ secrets.provider-env }}" || env["PROVIDERS"] != "${{ inputs.providers }}" {
		t.Fatalf("run step env %v lacks PROVIDER_ENV or PROVIDERS", env)
	}
	const secret = "ghp_S3cr3t=with$(touch /tmp/pwned)'quotes'"
	for _, tc := range []struct {
		name, providerEnv, providers string
		code                         int
		wantEnv                      []string // NAME=VALUE in fullsend run's environment
		wantArgs                     []string // consecutive arguments
	}{
		{name: "a profile's credential", providerEnv: "GH_TOKEN=" + secret + "\n", wantEnv: []string{"GH_TOKEN=" + secret}},
		{name: "several, CRLF and blank lines", providerEnv: "GH_TOKEN=" + secret + "\r\n\r\nQUAY_TOKEN=q-123456\r\n",
			wantEnv: []string{"GH_TOKEN=" + secret, "QUAY_TOKEN=q-123456"}},
		{name: "GITHUB_TOKEN is a credential name", providerEnv: "GITHUB_TOKEN=" + secret, wantEnv: []string{"GITHUB_TOKEN=" + secret}},
		{name: "extra provider specs", providerEnv: "RELEASE_TOKEN=" + secret, providers: "release=github:RELEASE_TOKEN\n",
			wantEnv: []string{"RELEASE_TOKEN=" + secret}, wantArgs: []string{"--provider", "release=github:RELEASE_TOKEN"}},
		{name: "not NAME=VALUE", providerEnv: "GH_TOKEN=x\n" + secret[:8], code: 78},
		{name: "a name with a space", providerEnv: "GH TOKEN=" + secret, code: 78},
		{name: "PATH steers the shell", providerEnv: "PATH=" + secret, code: 78},
		{name: "LD_PRELOAD", providerEnv: "LD_PRELOAD=" + secret, code: 78},
		{name: "fullsend's own variables", providerEnv: "FULLSEND_IMAGE=" + secret, code: 78},
		{name: "the runner's", providerEnv: "GITHUB_ENV=" + secret, code: 78},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "fullsend"), []byte(fullsendStub), 0o755); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(bash, "-c", asString(step["run"]))
			cmd.Dir = dir
			cmd.Env = []string{"PATH=" + dir + string(os.PathListSeparator) + os.Getenv("PATH"), "STUB_DIR=" + dir,
				"GITHUB_WORKSPACE=" + dir, "RUNNER_TEMP=" + t.TempDir(), "AGENT=release-notes", "PROMPT=", "SET=", "DOWNLOAD=",
				"FULLSEND_POLICIES_DIGEST=sha256:" + strings.Repeat("a", 64), "FULLSEND_IMAGE=registry.example/a@sha256:" + strings.Repeat("1", 64),
				"FULLSEND_VERIFIED_SANDBOX_IMAGE=", "SANDBOX_IMAGE=", "ANTHROPIC_API_KEY=sk-ant-123456",
				"PROVIDERS=" + tc.providers, "PROVIDER_ENV=" + tc.providerEnv}
			out, err := cmd.CombinedOutput()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if code != tc.code {
				t.Fatalf("exit %d, want %d\n%s", code, tc.code, out)
			}
			if strings.Contains(string(out), secret[:8]) {
				t.Errorf("the step printed the credential: %s", out)
			}
			if tc.code != 0 {
				if _, err := os.Stat(filepath.Join(dir, "args")); err == nil {
					t.Error("fullsend run ran after a refused provider-env")
				}
				return
			}
			args, _ := os.ReadFile(filepath.Join(dir, "args"))
			envOut, _ := os.ReadFile(filepath.Join(dir, "env"))
			if strings.Contains(string(args), secret[:8]) {
				t.Errorf("a credential is on fullsend run's command line:\n%s", args)
			}
			lines := strings.Split(string(envOut), "\n")
			for _, want := range tc.wantEnv {
				if !containsLine(lines, want) {
					t.Errorf("fullsend run's environment lacks %s", want[:strings.Index(want, "=")])
				}
			}
			for _, l := range lines {
				if strings.HasPrefix(l, "PROVIDER_ENV=") {
					t.Error("the whole provider-env secret reaches fullsend run")
				}
			}
			if want := strings.Join(append(tc.wantArgs, ""), "\n"); !strings.Contains(string(args), want) {
				t.Errorf("args %q lack %q", args, want)
			}
			if !strings.Contains(string(args), "--provider\nanthropic=anthropic:ANTHROPIC_API_KEY\n") {
				t.Errorf("the model key is no longer a provider: %q", args)
			}
		})
	}
}

func containsLine(lines []string, want string) bool {
	for _, l := range lines {
		if l == want {
			return true
		}
	}
	return false
}

// TestReusableWorkflowUploadsOutputs: the outputs upload used to run only
// when download: was set, though fullsend run downloads the agent's
// declared outputs by itself; the release notes were dropped with the job.
// It now runs after every run.
func TestReusableWorkflowUploadsOutputs(t *testing.T) {
	_, doc := reusableRunStep(t)
	for _, s := range asList(asMap(asMap(doc["jobs"])["run"])["steps"]) {
		st := asMap(s)
		if !strings.HasSuffix(asString(asMap(st["with"])["name"]), "-outputs") {
			continue
		}
		if st["if"] != "always()" {
			t.Errorf("outputs upload if %q, want always() (declared outputs come without download:)", st["if"])
		}
		if p := asString(asMap(st["with"])["path"]); !strings.HasPrefix(p, "fullsend-out\n") {
			t.Errorf("outputs upload path %q, want fullsend-out (fullsend run's --artifacts default)", p)
		}
		return
	}
	t.Error("the reusable workflow uploads no outputs")
}
