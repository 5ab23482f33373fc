package runner

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

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
