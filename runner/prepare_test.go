package runner

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestPrepareMasksBeforeLogging is the regression test of "prepare logs
// placeholder values before collecting the masks": a secret that is also a
// placeholder's value ({{OWNER}}, read from GITHUB_REPOSITORY or
// CI_PROJECT_NAMESPACE) was printed in the clear in
// the `{{OWNER}} = ...` line, because the provider, env-file and
// Request.Env values were masked only after it. From whichever source the
// secret comes, no line of the log may hold it (on GitHub, except its own
// ::add-mask::, which must come before the placeholder line), nor the
// result.
func TestPrepareMasksBeforeLogging(t *testing.T) {
	const secret = "acme-secret-org"
	for _, ci := range []CIKind{CIGitHub, CIGitLab} {
		for _, src := range []string{"provider", "env file", "request env"} {
			t.Run(string(ci)+"/"+src, func(t *testing.T) {
				h := newHarness(t, ci)
				h.env["GITHUB_REPOSITORY"] = secret + "/agent-sandbox"
				h.env["CI_PROJECT_NAMESPACE"] = secret
				var req Request
				switch src {
				case "provider":
					h.env["ANTHROPIC_API_KEY"] = secret
					h.opts.Providers = []Provider{{Name: "anthropic", Type: "anthropic", CredentialEnv: []string{"ANTHROPIC_API_KEY"}}}
				case "env file":
					f := filepath.Join(t.TempDir(), "run.env")
					if err := os.WriteFile(f, []byte("TOKEN="+secret+"\n"), 0o600); err != nil {
						t.Fatal(err)
					}
					req.ExtraEnvFiles = []string{f}
				case "request env":
					req.Env = map[string]string{"TOKEN": secret}
				}
				res, err := h.run(context.Background(), req)
				if err != nil {
					t.Fatalf("%v", err)
				}
				lines := strings.Split(h.log.String(), "\n")
				for _, line := range lines {
					if strings.Contains(line, secret) && line != "::add-mask::"+secret {
						t.Errorf("secret in the log: %q", line)
					}
				}
				owner := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, "{{OWNER}} = ***") })
				if owner < 0 {
					t.Fatalf("no masked {{OWNER}} line in %d lines", len(lines))
				}
				if ci == CIGitHub {
					if announce := slices.Index(lines, "::add-mask::"+secret); announce < 0 || announce > owner {
						t.Errorf("::add-mask:: at line %d, the {{OWNER}} line at %d: the CI must know the secret first", announce, owner)
					}
				}
				b, _ := json.Marshal(res)
				if strings.Contains(string(b), secret) {
					i := strings.Index(string(b), secret)
					t.Errorf("secret in the result: ...%s...", b[max(0, i-60):i+len(secret)])
				}
			})
		}
	}
}
