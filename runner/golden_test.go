package runner

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// TestCallTranscript pins the exact openshell command lines of a successful
// run, per OpenShell version, against golden files (run with -update to
// rewrite them after an intended change).
func TestCallTranscript(t *testing.T) {
	runDir := regexp.MustCompile(`fullsend-run-[0-9]+`)
	stageDir := regexp.MustCompile(`\.fullsend-download-[0-9]+`)
	runLabel := regexp.MustCompile(`fullsend-run=[0-9a-f]{16}`)
	for _, version := range []string{"0.0.83", "0.0.111"} {
		t.Run(version, func(t *testing.T) {
			h := newHarness(t, CIGitHub)
			h.env["OPENSHELL_FAKE_VERSION"] = version
			h.env["OPENSHELL_FAKE_READY_POLLS"] = "2"
			h.project = testProject(t, "v"+version)
			h.opts.Providers = []Provider{{Name: "anthropic", Type: "anthropic", CredentialEnv: []string{"ANTHROPIC_API_KEY"}}}
			h.env["ANTHROPIC_API_KEY"] = "sk-test-key-value"
			wsRoot := t.TempDir()
			ws := filepath.Join(wsRoot, "repo")
			os.MkdirAll(ws, 0o755)
			out := t.TempDir()
			res, err := h.run(context.Background(), Request{Workspace: ws, Outputs: []string{"out"}, OutputDir: out})
			if err != nil {
				t.Fatalf("%v\n%s", err, h.log.String())
			}
			var b strings.Builder
			for _, c := range callStrings(h) {
				c = strings.ReplaceAll(c, res.Sandbox, "$SANDBOX")
				c = strings.ReplaceAll(c, h.opts.TempDir, "$TMP")
				c = strings.ReplaceAll(c, wsRoot, "$WS")
				c = strings.ReplaceAll(c, out, "$OUT")
				c = runDir.ReplaceAllString(c, "fullsend-run-N")
				c = stageDir.ReplaceAllString(c, ".fullsend-download-N")
				c = runLabel.ReplaceAllString(c, "fullsend-run=$$RUN")
				b.WriteString(c + "\n")
			}
			golden := filepath.Join("testdata", "golden", "calls-v"+version+".txt")
			if *update {
				if err := os.WriteFile(golden, []byte(b.String()), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -run TestCallTranscript -update)", err)
			}
			if b.String() != string(want) {
				t.Errorf("openshell calls differ from %s:\n--- got\n%s--- want\n%s", golden, b.String(), want)
			}
		})
	}
}
