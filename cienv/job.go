package cienv

import (
	"fmt"
	"net/url"
	"strings"
)

// Owner is the owner (user, organisation or group) of the repository the
// job runs for: GitHub's GITHUB_REPOSITORY before its slash; GitLab's
// CI_PROJECT_NAMESPACE, which may be a subgroup path (group/sub).
func (e Env) Owner() Value {
	owner, _ := e.repository()
	return owner
}

// RepoName is the name of the repository the job runs for: GitHub's
// GITHUB_REPOSITORY after its slash; GitLab's CI_PROJECT_NAME.
func (e Env) RepoName() Value {
	_, name := e.repository()
	return name
}

func (e Env) repository() (owner, name Value) {
	switch e.Kind() {
	case GitHubActions:
		owner, name = Value{From: GitHubRepository}, Value{From: GitHubRepository}
		repo := e.get(GitHubRepository)
		if repo == "" {
			return owner, name
		}
		o, n, ok := strings.Cut(repo, "/")
		if !ok || strings.Contains(n, "/") {
			err := fmt.Errorf("%s %q is not OWNER/REPO", GitHubRepository, repo)
			owner.Err, name.Err = err, err
			return owner, name
		}
		owner.Value, name.Value = o, n
	case GitLabCI:
		owner = Value{Value: e.get(GitLabNamespace), From: GitLabNamespace}
		name = Value{Value: e.get(GitLabProjectName), From: GitLabProjectName}
	}
	return owner, name
}

// ForgeAPIHost is the lower-case host name of the forge's REST API: the
// host of GitHub's GITHUB_API_URL, else of GITHUB_SERVER_URL (github.com
// serves its API from api.github.com); GitLab's CI_SERVER_HOST.
func (e Env) ForgeAPIHost() Value {
	switch e.Kind() {
	case GitHubActions:
		if api := e.get(GitHubAPIURL); api != "" {
			h, err := urlHost(api)
			return Value{Value: h, From: GitHubAPIURL, Err: err}
		}
		srv := e.get(GitHubServerURL)
		if srv == "" {
			return Value{From: GitHubAPIURL}
		}
		h, err := urlHost(srv)
		if h == "github.com" {
			h = "api.github.com"
		}
		return Value{Value: h, From: GitHubServerURL, Err: err}
	case GitLabCI:
		return Value{Value: strings.ToLower(e.get(GitLabServerHost)), From: GitLabServerHost}
	}
	return Value{}
}

// IssueSource says where the number of the issue, pull request or merge
// request a job runs for is found.
type IssueSource struct {
	// Number holds it when a variable does: GitLab's CI_MERGE_REQUEST_IID
	// in a merge request pipeline.
	Number Value
	// Payload is the path of the webhook payload that holds it otherwise:
	// GitHub's GITHUB_EVENT_PATH (the event that triggered the workflow),
	// GitLab's TRIGGER_PAYLOAD (the body of a webhook-triggered pipeline).
	// The caller reads and parses it according to Kind.
	Payload Value
}

// IssueSource tells where the job's issue number is found.
func (e Env) IssueSource() IssueSource {
	switch e.Kind() {
	case GitHubActions:
		return IssueSource{Payload: Value{Value: e.get(GitHubEventPath), From: GitHubEventPath}}
	case GitLabCI:
		return IssueSource{
			Number:  Value{Value: e.get(GitLabMergeRequest), From: GitLabMergeRequest},
			Payload: Value{Value: e.get(GitLabTriggerPayload), From: GitLabTriggerPayload},
		}
	}
	return IssueSource{}
}

func urlHost(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Hostname() == "" {
		return "", fmt.Errorf("%q is not an absolute URL", raw)
	}
	return strings.ToLower(u.Hostname()), nil
}
