package spawn

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestCommandRunner(t *testing.T) {
	t.Setenv("GITHUB_TOKEN", forgeToken)
	t.Setenv("FULLSEND_FORGE_TOKEN", forgeToken)
	req := Request{ID: "r1", Agent: "duplicate-detector", Prompt: "find duplicates of #42",
		Env: map[string]string{EnvAgent: "duplicate-detector", EnvAgentToken: "fsa_child", EnvForgeURL: "http://forge"}}
	script := `read -r prompt; printf 'argv=%s\n' "$*"; printf 'prompt=%s\n' "$prompt"; env; exit "${CODE:-0}"`
	tests := []struct {
		name     string
		args     []string
		env      map[string]string
		wantCode int
		want     []string
		notWant  []string
	}{
		{name: "environment is exactly the pass list and the request", args: []string{"/bin/sh", "-c", script, "sh"},
			want:    []string{"argv=duplicate-detector", "prompt=find duplicates of #42", "FULLSEND_AGENT_TOKEN=fsa_child", "FULLSEND_FORGE_URL=http://forge", "PATH="},
			notWant: []string{forgeToken, "GITHUB_TOKEN"}},
		{name: "exit status is the subagent's", args: []string{"/bin/sh", "-c", script, "sh"}, env: map[string]string{"CODE": "3"}, wantCode: 3,
			want: []string{"CODE=3"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := req
			r.Env = map[string]string{}
			for k, v := range req.Env {
				r.Env[k] = v
			}
			for k, v := range tc.env {
				r.Env[k] = v
			}
			res, err := (&CommandRunner{Args: tc.args}).Run(context.Background(), r)
			if err != nil {
				t.Fatal(err)
			}
			out := string(res.Output)
			if res.ExitCode != tc.wantCode {
				t.Errorf("exit %d, want %d", res.ExitCode, tc.wantCode)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			for _, w := range tc.notWant {
				if strings.Contains(out, w) {
					t.Errorf("output holds %q", w)
				}
			}
		})
	}
}

func TestCommandRunnerCancelAndLimits(t *testing.T) {
	t.Run("cancel sends SIGTERM and waits", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		r := &CommandRunner{Args: []string{"/bin/sh", "-c", `trap 'echo cleaned; exit 143' TERM; while :; do sleep 0.01; done`, "sh"}, GracePeriod: 5 * time.Second}
		_, err := r.Run(ctx, Request{Agent: "a", Prompt: "p"})
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err %v, want deadline exceeded", err)
		}
	})
	t.Run("output limit", func(t *testing.T) {
		r := &CommandRunner{Args: []string{"/bin/sh", "-c", `head -c 5000 /dev/zero`, "sh"}, MaxOutput: 1000}
		if _, err := r.Run(context.Background(), Request{Agent: "a", Prompt: "p"}); err == nil || !strings.Contains(err.Error(), "larger than 1000") {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("credential-looking pass-through refused", func(t *testing.T) {
		for _, n := range []string{"GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY", "CI_JOB_TOKEN", "NPM_AUTH"} {
			if err := (&CommandRunner{Args: []string{"x"}, PassEnv: []string{n}}).Validate(); err == nil {
				t.Errorf("PassEnv %s accepted", n)
			}
		}
		if err := (&CommandRunner{}).Validate(); err == nil {
			t.Error("no command accepted")
		}
	})
}

// TestSpawnedChildrenInheritThePinnedDigest is the red-team finding "`serve
// agents` never passes the digest to the children it spawns": every child
// runner gets the service's policies digest, and neither the pass-through
// environment nor the request can replace it.
func TestSpawnedChildrenInheritThePinnedDigest(t *testing.T) {
	const pinned = "sha256:" + "ab" + "cd"
	t.Setenv(EnvPoliciesDigest, "sha256:from-the-service-environment")
	script := `env; exit 0`
	for _, tc := range []struct {
		name    string
		pass    []string
		reqEnv  map[string]string
		digest  string
		want    string
		notWant string
	}{
		{name: "pinned", digest: pinned, want: EnvPoliciesDigest + "=" + pinned + "\n"},
		{name: "pass-through cannot replace it", digest: pinned, pass: []string{"PATH", EnvPoliciesDigest},
			want: EnvPoliciesDigest + "=" + pinned + "\n", notWant: "from-the-service-environment"},
		{name: "request cannot replace it", digest: pinned, reqEnv: map[string]string{EnvPoliciesDigest: "sha256:forged"},
			want: EnvPoliciesDigest + "=" + pinned + "\n", notWant: "forged"},
		{name: "unpinned sets nothing", notWant: EnvPoliciesDigest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &CommandRunner{Args: []string{"/bin/sh", "-c", script, "sh"}, PassEnv: tc.pass, PoliciesDigest: tc.digest}
			res, err := c.Run(context.Background(), Request{Agent: "a", Prompt: "p", Env: tc.reqEnv})
			if err != nil {
				t.Fatal(err)
			}
			out := string(res.Output)
			if tc.want != "" && !strings.Contains(out, tc.want) {
				t.Errorf("child environment lacks %q:\n%s", tc.want, out)
			}
			if tc.notWant != "" && strings.Contains(out, tc.notWant) {
				t.Errorf("child environment holds %q:\n%s", tc.notWant, out)
			}
		})
	}
}
