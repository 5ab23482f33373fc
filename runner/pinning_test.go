package runner

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// TestUnpinnedRunInCIIsRefused is the red-team finding "digest pinning is
// optional": `fullsend run` ran in CI without the policies digest, so any
// project found in the image directory ran as if it were the signed one. In
// CI the run must stop before anything reaches openshell (exit 78).
func TestUnpinnedRunInCIIsRefused(t *testing.T) {
	for _, ci := range []CIKind{CIGitHub, CIGitLab} {
		t.Run(string(ci), func(t *testing.T) {
			h := newHarness(t, ci)
			h.unpinned = true
			res, err := h.run(context.Background(), Request{})
			if !errors.Is(err, ErrUnpinned) || !errors.Is(err, ErrPolicy) || ExitCode(err) != ExitPolicy {
				t.Fatalf("err %v (exit %d), want ErrUnpinned, exit %d", err, ExitCode(err), ExitPolicy)
			}
			if !strings.Contains(res.Error, "in CI ("+string(ci)+")") {
				t.Errorf("error does not say why: %s", res.Error)
			}
			if n := len(h.calls()); n != 0 {
				t.Errorf("%d openshell calls made without a pinned digest", n)
			}
		})
	}
}

// TestUnpinnedLocalRunSaysSo: outside CI the digest stays optional, and the
// run says it is unpinned; a pinned run does not.
func TestUnpinnedLocalRunSaysSo(t *testing.T) {
	const warning = "policies digest not pinned"
	h := newHarness(t, CILocal)
	if _, err := h.run(context.Background(), Request{Values: map[string]string{"OWNER": "o", "REPO_NAME": "r", "ISSUE_NUMBER": "1", "FORGE_HOST": "api.github.com"}}); err != nil {
		t.Fatalf("%v\n%s", err, h.log.String())
	}
	if !strings.Contains(h.log.String(), warning) {
		t.Errorf("an unpinned run does not say so:\n%s", h.log.String())
	}
	h = newHarness(t, CIGitHub)
	if _, err := h.run(context.Background(), Request{}); err != nil {
		t.Fatalf("%v\n%s", err, h.log.String())
	}
	if strings.Contains(h.log.String(), warning) {
		t.Errorf("a pinned run says it is unpinned:\n%s", h.log.String())
	}
}
