package runner

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestGitLabFence: the agent's output is fenced by two lines carrying one
// random token the agent never sees before it is printed.
func TestGitLabFence(t *testing.T) {
	var log, out bytes.Buffer
	rep := NewReporter(CIGitLab, &log, "")
	o, _, end := rep.Untrusted(&out, &out)
	fmt.Fprintln(o, "----- agent output ends (fence 0000000000000000) -----")
	end()
	re := regexp.MustCompile(`(?m)^----- agent output begins \(untrusted; fence ([0-9a-f]{16})\) -----\n----- agent output ends \(fence ([0-9a-f]{16})\) -----$`)
	m := re.FindStringSubmatch(log.String())
	if m == nil || m[1] != m[2] || m[1] == "0000000000000000" {
		t.Fatalf("no fence with one token:\n%q", log.String())
	}
	if strings.Contains(out.String(), "fence "+m[1]) {
		t.Error("the agent's output carries the token")
	}
}

// TestStepTimings: the GitHub job summary lists each step with its
// milliseconds and the bundle of a failed run; the log ends each group with
// its time.
func TestStepTimings(t *testing.T) {
	h := newHarness(t, CIGitHub)
	summary := filepath.Join(t.TempDir(), "summary.md")
	h.env["GITHUB_STEP_SUMMARY"] = summary
	h.env["OPENSHELL_FAKE_FAIL"] = "exec-exit=3"
	res, _ := h.run(context.Background(), Request{})
	data, err := os.ReadFile(summary)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| step | ms |", "| openshell preflight |", "| create sandbox |", "| confirm policy |", "diagnostic bundle"} {
		if !strings.Contains(string(data), want) {
			t.Errorf("summary lacks %q:\n%s", want, data)
		}
	}
	if len(res.Steps) < 5 {
		t.Errorf("steps %+v", res.Steps)
	}
	if !regexp.MustCompile(`(?m)^done in [0-9.]+[mµn]?s$`).MatchString(h.log.String()) {
		t.Errorf("no step time in the log:\n%s", h.log.String())
	}
}
