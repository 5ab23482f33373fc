package main

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fullsend-ai/agent-sandbox/bundle"
	"github.com/fullsend-ai/agent-sandbox/runner"
)

func TestParseMints(t *testing.T) {
	tests := []struct {
		in      string
		tier    bool
		wantErr bool
	}{
		{"triage:write=/tmp/t", true, false},
		{"triage=/tmp/t", false, false},
		{"triage=/tmp/t", true, true},
		{"triage:write", true, true},
		{"=/tmp/t", false, true},
		{"triage:read=", true, true},
	}
	for _, tc := range tests {
		_, err := parseMints([]string{tc.in}, tc.tier)
		if (err != nil) != tc.wantErr {
			t.Errorf("parseMints(%q, %v) = %v", tc.in, tc.tier, err)
		}
	}
}

// TestServeForgeCommand runs `fullsend serve forge` through cobra against a
// loopback fake forge: the minted token file works, the forge token stays
// out of stdout, stderr and the audit file, and cancelling stops the server.
func TestServeForgeCommand(t *testing.T) {
	const forgeToken = "ghs_cliTESTtokenNeverPrinted0123456789abc"
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+forgeToken {
			w.WriteHeader(401)
			return
		}
		io.WriteString(w, `{"number":7}`)
	}))
	defer upstream.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()

	dir := t.TempDir()
	t.Setenv("FULLSEND_TEST_FORGE_TOKEN", forgeToken)
	var stdout, stderr bytes.Buffer
	root := newRootCmd()
	root.SetOut(&stdout)
	root.SetErr(&stderr)
	root.SetArgs([]string{"serve", "forge", "--token-env", "FULLSEND_TEST_FORGE_TOKEN", "--upstream", upstream.URL,
		"--repo", "acme/widgets", "--issue", "42", "--listen", addr, "--audit", filepath.Join(dir, "audit.jsonl"),
		"--mint", "triage:write=" + filepath.Join(dir, "triage.token")})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- root.ExecuteContext(ctx) }()

	var tok []byte
	for range 200 {
		if tok, err = os.ReadFile(filepath.Join(dir, "triage.token")); err == nil {
			if c, err := net.Dial("tcp", addr); err == nil {
				c.Close()
				break
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	if fi, err := os.Stat(filepath.Join(dir, "triage.token")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file: %v %v", fi, err)
	}
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	req, _ := http.NewRequest("GET", "http://"+addr+"/repos/acme/widgets/issues/7", nil)
	req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(tok)))
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != `{"number":7}` {
		t.Fatalf("proxied GET: %d %s", resp.StatusCode, body)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("serve forge: %v", err)
	}
	audit, _ := os.ReadFile(filepath.Join(dir, "audit.jsonl"))
	if !strings.Contains(string(audit), `"decision":"allow"`) {
		t.Errorf("audit log: %s", audit)
	}
	for what, s := range map[string]string{"stdout": stdout.String(), "stderr": stderr.String(), "audit": string(audit)} {
		if strings.Contains(s, forgeToken) || strings.Contains(s, strings.TrimSpace(string(tok))) {
			t.Errorf("%s holds a token", what)
		}
	}
	if !strings.Contains(stdout.String(), "listening on "+addr) {
		t.Errorf("stdout: %q", stdout.String())
	}
}

