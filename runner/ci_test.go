package runner

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/fullsend-ai/agent-sandbox/placeholder"
)

var allNames = []string{"FORGE_HOST", "HOST_IP", "ISSUE_NUMBER", "OWNER", "REPO_NAME"}

func TestResolve(t *testing.T) {
	root := fstest.MapFS{
		"proc/net/route":   {Data: []byte(route)},
		"ev/issue.json":    {Data: []byte(`{"action":"opened","issue":{"number":42}}`)},
		"ev/pr.json":       {Data: []byte(`{"action":"opened","number":17,"pull_request":{"number":17}}`)},
		"ev/comment.json":  {Data: []byte(`{"action":"created","issue":{"number":9},"comment":{"id":1}}`)},
		"ev/dispatch.json": {Data: []byte(`{"inputs":{"issue_number":"31"}}`)},
		"ev/push.json":     {Data: []byte(`{"ref":"refs/heads/main"}`)},
		"ev/bad.json":      {Data: []byte(`{"issue":{"number":"x1"}}`)},
		"gl/issue.json":    {Data: []byte(`{"object_kind":"issue","object_attributes":{"iid":12}}`)},
		"gl/note.json":     {Data: []byte(`{"object_kind":"note","object_attributes":{"noteable_type":"Issue"},"issue":{"iid":5}}`)},
	}
	gh := func(event string) map[string]string {
		return map[string]string{"GITHUB_ACTIONS": "true", "GITHUB_REPOSITORY": "acme/widgets",
			"GITHUB_SERVER_URL": "https://github.com", "GITHUB_EVENT_PATH": event}
	}
	gl := map[string]string{"GITLAB_CI": "true", "CI_PROJECT_NAMESPACE": "acme", "CI_PROJECT_NAME": "widgets",
		"CI_SERVER_HOST": "gitlab.example.com", "CI_MERGE_REQUEST_IID": "3"}
	with := func(m map[string]string, kv ...string) map[string]string {
		out := map[string]string{}
		for k, v := range m {
			out[k] = v
		}
		for i := 0; i+1 < len(kv); i += 2 {
			if kv[i+1] == "" {
				delete(out, kv[i])
			} else {
				out[kv[i]] = kv[i+1]
			}
		}
		return out
	}
	for _, tc := range []struct {
		name    string
		env     map[string]string
		set     placeholder.Values
		names   []string // default allNames
		lookup  []string
		want    map[string]string
		wantErr string
	}{
		{name: "github issue", env: gh("/ev/issue.json"),
			want: map[string]string{"OWNER": "acme", "REPO_NAME": "widgets", "ISSUE_NUMBER": "42", "FORGE_HOST": "api.github.com", "HOST_IP": "172.17.0.1"}},
		{name: "github pull request", env: gh("/ev/pr.json"), want: map[string]string{"ISSUE_NUMBER": "17"}},
		{name: "github issue comment", env: gh("/ev/comment.json"), want: map[string]string{"ISSUE_NUMBER": "9"}},
		{name: "github workflow_dispatch input", env: gh("/ev/dispatch.json"), want: map[string]string{"ISSUE_NUMBER": "31"}},
		{name: "github enterprise api url", env: with(gh("/ev/issue.json"), "GITHUB_API_URL", "https://ghe.example.com/api/v3"),
			want: map[string]string{"FORGE_HOST": "ghe.example.com"}},
		{name: "github push has no issue", env: gh("/ev/push.json"), wantErr: "{{ISSUE_NUMBER}} is not set"},
		{name: "github bad number", env: gh("/ev/bad.json"), wantErr: "not a positive integer"},
		{name: "github missing event file", env: gh("/ev/none.json"), wantErr: "reading event payload"},
		{name: "github --set wins", env: gh("/ev/push.json"), set: placeholder.Values{"ISSUE_NUMBER": "8", "HOST_IP": "10.1.2.3"},
			want: map[string]string{"ISSUE_NUMBER": "8", "HOST_IP": "10.1.2.3"}},
		{name: "github repo with glob", env: with(gh("/ev/issue.json"), "GITHUB_REPOSITORY", "acme/*"), wantErr: "REPO_NAME"},
		{name: "host.docker.internal wins over the route", env: gh("/ev/issue.json"), lookup: []string{"192.168.65.254"},
			want: map[string]string{"HOST_IP": "192.168.65.254"}},
		{name: "loopback host.docker.internal is skipped", env: gh("/ev/issue.json"), lookup: []string{"127.0.0.1"},
			want: map[string]string{"HOST_IP": "172.17.0.1"}},
		{name: "gitlab merge request", env: gl,
			want: map[string]string{"OWNER": "acme", "REPO_NAME": "widgets", "ISSUE_NUMBER": "3", "FORGE_HOST": "gitlab.example.com"}},
		{name: "gitlab issue webhook", env: with(gl, "CI_MERGE_REQUEST_IID", "", "TRIGGER_PAYLOAD", "/gl/issue.json"),
			want: map[string]string{"ISSUE_NUMBER": "12"}},
		{name: "gitlab note webhook", env: with(gl, "CI_MERGE_REQUEST_IID", "", "TRIGGER_PAYLOAD", "/gl/note.json"),
			want: map[string]string{"ISSUE_NUMBER": "5"}},
		{name: "gitlab subgroup", env: with(gl, "CI_PROJECT_NAMESPACE", "acme/team"), wantErr: "subgroup"},
		{name: "gitlab no iid", env: with(gl, "CI_MERGE_REQUEST_IID", ""), wantErr: "CI_MERGE_REQUEST_IID or the TRIGGER_PAYLOAD iid"},
		// Only an agent whose policy uses {{OWNER}} or {{ISSUE_NUMBER}} needs them.
		{name: "gitlab subgroup, agent without OWNER", env: with(gl, "CI_PROJECT_NAMESPACE", "acme/team"),
			names: []string{"FORGE_HOST", "REPO_NAME"}, want: map[string]string{"REPO_NAME": "widgets", "FORGE_HOST": "gitlab.example.com"}},
		{name: "gitlab subgroup, OWNER given explicitly", env: with(gl, "CI_PROJECT_NAMESPACE", "acme/team"),
			set: placeholder.Values{"OWNER": "team"}, want: map[string]string{"OWNER": "team"}},
		{name: "gitlab no iid, agent without ISSUE_NUMBER", env: with(gl, "CI_MERGE_REQUEST_IID", ""),
			names: []string{"OWNER", "REPO_NAME"}, want: map[string]string{"OWNER": "acme", "REPO_NAME": "widgets"}},
		{name: "gitlab no iid, ISSUE_NUMBER given explicitly", env: with(gl, "CI_MERGE_REQUEST_IID", ""),
			set: placeholder.Values{"ISSUE_NUMBER": "4"}, want: map[string]string{"ISSUE_NUMBER": "4"}},
		{name: "local needs --set", env: map[string]string{}, wantErr: "4 runtime placeholder(s) unresolved"},
		{name: "invalid --set", env: gh("/ev/issue.json"), set: placeholder.Values{"ISSUE_NUMBER": "0"}, wantErr: "positive"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := Environment{Getenv: MapEnv(tc.env), Root: root}
			if tc.lookup != nil {
				e.LookupHost = func(context.Context, string) ([]string, error) { return tc.lookup, nil }
			}
			names := allNames
			if tc.names != nil {
				names = tc.names
			}
			res, err := e.Resolve(context.Background(), names, tc.set)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !errors.Is(err, ErrPlaceholder) {
					t.Fatalf("error %v, want %q wrapping ErrPlaceholder", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range tc.want {
				if res.Values[k] != v {
					t.Errorf("{{%s}} = %q, want %q (from %s)", k, res.Values[k], v, res.From[k])
				}
			}
		})
	}
}

// TestEnvironmentCI: the runner's environment is read by cienv through its
// Getenv.
func TestEnvironmentCI(t *testing.T) {
	for env, want := range map[string]CIKind{"GITHUB_ACTIONS": CIGitHub, "GITLAB_CI": CIGitLab, "CI": CILocal} {
		if got := MapEnvironment(map[string]string{env: "true"}, nil).CI().Kind(); got != want {
			t.Errorf("%s=true: %s, want %s", env, got, want)
		}
	}
}

// FuzzResolve feeds arbitrary CI variable values through the adapters: any
// value that comes out must pass its placeholder's validator.
func FuzzResolve(f *testing.F) {
	f.Add("acme/widgets", "https://github.com", "3", "gitlab.example.com", "acme", true)
	f.Add("a/b/c", "::", "-1", "Ex*ample", "x/../y", false)
	f.Fuzz(func(t *testing.T, repo, server, iid, host, ns string, github bool) {
		env := map[string]string{"GITLAB_CI": "true", "CI_PROJECT_NAMESPACE": ns, "CI_PROJECT_NAME": repo,
			"CI_MERGE_REQUEST_IID": iid, "CI_SERVER_HOST": host}
		if github {
			env = map[string]string{"GITHUB_ACTIONS": "true", "GITHUB_REPOSITORY": repo, "GITHUB_SERVER_URL": server}
		}
		e := Environment{Getenv: MapEnv(env), Root: fstest.MapFS{}}
		res, _ := e.Resolve(context.Background(), []string{"OWNER", "REPO_NAME", "ISSUE_NUMBER", "FORGE_HOST"}, nil)
		for k, v := range res.Values {
			if err := placeholder.Validate(k, v); err != nil {
				t.Fatalf("{{%s}} = %q escaped validation: %v", k, v, err)
			}
		}
	})
}

// TestResolveExplicitSpelling: the caller names its explicit values (the
// CLI's --set) in Resolution.From and in hints; the library names no flag.
func TestResolveExplicitSpelling(t *testing.T) {
	root := fstest.MapFS{"proc/net/route": {Data: []byte(route)}}
	gh := map[string]string{"GITHUB_ACTIONS": "true", "GITHUB_REPOSITORY": "acme/*", "GITHUB_SERVER_URL": "https://github.com"}
	names := []string{"ISSUE_NUMBER", "OWNER", "REPO_NAME"}
	set := placeholder.Values{"OWNER": "acme"}
	for _, tc := range []struct {
		explicit, from string
		want           []string
	}{
		{"--set", "--set", []string{
			"{{ISSUE_NUMBER}} is not set: expected from the event payload (issue.number, pull_request.number or inputs.issue_number); pass --set ISSUE_NUMBER=VALUE",
			`(from GITHUB_REPOSITORY); pass --set REPO_NAME=VALUE to override`,
		}},
		{"", "explicit", []string{
			"{{ISSUE_NUMBER}} is not set: expected from the event payload (issue.number, pull_request.number or inputs.issue_number); pass ISSUE_NUMBER=VALUE",
			`(from GITHUB_REPOSITORY); pass REPO_NAME=VALUE to override`,
		}},
	} {
		e := Environment{Getenv: MapEnv(gh), Root: root, Explicit: tc.explicit}
		res, err := e.Resolve(context.Background(), names, set)
		if err == nil || !errors.Is(err, ErrPlaceholder) {
			t.Fatalf("%q: error %v, want ErrPlaceholder", tc.explicit, err)
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%q: error\n%v\nwant it to contain %q", tc.explicit, err, w)
			}
		}
		if res.From["OWNER"] != tc.from {
			t.Errorf("%q: OWNER from %q, want %q", tc.explicit, res.From["OWNER"], tc.from)
		}
		e.Getenv = MapEnv(nil)
		if _, err := e.Resolve(context.Background(), []string{"HOST_IP", "FORGE_HOST"}, nil); err == nil ||
			!strings.Contains(err.Error(), "not derivable in local CI; pass "+strings.TrimSpace(tc.explicit+" FORGE_HOST=VALUE")) {
			t.Errorf("%q: local error %v", tc.explicit, err)
		}
	}
}
