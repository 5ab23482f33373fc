package runner

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNoSecretLeaks runs with a model key delivered as an OpenShell provider
// and a token delivered as an env file, through a failing run (so the
// diagnostic bundle is written), and checks that neither value appears in
// any argv the fake recorded, the runner's log (except GitHub's
// ::add-mask:: commands), the agent's streamed output, the result or the
// bundle.
func TestNoSecretLeaks(t *testing.T) {
	const modelKey = "sk-ant-api03-SECRETVALUE-0123456789"
	const token = "ghs_SECRETTOKEN9876543210"
	const agentToken = "fsat_SPAWNTOKEN_abcdef123456"
	for _, fail := range []string{"", "exec-exit=4"} {
		t.Run("fail="+fail, func(t *testing.T) {
			h := newHarness(t, CIGitHub)
			h.env["ANTHROPIC_API_KEY"] = modelKey
			h.env["OPENSHELL_FAKE_FAIL"] = fail
			h.opts.Providers = []Provider{{Name: "anthropic", Type: "anthropic", CredentialEnv: []string{"ANTHROPIC_API_KEY"}}}
			envFile := filepath.Join(t.TempDir(), "spawn.env")
			if err := os.WriteFile(envFile, []byte("# spawn service\nFULLSEND_TOKEN="+token+"\nLITERAL=a b $HOME \"q\" `id`\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			res, err := h.run(context.Background(), Request{ExtraEnvFiles: []string{envFile}, Prompt: "go",
				Env: map[string]string{"FULLSEND_AGENT_TOKEN": agentToken}})
			if fail == "" && err != nil {
				t.Fatalf("%v\n%s", err, h.log.String())
			}
			calls, _ := os.ReadFile(filepath.Join(h.state, "calls.jsonl"))
			for _, secret := range []string{modelKey, token, agentToken} {
				if strings.Contains(string(calls), secret) {
					t.Errorf("secret in a recorded openshell call:\n%s", calls)
				}
				for _, line := range strings.Split(h.log.String(), "\n") {
					if strings.Contains(line, secret) && line != "::add-mask::"+secret {
						t.Errorf("secret in the log: %q", line)
					}
				}
				if strings.Contains(h.stdout.String(), secret) {
					t.Errorf("secret in the agent output:\n%s", h.stdout.String())
				}
				b, _ := json.Marshal(res)
				if strings.Contains(string(b), secret) {
					t.Errorf("secret in the result")
				}
				if res.DiagDir != "" {
					filepath.WalkDir(res.DiagDir, func(p string, d os.DirEntry, err error) error {
						if err == nil && !d.IsDir() {
							if b, _ := os.ReadFile(p); strings.Contains(string(b), secret) {
								t.Errorf("secret in bundle file %s", p)
							}
						}
						return nil
					})
				}
			}
			if fail == "" && !strings.Contains(h.stdout.String(), "literal value intact") {
				t.Errorf("env file value not taken literally:\n%s", h.stdout.String())
			}
			if fail == "" && !strings.Contains(h.stdout.String(), "agent token: ***") {
				t.Errorf("Request.Env not delivered or not masked:\n%s", h.stdout.String())
			}
			if fail == "" && !strings.Contains(h.stdout.String(), "token: ***") {
				t.Errorf("env file not delivered or not masked:\n%s", h.stdout.String())
			}
			// The key reached openshell by environment, named by a bare flag.
			found := false
			for _, c := range h.calls() {
				if strings.HasPrefix(c.String(), "openshell provider create --name anthropic --type anthropic --credential ANTHROPIC_API_KEY") {
					for _, e := range c.Env {
						found = found || e == "ANTHROPIC_API_KEY"
					}
				}
				if strings.HasPrefix(c.String(), "openshell sandbox") {
					for _, e := range c.Env {
						if e == "ANTHROPIC_API_KEY" {
							t.Errorf("model key leaked into the environment of %s", c)
						}
					}
				}
			}
			if !found {
				t.Error("provider create did not receive the key through its environment")
			}
		})
	}
}
