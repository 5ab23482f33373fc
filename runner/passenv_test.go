package runner

import (
	"context"
	"errors"
	"sort"
	"strings"
	"testing"
)

// TestAttackUnmaskedPassEnv: values passed to the agent under names that
// do not look secret (GH_PAT, ANTHROPIC_APIKEY) were printed in clear.
func TestAttackUnmaskedPassEnv(t *testing.T) {
	const pat, key = "ghp_UNMASKEDpat0123456789", "sk-ant-UNMASKEDkey0123456789"
	h := newHarness(t, CIGitHub)
	ws := agentWorkspace(t, `echo "pat $GH_PAT key $ANTHROPIC_APIKEY"; echo "pat $GH_PAT key $ANTHROPIC_APIKEY" >&2`+"\n")
	_, err := h.run(context.Background(), Request{Workspace: ws, Env: map[string]string{"GH_PAT": pat, "ANTHROPIC_APIKEY": key}})
	if err != nil {
		t.Fatalf("%v\n%s", err, h.log.String())
	}
	if !strings.Contains(h.stdout.String(), "pat *** key ***") {
		t.Errorf("values not delivered or not masked in the agent's output:\n%s", h.stdout.String())
	}
	for _, secret := range []string{pat, key} {
		masked := false
		for _, line := range strings.Split(h.log.String(), "\n") {
			if line == "::add-mask::"+secret {
				masked = true
			} else if strings.Contains(line, secret) {
				t.Errorf("value in the log: %q", line)
			}
		}
		if !masked {
			t.Errorf("no ::add-mask:: for %s", secret[:8])
		}
	}
}

// TestPublicEnv: PublicEnv values reach the agent unmasked; a credential
// cannot be public, and a name cannot be both secret and public.
func TestPublicEnv(t *testing.T) {
	h := newHarness(t, CIGitHub)
	ws := agentWorkspace(t, `echo "agent $FULLSEND_AGENT url $FULLSEND_SPAWN_URL"`+"\n")
	_, err := h.run(context.Background(), Request{Workspace: ws, Env: map[string]string{"FULLSEND_AGENT_TOKEN": "fsat_public_test_0123"},
		PublicEnv: map[string]string{"FULLSEND_AGENT": "helper-agent", "FULLSEND_SPAWN_URL": "http://10.0.0.1:8081"}})
	if err != nil {
		t.Fatalf("%v\n%s", err, h.log.String())
	}
	if !strings.Contains(h.stdout.String(), "agent helper-agent url http://10.0.0.1:8081") || !strings.Contains(h.stdout.String(), "agent token: ***") {
		t.Errorf("agent output:\n%s", h.stdout.String())
	}
	if strings.Contains(h.log.String(), "::add-mask::helper-agent") || !strings.Contains(h.log.String(), "::add-mask::fsat_public_test_0123") {
		t.Errorf("masks:\n%s", h.log.String())
	}
	for _, req := range []Request{
		{PublicEnv: map[string]string{"GITHUB_TOKEN": "ghs_x"}},
		{PublicEnv: map[string]string{"A": "1"}, Env: map[string]string{"A": "1"}},
	} {
		if _, err := newHarness(t, CILocal).run(context.Background(), req); !errors.Is(err, ErrPolicy) {
			t.Errorf("%+v: %v, want ErrPolicy", req, err)
		}
	}
}

func TestSelectEnv(t *testing.T) {
	environ := []string{"PATH=/bin", "GITHUB_TOKEN=ghs_x", "GITHUB_REPOSITORY=a/b", "CI_JOB_TOKEN=glcbt", "CI_JOB_JWT_V2=jwt",
		"FULLSEND_AGENT=triage", "FULLSEND_AGENT_TOKEN=fsat", "GH_PAT=ghp", "ANTHROPIC_API_KEY=sk", "EMPTY="}
	for _, tc := range []struct {
		patterns []string
		want     string // sorted names
		skipped  string
	}{
		{[]string{"*"}, "ANTHROPIC_API_KEY EMPTY FULLSEND_AGENT FULLSEND_AGENT_TOKEN GITHUB_REPOSITORY PATH", "CI_JOB_JWT_V2 CI_JOB_TOKEN GH_PAT GITHUB_TOKEN"},
		{[]string{"GITHUB_*", "CI_*"}, "GITHUB_REPOSITORY", "CI_JOB_JWT_V2 CI_JOB_TOKEN GITHUB_TOKEN"},
		{[]string{"*", "GITHUB_TOKEN"}, "ANTHROPIC_API_KEY EMPTY FULLSEND_AGENT FULLSEND_AGENT_TOKEN GITHUB_REPOSITORY GITHUB_TOKEN PATH", "CI_JOB_JWT_V2 CI_JOB_TOKEN GH_PAT"},
		{[]string{"GITHUB_TOKEN", "GITHUB_*"}, "GITHUB_REPOSITORY GITHUB_TOKEN", ""},
		{[]string{"FULLSEND_*"}, "FULLSEND_AGENT FULLSEND_AGENT_TOKEN", ""},
		{[]string{"NOPE"}, "", ""},
	} {
		env, skipped, err := SelectEnv(environ, tc.patterns)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for k := range env {
			names = append(names, k)
		}
		sort.Strings(names)
		if got := strings.Join(names, " "); got != tc.want || strings.Join(skipped, " ") != tc.skipped {
			t.Errorf("%q: %q skipped %q, want %q skipped %q", tc.patterns, got, skipped, tc.want, tc.skipped)
		}
	}
	for _, bad := range []string{"", "A*B", "**", "1X", "A-B*"} {
		if _, _, err := SelectEnv(environ, []string{bad}); err == nil {
			t.Errorf("pattern %q accepted", bad)
		}
	}
}

func TestIsCredentialEnv(t *testing.T) {
	for name, want := range map[string]bool{
		"GITHUB_TOKEN": true, "GH_TOKEN": true, "GITLAB_TOKEN": true, "CI_JOB_TOKEN": true, "CI_JOB_JWT": true,
		"CI_JOB_JWT_V1": true, "CI_JOB_JWT_V2": true, "ACTIONS_ID_TOKEN_REQUEST_TOKEN": true, "ACTIONS_RUNTIME_TOKEN": true,
		"GH_PAT": true, "GITHUB_PAT": true, "GITLAB_PRIVATE_TOKEN": true, "CI_REGISTRY_PASSWORD": true, "CI_REPOSITORY_URL": true,
		"SIGSTORE_ID_TOKEN": true, "github_token": true,
		"GITHUB_REPOSITORY": false, "CI_PROJECT_DIR": false, "FULLSEND_AGENT_TOKEN": false, "ANTHROPIC_API_KEY": false,
		"GITHUB_PATH": false, "RUNNER_TEMP": false, "ACTIONS_ID_TOKEN_REQUEST_URL": true,
	} {
		if got := IsCredentialEnv(name); got != want {
			t.Errorf("IsCredentialEnv(%s) = %v, want %v", name, got, want)
		}
	}
}
