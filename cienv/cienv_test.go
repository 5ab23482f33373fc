package cienv

import (
	"strings"
	"testing"
)

// githubEnv is the default environment of a GitHub Actions step on
// github.com, with the values the variables reference documents
// (https://docs.github.com/en/actions/reference/variables-reference).
func githubEnv() map[string]string {
	return map[string]string{
		"CI":                  "true",
		"GITHUB_ACTIONS":      "true",
		"GITHUB_ACTOR":        "octocat",
		"GITHUB_API_URL":      "https://api.github.com",
		"GITHUB_EVENT_NAME":   "issues",
		"GITHUB_EVENT_PATH":   "/home/runner/work/_temp/_github_workflow/event.json",
		"GITHUB_GRAPHQL_URL":  "https://api.github.com/graphql",
		"GITHUB_JOB":          "triage",
		"GITHUB_OUTPUT":       "/home/runner/work/_temp/_runner_file_commands/set_output_a50ef383",
		"GITHUB_REF":          "refs/heads/main",
		"GITHUB_REF_NAME":     "main",
		"GITHUB_REPOSITORY":   "octocat/Hello-World",
		"GITHUB_RUN_ATTEMPT":  "3",
		"GITHUB_RUN_ID":       "1658821493",
		"GITHUB_RUN_NUMBER":   "3",
		"GITHUB_SERVER_URL":   "https://github.com",
		"GITHUB_SHA":          "ffac537e6cbbf934b08745a378932722df287a53",
		"GITHUB_STEP_SUMMARY": "/home/runner/work/_temp/_runner_file_commands/step_summary_1cb22d7f",
		"GITHUB_WORKFLOW":     "My test workflow",
		"GITHUB_WORKFLOW_REF": "octocat/hello-world/.github/workflows/my-workflow.yml@refs/heads/my_branch",
		"GITHUB_WORKSPACE":    "/home/runner/work/my-repo-name/my-repo-name",
		"RUNNER_TEMP":         "D:\\a\\_temp",
	}
}

// gitlabEnv is the predefined environment of a GitLab CI merge request
// pipeline job on gitlab.com
// (https://docs.gitlab.com/ci/variables/predefined_variables/).
func gitlabEnv() map[string]string {
	return map[string]string{
		"CI":                   "true",
		"GITLAB_CI":            "true",
		"CI_COMMIT_REF_NAME":   "feature-branch",
		"CI_COMMIT_SHA":        "1ecfd275763eff1d6b4844ea3168962458c9f27a",
		"CI_JOB_ID":            "50",
		"CI_JOB_URL":           "https://gitlab.com/gitlab-org/gitlab-foss/-/jobs/50",
		"CI_MERGE_REQUEST_IID": "7",
		"CI_PIPELINE_SOURCE":   "merge_request_event",
		"CI_PROJECT_DIR":       "/builds/gitlab-org/gitlab-foss",
		"CI_PROJECT_NAME":      "gitlab-foss",
		"CI_PROJECT_NAMESPACE": "gitlab-org",
		"CI_PROJECT_PATH":      "gitlab-org/gitlab-foss",
		"CI_PROJECT_URL":       "https://gitlab.com/gitlab-org/gitlab-foss",
		"CI_RUNNER_ID":         "12270837",
		"CI_SERVER_HOST":       "gitlab.com",
		"CI_SERVER_URL":        "https://gitlab.com",
	}
}