// TestServeAgentsCommand runs `fullsend serve agents` through cobra with a
// shell script as the runner: the orchestrator's minted token spawns a
// subagent, which gets the forge proxy URL and its own token but not the
// forge token, and the service answers the script's JSON.
func TestServeAgentsCommand(t *testing.T) {
	const forgeToken = "ghs_cliAGENTStokenNeverPrinted0123456789"
	dir := t.TempDir()
	script := filepath.Join(dir, "runner.sh")
	if err := os.WriteFile(script, []byte(`#!/bin/sh
cat >/dev/null
leaks=$(env | grep -c ghs_)
printf '{"agent":"%s","arg":"%s","forge":"%s","has_token":%s,"leaks":%s,"digest":"%s"}' \
  "$FULLSEND_AGENT" "$1" "$FULLSEND_FORGE_URL" "$([ -n "$FULLSEND_AGENT_TOKEN" ] && echo true || echo false)" "$leaks" "$FULLSEND_POLICIES_DIGEST"
`), 0o700); err != nil {
		t.Fatal(err)
	}
	free := func() string {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		return ln.Addr().String()
	}
	forgeAddr, spawnAddr := free(), free()
	t.Setenv("GITHUB_TOKEN", forgeToken)
	var stdout, stderr bytes.Buffer
	root := newRootCmd()
	root.SetOut(&stdout)
	root.SetErr(&stderr)
	// Pinned, as in CI: the subagent's runner gets the same digest.
	digest := "sha256:" + testManifestDigest(t)
	root.SetArgs([]string{"serve", "agents", "../../spawn/testdata", "--repo", "acme/widgets",
		"--issue", "42", "--upstream", "http://127.0.0.1:1", "--forge-listen", forgeAddr, "--listen", spawnAddr,
		"--policies-digest", digest, "--runner", script, "--audit", filepath.Join(dir, "audit.jsonl"), "--mint", "triage=" + filepath.Join(dir, "triage.token")})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- root.ExecuteContext(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve agents: %v", err)
		}
	}()

	var tok []byte
	var err error
	for range 200 {
		if tok, err = os.ReadFile(filepath.Join(dir, "triage.token")); err == nil {
			if c, err := net.Dial("tcp", spawnAddr); err == nil {
				c.Close()
				break
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	req, _ := http.NewRequest("POST", "http://"+spawnAddr+"/run-agent", strings.NewReader(`{"agent":"duplicate-detector","prompt":"find duplicates"}`))
	req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(tok)))
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	want := `"result":{"agent":"duplicate-detector","arg":"duplicate-detector","forge":"http://` + forgeAddr + `","has_token":true,"leaks":0,"digest":"` + digest + `"}`
	if resp.StatusCode != 200 || !strings.Contains(string(body), want) {
		t.Fatalf("run-agent: %d %s\nwant it to contain %s", resp.StatusCode, body, want)
	}
	if strings.Contains(stdout.String()+stderr.String(), forgeToken) {
		t.Error("output holds the forge token")
	}
}

// testManifestDigest is the sha256 of spawn/testdata/policies/manifest.json.
func testManifestDigest(t *testing.T) string {
	t.Helper()
	_, sum, err := bundle.ReadManifest(os.DirFS("../../spawn/testdata/policies"))
	if err != nil {
		t.Fatal(err)
	}
	return sum
}

// TestServeAgentsPinning is the red-team finding "digest pinning is
// optional" for the spawn service: in CI it refuses to start without the
// verify step's digest, a digest must match the manifest it authorizes
// spawns from, and outside CI an unpinned service says so.
func TestServeAgentsPinning(t *testing.T) {
	good := "sha256:" + testManifestDigest(t)
	for _, tc := range []struct {
		name, ci, digest, runner string
		wantCode                 int
		want                     []string
	}{
		{name: "unpinned in GitHub Actions", ci: "GITHUB_ACTIONS", wantCode: runner.ExitPolicy,
			want: []string{"no policies digest pinned", "in CI (github)", "hint: set FULLSEND_POLICIES_DIGEST"}},
		{name: "unpinned in GitLab CI", ci: "GITLAB_CI", wantCode: runner.ExitPolicy,
			want: []string{"no policies digest pinned", "in CI (gitlab)"}},
		{name: "another manifest than the pinned one", ci: "GITHUB_ACTIONS", digest: "sha256:" + strings.Repeat("ab", 32),
			wantCode: runner.ExitPolicy, want: []string{"digest mismatch"}},
		{name: "pinned in CI passes the pin check", ci: "GITHUB_ACTIONS", digest: good, runner: " ", wantCode: 2,
			want: []string{"--runner"}},
		{name: "unpinned outside CI says so", digest: "", runner: " ", wantCode: 2,
			want: []string{"warning: policies digest not pinned", "--runner"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("GITHUB_ACTIONS", "")
			t.Setenv("GITLAB_CI", "")
			t.Setenv("FULLSEND_POLICIES_DIGEST", "")
			if tc.ci != "" {
				t.Setenv(tc.ci, "true")
			}
			t.Setenv("GITHUB_TOKEN", "ghs_pinningTESTtoken0123456789abcdefgh")
			args := []string{"serve", "agents", "../../spawn/testdata", "--repo", "acme/widgets",
				"--forge-listen", "127.0.0.1:0", "--listen", "127.0.0.1:0", "--policies-digest", tc.digest}
			if tc.runner != "" {
				args = append(args, "--runner", tc.runner)
			}
			var stdout, stderr bytes.Buffer
			root := newRootCmd()
			root.SetOut(&stdout)
			root.SetErr(&stderr)
			root.SetArgs(args)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			err := root.ExecuteContext(ctx)
			if err == nil || exitCode(err) != tc.wantCode {
				t.Fatalf("exit %d (%v), want %d", exitCode(err), err, tc.wantCode)
			}
			got := err.Error() + "\n" + stderr.String()
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("output lacks %q:\n%s", w, got)
				}
			}
		})
	}
}
