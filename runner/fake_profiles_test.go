package runner

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestFakeProviderProfiles checks the fake's Providers v2 model against
// what testdata/openshell-fake/profiles.go cites from OpenShell's source,
// at both supported tags: what each tag refuses, import conflicts, type
// resolution, attach/detach order and composition only with the setting.
func TestFakeProviderProfiles(t *testing.T) {
	bin := filepath.Join(fakeBin(t), "openshell")
	dir := t.TempDir()
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	acmeDir := filepath.Dir(write("acme/acme-api.yaml", acmeProfile))
	write("acme/README.md", "not a profile: skipped by extension\n")
	ghDir := filepath.Dir(write("gh/github.yaml", strings.Replace(acmeProfile, "id: acme-api", "id: github", 1)))
	mixDir := filepath.Dir(write("mix/a.yaml", strings.Replace(acmeProfile, "id: acme-api", "id: other-api", 1)))
	write("mix/b.yaml", strings.Replace(acmeProfile, "id: acme-api", "id: github", 1))
	pol := write("policy.yaml", "version: 1\nfilesystem_policy:\n  read_write: [/sandbox]\n")
	create := func(name string, providers ...string) []string {
		args := []string{"sandbox", "create", "--name", name, "--policy", pol, "--no-tty"}
		for _, p := range providers {
			args = append(args, "--provider", p)
		}
		return append(args, "--", "true")
	}
	v2 := []string{"settings", "set", "--global", "--key", "providers_v2_enabled", "--value", "true", "--yes"}
	type step struct {
		args           []string
		code           int
		stdout, stderr string
		absent         string // must not be in stdout
	}
	for _, tc := range []struct {
		name    string
		version string
		env     map[string]string
		steps   []step
	}{
		{name: "v0.0.111 import, refusals and composition", steps: []step{
			{args: []string{"provider", "profile", "import", "--from", ghDir}, code: 1,
				stderr: "provider profile 'github' is managed by source 'builtin' and cannot be overwritten"},
			{args: []string{"provider", "profile", "import", "--from", mixDir}, code: 1, stderr: "provider profile import failed"},
			{args: []string{"provider", "list-profiles", "-o", "json"}, absent: "other-api"}, // all or none
			{args: []string{"provider", "profile", "import", "--from", acmeDir, "--global"}, stdout: "Imported 1 provider profile."},
			{args: []string{"provider", "profile", "import", "--from", acmeDir}, code: 1, stderr: "custom provider profile 'acme-api' already exists"},
			{args: []string{"provider", "create", "--name", "x", "--type", "nope", "--credential", "ACME_TOKEN"}, code: 1,
				stderr: "unsupported provider type or profile: nope"},
			{args: []string{"provider", "create", "--name", "acme", "--type", "acme-api", "--credential", "ACME_TOKEN"}},
			{args: []string{"provider", "create", "--name", "gh", "--type", "gh", "--credential", "GITHUB_TOKEN"}},
			{args: create("fs-a", "acme", "gh")},
			{args: []string{"sandbox", "get", "fs-a", "--policy-only"}, absent: "_provider_"}, // setting unset: nothing composed
			{args: v2},
			{args: []string{"sandbox", "get", "fs-a", "--policy-only"}, stdout: "_provider_acme:"},
			{args: []string{"sandbox", "get", "fs-a", "--policy-only"}, stdout: "_provider_gh:"},
			{args: []string{"sandbox", "provider", "detach", "fs-a", "gh"}},
			{args: []string{"sandbox", "get", "fs-a", "--policy-only"}, absent: "_provider_gh"},
			{args: []string{"sandbox", "provider", "attach", "fs-a", "gh"}},
			{args: []string{"sandbox", "provider", "attach", "fs-a", "gh"}, code: 1, stderr: "already attached"},
			{args: []string{"sandbox", "get", "fs-a", "--policy-only"}, stdout: "host: github.com"}}},
		{name: "v0.0.83 has the commands but neither --global nor --global-profile", version: "0.0.83", steps: []step{
			{args: []string{"provider", "profile", "import", "--from", ghDir}, code: 1,
				stderr: "provider profile 'github' is built-in and cannot be overwritten"},
			{args: []string{"provider", "profile", "import", "--from", acmeDir, "--global"}, code: 2, stderr: "unexpected argument '--global'"},
			{args: []string{"provider", "list-profiles", "--global"}, code: 2, stderr: "unexpected argument '--global'"},
			{args: []string{"provider", "profile", "import", "--from", acmeDir}, stdout: "Imported 1 provider profile."},
			{args: []string{"provider", "create", "--name", "acme", "--type", "acme-api", "--credential", "ACME_TOKEN", "--global-profile"}, code: 2},
			{args: []string{"provider", "create", "--name", "acme", "--type", "acme-api", "--credential", "ACME_TOKEN"}},
			{args: v2},
			{args: create("fs-a", "acme")},
			{args: []string{"sandbox", "get", "fs-a", "--policy-only"}, stdout: "_provider_acme:"}}},
		{name: "a global policy composes nothing", env: map[string]string{"OPENSHELL_FAKE_FAIL": "global-policy"}, steps: []step{
			{args: []string{"provider", "profile", "import", "--from", acmeDir}},
			{args: []string{"provider", "create", "--name", "acme", "--type", "acme-api", "--credential", "ACME_TOKEN"}},
			{args: v2},
			{args: create("fs-a", "acme")},
			{args: []string{"sandbox", "get", "fs-a", "--policy-only"}, absent: "_provider_"},
			{args: []string{"policy", "get", "fs-a", "-o", "json"}, stdout: `"policy_source": "global"`}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := []string{"OPENSHELL_FAKE_STATE=" + t.TempDir(), "OPENSHELL_FAKE_GATEWAY=up", "ACME_TOKEN=a", "GITHUB_TOKEN=g"}
			if tc.version != "" {
				env = append(env, "OPENSHELL_FAKE_VERSION="+tc.version)
			}
			for k, v := range tc.env {
				env = append(env, k+"="+v)
			}
			for _, s := range tc.steps {
				cmd := exec.Command(bin, s.args...)
				cmd.Env = env
				var out, errb bytes.Buffer
				cmd.Stdout, cmd.Stderr = &out, &errb
				code := 0
				var ee *exec.ExitError
				if err := cmd.Run(); errors.As(err, &ee) {
					code = ee.ExitCode()
				} else if err != nil {
					t.Fatal(err)
				}
				if code != s.code || !strings.Contains(out.String(), s.stdout) || !strings.Contains(errb.String(), s.stderr) ||
					s.absent != "" && strings.Contains(out.String(), s.absent) {
					t.Fatalf("openshell %s: exit %d (want %d)\nstdout: %s\nstderr: %s", strings.Join(s.args, " "), code, s.code, out.String(), errb.String())
				}
			}
		})
	}
}