func with(m map[string]string, kv ...string) map[string]string {
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

func detect(m map[string]string) Env { return Detect(func(k string) string { return m[k] }) }

// facts is everything Env answers, flattened for comparison.
type facts struct {
	kind                                   Kind
	ci                                     bool
	owner, repo, host, issue, payload      Value
	revision, ref, runURL, source, builder string
	output, summary, workspace, tempDir    string
}

func read(e Env) facts {
	is := e.IssueSource()
	return facts{
		kind: e.Kind(), ci: e.IsCI(),
		owner: e.Owner(), repo: e.RepoName(), host: e.ForgeAPIHost(), issue: is.Number, payload: is.Payload,
		revision: e.Revision(), ref: e.Ref(), runURL: e.RunURL(), source: e.SourceRepo(), builder: e.BuilderID(),
		output: e.OutputFile(), summary: e.StepSummary(), workspace: e.Workspace(), tempDir: e.TempDir(),
	}
}

func TestDetect(t *testing.T) {
	gh, gl := githubEnv(), gitlabEnv()
	tests := []struct {
		name string
		env  map[string]string
		want facts
	}{
		{"github", gh, facts{
			kind: GitHubActions, ci: true,
			owner: Value{Value: "octocat", From: "GITHUB_REPOSITORY"}, repo: Value{Value: "Hello-World", From: "GITHUB_REPOSITORY"},
			host:     Value{Value: "api.github.com", From: "GITHUB_API_URL"},
			payload:  Value{Value: gh["GITHUB_EVENT_PATH"], From: "GITHUB_EVENT_PATH"},
			revision: gh["GITHUB_SHA"], ref: "refs/heads/main",
			runURL:  "https://github.com/octocat/Hello-World/actions/runs/1658821493/attempts/3",
			source:  "git+https://github.com/octocat/Hello-World",
			builder: "https://github.com/octocat/hello-world/.github/workflows/my-workflow.yml@refs/heads/my_branch",
			output:  gh["GITHUB_OUTPUT"], summary: gh["GITHUB_STEP_SUMMARY"], workspace: gh["GITHUB_WORKSPACE"], tempDir: gh["RUNNER_TEMP"],
		}},
		{"github enterprise server without API URL, first attempt unknown",
			with(gh, "GITHUB_API_URL", "", "GITHUB_SERVER_URL", "https://GHE.example.com/", "GITHUB_RUN_ATTEMPT", ""), facts{
				kind: GitHubActions, ci: true,
				owner: Value{Value: "octocat", From: "GITHUB_REPOSITORY"}, repo: Value{Value: "Hello-World", From: "GITHUB_REPOSITORY"},
				host:     Value{Value: "ghe.example.com", From: "GITHUB_SERVER_URL"},
				payload:  Value{Value: gh["GITHUB_EVENT_PATH"], From: "GITHUB_EVENT_PATH"},
				revision: gh["GITHUB_SHA"], ref: "refs/heads/main",
				runURL:  "https://GHE.example.com/octocat/Hello-World/actions/runs/1658821493",
				source:  "git+https://GHE.example.com/octocat/Hello-World",
				builder: "https://GHE.example.com/octocat/hello-world/.github/workflows/my-workflow.yml@refs/heads/my_branch",
				output:  gh["GITHUB_OUTPUT"], summary: gh["GITHUB_STEP_SUMMARY"], workspace: gh["GITHUB_WORKSPACE"], tempDir: gh["RUNNER_TEMP"],
			}},
		{"github without server or repository", map[string]string{"GITHUB_ACTIONS": "true", "GITHUB_WORKFLOW_REF": "o/r/.github/workflows/w.yml@refs/tags/v1", "GITHUB_RUN_ID": "1"}, facts{
			kind: GitHubActions, ci: true,
			owner: Value{From: "GITHUB_REPOSITORY"}, repo: Value{From: "GITHUB_REPOSITORY"}, host: Value{From: "GITHUB_API_URL"},
			payload: Value{From: "GITHUB_EVENT_PATH"},
			builder: "https://github.com/o/r/.github/workflows/w.yml@refs/tags/v1",
		}},
		{"gitlab merge request pipeline", gl, facts{
			kind: GitLabCI, ci: true,
			owner: Value{Value: "gitlab-org", From: "CI_PROJECT_NAMESPACE"}, repo: Value{Value: "gitlab-foss", From: "CI_PROJECT_NAME"},
			host:  Value{Value: "gitlab.com", From: "CI_SERVER_HOST"},
			issue: Value{Value: "7", From: "CI_MERGE_REQUEST_IID"}, payload: Value{From: "TRIGGER_PAYLOAD"},
			revision: gl["CI_COMMIT_SHA"], ref: "refs/heads/feature-branch",
			runURL: gl["CI_JOB_URL"], source: "git+https://gitlab.com/gitlab-org/gitlab-foss",
			builder:   "https://gitlab.com/gitlab-org/gitlab-foss/-/runners/12270837",
			workspace: gl["CI_PROJECT_DIR"],
		}},
		{"gitlab tag pipeline triggered by a webhook, self-managed",
			with(gl, "CI_MERGE_REQUEST_IID", "", "CI_COMMIT_TAG", "v1.2.0", "CI_COMMIT_REF_NAME", "v1.2.0",
				"TRIGGER_PAYLOAD", "/builds/gitlab-org/gitlab-foss.tmp/TRIGGER_PAYLOAD", "CI_SERVER_HOST", "GitLab.Example.com",
				"CI_SERVER_URL", "https://GitLab.Example.com/", "CI_RUNNER_ID", ""), facts{
				kind: GitLabCI, ci: true,
				owner: Value{Value: "gitlab-org", From: "CI_PROJECT_NAMESPACE"}, repo: Value{Value: "gitlab-foss", From: "CI_PROJECT_NAME"},
				host:     Value{Value: "gitlab.example.com", From: "CI_SERVER_HOST"},
				issue:    Value{From: "CI_MERGE_REQUEST_IID"},
				payload:  Value{Value: "/builds/gitlab-org/gitlab-foss.tmp/TRIGGER_PAYLOAD", From: "TRIGGER_PAYLOAD"},
				revision: gl["CI_COMMIT_SHA"], ref: "refs/tags/v1.2.0",
				runURL: gl["CI_JOB_URL"], source: "git+https://gitlab.com/gitlab-org/gitlab-foss",
				workspace: gl["CI_PROJECT_DIR"],
			}},
		{"gitlab subgroup namespace is reported as is", with(gl, "CI_PROJECT_NAMESPACE", "gitlab-org/team"), facts{
			kind: GitLabCI, ci: true,
			owner: Value{Value: "gitlab-org/team", From: "CI_PROJECT_NAMESPACE"}, repo: Value{Value: "gitlab-foss", From: "CI_PROJECT_NAME"},
			host:  Value{Value: "gitlab.com", From: "CI_SERVER_HOST"},
			issue: Value{Value: "7", From: "CI_MERGE_REQUEST_IID"}, payload: Value{From: "TRIGGER_PAYLOAD"},
			revision: gl["CI_COMMIT_SHA"], ref: "refs/heads/feature-branch",
			runURL: gl["CI_JOB_URL"], source: "git+https://gitlab.com/gitlab-org/gitlab-foss",
			builder:   "https://gitlab.com/gitlab-org/gitlab-foss/-/runners/12270837",
			workspace: gl["CI_PROJECT_DIR"],
		}},
		// A terminal: only the files a user points at are read.
		{"local", map[string]string{"CI": "true", "GITHUB_SHA": "abc", "CI_COMMIT_SHA": "def", "GITHUB_OUTPUT": "out", "CI_PROJECT_DIR": "/src"},
			facts{kind: Local, output: "out", workspace: "/src", builder: LocalBuilderID}},
		{"GITHUB_ACTIONS must be exactly true", map[string]string{"GITHUB_ACTIONS": "1", "GITHUB_REPOSITORY": "o/r"}, facts{kind: Local, builder: LocalBuilderID}},
		{"github wins over gitlab", with(gh, "GITLAB_CI", "true"), read(detect(gh))},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := read(detect(tc.env)); got != tc.want {
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestUnusableValues(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		get     func(Env) Value
		wantErr string
	}{
		{"repository with a path", with(githubEnv(), "GITHUB_REPOSITORY", "a/b/c"), Env.Owner, `GITHUB_REPOSITORY "a/b/c" is not OWNER/REPO`},
		{"repository without a slash", with(githubEnv(), "GITHUB_REPOSITORY", "ab"), Env.RepoName, `GITHUB_REPOSITORY "ab" is not OWNER/REPO`},
		{"relative API URL", with(githubEnv(), "GITHUB_API_URL", "api/v3"), Env.ForgeAPIHost, `"api/v3" is not an absolute URL`},
		{"bad server URL", with(githubEnv(), "GITHUB_API_URL", "", "GITHUB_SERVER_URL", "::"), Env.ForgeAPIHost, `"::" is not an absolute URL`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := tc.get(detect(tc.env))
			if v.Err == nil || v.Err.Error() != tc.wantErr || v.Value != "" || !v.Found() {
				t.Errorf("got %+v, want the error %q", v, tc.wantErr)
			}
		})
	}
}

func TestTrim(t *testing.T) {
	env := map[string]string{"GITHUB_ACTIONS": "true", "GITHUB_REPOSITORY": " acme/widgets\n", "GITHUB_EVENT_PATH": "/ev.json "}
	e := detect(env).Trim()
	if o, r, p := e.Owner(), e.RepoName(), e.IssueSource().Payload; o.Value != "acme" || r.Value != "widgets" || p.Value != "/ev.json" {
		t.Errorf("trimmed: %+v %+v %+v", o, r, p)
	}
	// Detection reads the marker as given: Trim keeps the kind detected.
	if k := detect(map[string]string{"GITHUB_ACTIONS": " true"}).Trim().Kind(); k != Local {
		t.Errorf("kind %s, want local", k)
	}
}

func TestZeroAndNil(t *testing.T) {
	for name, e := range map[string]Env{"zero": {}, "nil getenv": Detect(nil), "trimmed nil": Detect(nil).Trim()} {
		if got := read(e); got != (facts{kind: Local, builder: LocalBuilderID}) {
			t.Errorf("%s: %+v", name, got)
		}
	}
}

// TestBuilderID: the SLSA builder id per environment. Outside CI it is the
// local constant, which no CI builder id can equal; in CI a missing
// variable leaves it empty rather than claiming a local build.
func TestBuilderID(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want string
	}{
		{"local", nil, LocalBuilderID},
		{"local with stray CI variables", map[string]string{"CI": "true", "GITHUB_WORKFLOW_REF": "o/r/.github/workflows/w.yml@refs/heads/main", "CI_RUNNER_ID": "1"}, LocalBuilderID},
		{"github", githubEnv(), "https://github.com/octocat/hello-world/.github/workflows/my-workflow.yml@refs/heads/my_branch"},
		{"github without GITHUB_WORKFLOW_REF", with(githubEnv(), "GITHUB_WORKFLOW_REF", ""), ""},
		{"gitlab", gitlabEnv(), "https://gitlab.com/gitlab-org/gitlab-foss/-/runners/12270837"},
		{"gitlab without CI_RUNNER_ID", with(gitlabEnv(), "CI_RUNNER_ID", ""), ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := detect(tc.env).BuilderID()
			if got != tc.want {
				t.Errorf("BuilderID() = %q, want %q", got, tc.want)
			}
			if tc.want != LocalBuilderID && strings.HasPrefix(got, "urn:") {
				t.Errorf("a CI builder id %q looks local", got)
			}
		})
	}
}

