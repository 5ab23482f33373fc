package runner

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fullsend-ai/agent-sandbox/bundle"
	"github.com/fullsend-ai/agent-sandbox/openshell"
)

// readOnlyPolicy is a read-only tier's filesystem: /sandbox read-only, the
// runtime's state and /tmp read-write (policycue/schema/catalog/runtimes.cue),
// so the runner stages the workspace under /tmp.
func readOnlyPolicy() *openshell.Policy {
	p := testPolicy()
	p.FilesystemPolicy = &openshell.FilesystemPolicy{
		ReadOnly:  []string{"/usr", "/lib", "/etc", "/sandbox"},
		ReadWrite: []string{"/sandbox/.claude", "/tmp"}}
	return p
}

// TestReadOnlyTierOutputs: a read-only tier's workspace lives under /tmp,
// and `openshell sandbox download` refuses any path outside the sandbox
// workspace /sandbox, lexically and after realpath
// (crates/openshell-cli/src/ssh.rs:865-912 @ v0.0.83, :876-938 @ v0.0.111),
// so an output there must come back another way: read through `sandbox
// exec` as a tar stream the runner parses itself, then sanitized. Both
// supported CLI versions.
func TestReadOnlyTierOutputs(t *testing.T) {
	for _, version := range []string{"0.0.83", "0.0.111"} {
		t.Run(version, func(t *testing.T) {
			h := newHarness(t, CIGitHub)
			h.env["OPENSHELL_FAKE_VERSION"] = version
			h.project = testProjectWith(t, "v"+version, readOnlyPolicy())
			ws := filepath.Join(t.TempDir(), "repo")
			writeFiles(t, ws, map[string]string{"README.md": "hello\n"})
			outDir := filepath.Join(t.TempDir(), "artifacts")
			res, err := h.run(context.Background(), Request{Workspace: ws, Outputs: []string{"out", "out/result.txt"}, OutputDir: outDir})
			if err != nil {
				t.Fatalf("run: %v\n%s", err, h.log.String())
			}
			if !res.Deleted {
				t.Error("sandbox not deleted")
			}
			if b, err := os.ReadFile(filepath.Join(outDir, "out", "result.txt")); err != nil || string(b) != "triaged\n" {
				t.Errorf("out/result.txt = %q, %v\n%s", b, err, h.log.String())
			}
			if b, err := os.ReadFile(filepath.Join(outDir, "result.txt")); err != nil || string(b) != "triaged\n" {
				t.Errorf("result.txt (a single-file output) = %q, %v", b, err)
			}
			// The agent's symlink to /etc/passwd and its git hooks do not
			// come back, and their removal is reported.
			for _, gone := range []string{"out/escape", "out/repo/.git"} {
				if _, err := os.Lstat(filepath.Join(outDir, gone)); !os.IsNotExist(err) {
					t.Errorf("%s came back: %v", gone, err)
				}
				if !slices.Contains(res.Removed, filepath.Join(outDir, gone)) {
					t.Errorf("removal of %s not reported: %v", gone, res.Removed)
				}
			}
			if !strings.Contains(h.log.String(), "/tmp/repo/out") {
				t.Errorf("log does not name the output's sandbox path:\n%s", h.log.String())
			}
			assertInert(t, outDir)
			assertNoStaging(t, outDir)
		})
	}
}

// TestMissingOutput: an output the agent did not write is a warning naming
// it, not a sandbox failure: the run keeps the agent's exit status and
// result.json lists it, whether it is read by sandbox download (under
// /sandbox) or through sandbox exec tar (a read-only tier's /tmp); a
// download that fails for another reason is still a sandbox failure.
func TestMissingOutput(t *testing.T) {
	for _, tc := range []struct {
		name     string
		readOnly bool
		fail     string
		want     int
		wantLog  string
	}{
		{name: "sandbox download", wantLog: "warning: agent triage wrote no /sandbox/repo/missing (--download): nothing to download"},
		{name: "exec tar, read-only tier", readOnly: true, wantLog: "warning: agent triage wrote no /tmp/repo/missing (--download): nothing to download"},
		{name: "a broken download of an output that is there", fail: "download-partial=/sandbox/repo/README.md", want: ExitSandbox},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, CIGitHub)
			if tc.readOnly {
				h.project = testProjectWith(t, "v0.0.111", readOnlyPolicy())
			}
			outputs := []string{"missing"}
			if tc.fail != "" {
				h.env["OPENSHELL_FAKE_FAIL"] = tc.fail
				outputs = []string{"README.md"}
			}
			ws := filepath.Join(t.TempDir(), "repo")
			writeFiles(t, ws, map[string]string{"README.md": "hello\n"})
			outDir := filepath.Join(t.TempDir(), "artifacts")
			res, err := h.run(context.Background(), Request{Workspace: ws, Outputs: outputs, OutputDir: outDir})
			if ExitCode(err) != tc.want {
				t.Fatalf("exit %d, want %d: %v\n%s", ExitCode(err), tc.want, err, h.log.String())
			}
			if tc.want == 0 && (!strings.Contains(h.log.String(), tc.wantLog) || len(res.Missing) != 1) {
				t.Errorf("missing %v, log lacks %q:\n%s", res.Missing, tc.wantLog, h.log.String())
			}
			if _, err := os.Lstat(filepath.Join(outDir, "missing")); !os.IsNotExist(err) {
				t.Errorf("missing output left something: %v", err)
			}
			assertNoStaging(t, outDir)
		})
	}
}

