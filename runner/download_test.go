package runner

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFailedDownloadLeavesNoUnsanitizedTree is the red team's finding 3:
// the download of the agent's output breaks after the files landed (its
// symlink to /etc/passwd, its .git/hooks), and the GitLab template uploads
// the artifacts directory with when: always. Nothing of that output may be
// left there, sanitized or not; the output fetched before it stays.
func TestFailedDownloadLeavesNoUnsanitizedTree(t *testing.T) {
	h := newHarness(t, CIGitHub)
	h.env["OPENSHELL_FAKE_FAIL"] = "download-partial=/sandbox/repo/out"
	ws := filepath.Join(t.TempDir(), "repo")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	outDir := filepath.Join(t.TempDir(), "artifacts")
	res, err := h.run(context.Background(), Request{Workspace: ws, Outputs: []string{"out"}, OutputDir: outDir})
	if ExitCode(err) != ExitSandbox || !errors.Is(err, ErrSandbox) {
		t.Fatalf("exit %d, want %d: %v\n%s", ExitCode(err), ExitSandbox, err, h.log.String())
	}
	if !res.Deleted || len(h.sandboxesLeft()) != 0 {
		t.Errorf("sandbox not deleted after the failed download")
	}
	ents, err := os.ReadDir(outDir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if len(names) != 1 || names[0] != "report" {
		t.Errorf("artifacts directory holds %v, want only the complete output report", names)
	}
	if _, err := os.Lstat(filepath.Join(outDir, "out")); !os.IsNotExist(err) {
		t.Errorf("the broken download left %s behind: %v", filepath.Join(outDir, "out"), err)
	}
	assertInert(t, outDir)
}

// TestDownloadOutputs covers where outputs land: a previous output of the
// same name is replaced, not merged into; an output that is itself a
// repository is removed whole and logged; no output may replace the
// workspace.
func TestDownloadOutputs(t *testing.T) {
	for _, tc := range []struct {
		name    string
		outputs []string
		outDir  func(ws string) string
		setup   func(t *testing.T, outDir string)
		want    int
		check   func(t *testing.T, h *harness, res Result, outDir string)
	}{
		{name: "a previous output is replaced", outputs: []string{"out"},
			setup: func(t *testing.T, outDir string) {
				writeFiles(t, outDir, map[string]string{"out/stale.txt": "old\n", "out/repo/.git/config": "[core]\n"})
			},
			check: func(t *testing.T, _ *harness, _ Result, outDir string) {
				if _, err := os.Lstat(filepath.Join(outDir, "out", "stale.txt")); !os.IsNotExist(err) {
					t.Errorf("the previous output was merged into, not replaced: %v", err)
				}
				if b, err := os.ReadFile(filepath.Join(outDir, "out", "result.txt")); err != nil || string(b) != "triaged\n" {
					t.Errorf("result.txt = %q, %v", b, err)
				}
			}},
		{name: "an output that is a .git directory does not come back", outputs: []string{"out/repo/.git"},
			check: func(t *testing.T, h *harness, res Result, outDir string) {
				if _, err := os.Lstat(filepath.Join(outDir, ".git")); !os.IsNotExist(err) {
					t.Errorf(".git came back: %v", err)
				}
				if len(res.Outputs) != 1 || filepath.Base(res.Outputs[0]) != "report" {
					t.Errorf("outputs %v, want only report", res.Outputs)
				}
				if !strings.Contains(h.log.String(), `removed "." from downloaded /sandbox/repo/out/repo/.git: .git directory or file`) {
					t.Errorf("removal not logged:\n%s", h.log.String())
				}
			}},
		{name: "an output may not replace the workspace", outputs: []string{"/sandbox/repo"}, want: ExitPolicy,
			outDir: filepath.Dir,
			check: func(t *testing.T, _ *harness, _ Result, outDir string) {
				if _, err := os.Stat(filepath.Join(outDir, "repo", "README.md")); err != nil {
					t.Errorf("workspace damaged: %v", err)
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, CIGitHub)
			ws := filepath.Join(t.TempDir(), "repo")
			writeFiles(t, ws, map[string]string{"README.md": "hello\n"})
			outDir := filepath.Join(t.TempDir(), "artifacts")
			if tc.outDir != nil {
				outDir = tc.outDir(ws)
			}
			if tc.setup != nil {
				tc.setup(t, outDir)
			}
			res, err := h.run(context.Background(), Request{Workspace: ws, Outputs: tc.outputs, OutputDir: outDir})
			if ExitCode(err) != tc.want {
				t.Fatalf("exit %d, want %d: %v\n%s", ExitCode(err), tc.want, err, h.log.String())
			}
			if !res.Deleted {
				t.Error("sandbox not deleted")
			}
			if tc.outDir == nil {
				assertInert(t, outDir)
				assertNoStaging(t, outDir)
			}
			tc.check(t, h, res, outDir)
		})
	}
}

func assertNoStaging(t *testing.T, outDir string) {
	t.Helper()
	ents, _ := os.ReadDir(outDir)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".fullsend-download-") {
			t.Errorf("staging directory left: %s", e.Name())
		}
	}
}