// TestSecretsNamedOnly keeps the OIDC token variables out of every
// accessor: an Env never returns a secret.
func TestSecretsNamedOnly(t *testing.T) {
	env := with(githubEnv(), SigstoreIDToken, "secret-1", ActionsIDTokenRequestURL, "secret-2", ActionsIDTokenRequestToken, "secret-3")
	if s := fmtFacts(read(detect(env))); strings.Contains(s, "secret-") {
		t.Errorf("an accessor returned a secret: %s", s)
	}
}

func fmtFacts(f facts) string {
	var b strings.Builder
	for _, v := range []Value{f.owner, f.repo, f.host, f.issue, f.payload} {
		b.WriteString(v.Value + v.From + "|")
	}
	for _, s := range []string{f.revision, f.ref, f.runURL, f.source, f.builder, f.output, f.summary, f.workspace, f.tempDir} {
		b.WriteString(s + "|")
	}
	return b.String()
}

// TestRepositoryURL: the OCI source annotation is the repository's web
// address, and SLSA's source is the same address with git+.
func TestRepositoryURL(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want string
	}{
		{"github", githubEnv(), "https://github.com/octocat/Hello-World"},
		{"github enterprise", with(githubEnv(), "GITHUB_SERVER_URL", "https://ghe.example.com/"), "https://ghe.example.com/octocat/Hello-World"},
		{"gitlab", gitlabEnv(), gitlabEnv()["CI_PROJECT_URL"]},
		{"local", map[string]string{"GITHUB_REPOSITORY": "o/r", "CI_PROJECT_URL": "https://x"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := detect(tt.env)
			if got := e.RepositoryURL(); got != tt.want {
				t.Errorf("RepositoryURL() = %q, want %q", got, tt.want)
			}
			if want := "git+" + tt.want; tt.want != "" && e.SourceRepo() != want {
				t.Errorf("SourceRepo() = %q, want %q", e.SourceRepo(), want)
			}
		})
	}
}