// An output the agent declares in sandbox.outputs is named with the line
// of its declaration.
func TestOutputsLine(t *testing.T) {
	for _, tc := range []struct {
		src  string
		want int
	}{
		{"---\nname: a\nsandbox:\n  outputs: [/sandbox/out]\n---\nbody\n", 4},
		{"---\nname: a\n---\noutputs: here\n", 0},
		{"no frontmatter\noutputs: x\n", 0},
		{"", 0},
	} {
		if got := outputsLine([]byte(tc.src)); got != tc.want {
			t.Errorf("outputsLine(%q) = %d, want %d", tc.src, got, tc.want)
		}
	}
}

// TestOutputsNeverCoverTheRunnerDir: an output that is, holds or lies in
// the runner's directory (/sandbox/.fullsend, /tmp/.fullsend for a
// read-only tier), whose env/run.env holds the job's secret values, is
// refused before anything is downloaded: artifacts are readable by anyone
// who reads the job, secrets are not.
func TestOutputsNeverCoverTheRunnerDir(t *testing.T) {
	for _, tc := range []struct {
		name   string
		policy *openshell.Policy
		output string
	}{
		{"full tier, the workspace root", testPolicy(), "/sandbox"},
		{"full tier, the runner dir", testPolicy(), "/sandbox/.fullsend"},
		{"full tier, inside it", testPolicy(), "/sandbox/.fullsend/env"},
		{"read-only tier, /tmp", readOnlyPolicy(), "/tmp"},
		{"read-only tier, the runner dir", readOnlyPolicy(), "/tmp/.fullsend/env/run.env"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, CIGitHub)
			h.project = testProjectWith(t, "v0.0.111", tc.policy)
			ws := filepath.Join(t.TempDir(), "repo")
			writeFiles(t, ws, map[string]string{"README.md": "hello\n"})
			outDir := filepath.Join(t.TempDir(), "artifacts")
			_, err := h.run(context.Background(), Request{Workspace: ws, Outputs: []string{tc.output}, OutputDir: outDir})
			if !errors.Is(err, ErrPolicy) || !strings.Contains(err.Error(), "runner's own files") {
				t.Fatalf("err = %v, want the output refused\n%s", err, h.log.String())
			}
			entries, _ := os.ReadDir(outDir)
			if len(entries) != 0 {
				t.Errorf("something was downloaded: %v", entries)
			}
		})
	}
}

// A declared output the agent did not write is named with sandbox.outputs
// and the line of its declaration in the agent's verified definition.
func TestMissingWarningNamesTheDeclaration(t *testing.T) {
	x := &run{agent: &Agent{Name: "notes", Entry: bundle.ManifestAgent{Source: "agents/notes.md", Outputs: []string{"/sandbox/out"}},
		Files: map[string][]byte{"agents/notes.md": []byte("---\nname: notes\ndescription: d\nsandbox:\n  tier: network\n  outputs: [/sandbox/out]\n---\nWrite.\n")}}}
	for remote, want := range map[string]string{
		"/sandbox/out":   "agent notes wrote no /sandbox/out (sandbox.outputs, agents/notes.md:6): nothing to download",
		"/sandbox/other": "agent notes wrote no /sandbox/other (--download): nothing to download",
	} {
		if got := x.missingWarning(remote); !strings.HasPrefix(got, want) {
			t.Errorf("got  %s\nwant %s...", got, want)
		}
	}
}
