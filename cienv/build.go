package cienv

import "strings"

// Revision is the git commit being built: GITHUB_SHA, CI_COMMIT_SHA.
func (e Env) Revision() string {
	switch e.Kind() {
	case GitHubActions:
		return e.get(GitHubSHA)
	case GitLabCI:
		return e.get(GitLabCommitSHA)
	}
	return ""
}

// Ref is the fully qualified git ref being built: GITHUB_REF; GitLab's
// CI_COMMIT_REF_NAME under refs/tags/ when CI_COMMIT_TAG is set, else
// under refs/heads/.
func (e Env) Ref() string {
	switch e.Kind() {
	case GitHubActions:
		return e.get(GitHubRef)
	case GitLabCI:
		r := e.get(GitLabCommitRef)
		switch {
		case r == "":
			return ""
		case e.get(GitLabCommitTag) != "":
			return "refs/tags/" + r
		}
		return "refs/heads/" + r
	}
	return ""
}

// RunURL is the web address of the run: GitHub's
// SERVER/OWNER/REPO/actions/runs/ID[/attempts/N] (when GITHUB_REPOSITORY
// and GITHUB_RUN_ID are set); GitLab's CI_JOB_URL.
func (e Env) RunURL() string {
	switch e.Kind() {
	case GitHubActions:
		repo, id := e.get(GitHubRepository), e.get(GitHubRunID)
		if repo == "" || id == "" {
			return ""
		}
		u := e.githubServer() + "/" + repo + "/actions/runs/" + id
		if a := e.get(GitHubRunAttempt); a != "" {
			u += "/attempts/" + a
		}
		return u
	case GitLabCI:
		return e.get(GitLabJobURL)
	}
	return ""
}

// RepositoryURL is the web address of the job's repository, as the OCI
// org.opencontainers.image.source annotation wants it: GitHub's
// GITHUB_SERVER_URL/GITHUB_REPOSITORY; GitLab's CI_PROJECT_URL.
func (e Env) RepositoryURL() string {
	switch e.Kind() {
	case GitHubActions:
		if repo := e.get(GitHubRepository); repo != "" {
			return e.githubServer() + "/" + repo
		}
	case GitLabCI:
		return e.get(GitLabProjectURL)
	}
	return ""
}

// SourceRepo is the repository in SLSA's URI form, git+https://HOST/PATH
// (RepositoryURL with the git+ scheme prefix).
func (e Env) SourceRepo() string {
	if u := e.RepositoryURL(); u != "" {
		return "git+" + u
	}
	return ""
}

// LocalBuilderID is the SLSA builder id of a build outside CI (a laptop, a
// workstation): a constant URN, so that it names no user or host (a
// provenance is public) and can never be mistaken for a CI builder, which
// is always an https URL (a GitHub workflow or a GitLab runner). A
// verifier that requires a CI builder id refuses it.
const LocalBuilderID = "urn:fullsend:builder:local:v1"

// BuilderID identifies what builds, for SLSA provenance: GitHub's workflow,
// SERVER/GITHUB_WORKFLOW_REF (owner/repo/.github/workflows/f.yml@ref);
// GitLab's runner, CI_SERVER_URL/CI_PROJECT_PATH/-/runners/CI_RUNNER_ID;
// LocalBuilderID outside CI. It is empty in CI when a variable is missing
// (a CI build never claims to be local).
func (e Env) BuilderID() string {
	switch e.Kind() {
	case Local:
		return LocalBuilderID
	case GitHubActions:
		if wf := e.get(GitHubWorkflowRef); wf != "" {
			return e.githubServer() + "/" + wf
		}
	case GitLabCI:
		s, p, id := e.get(GitLabServerURL), e.get(GitLabProjectPath), e.get(GitLabRunnerID)
		if s != "" && p != "" && id != "" {
			return strings.TrimSuffix(s, "/") + "/" + p + "/-/runners/" + id
		}
	}
	return ""
}

// githubServer is GITHUB_SERVER_URL without a trailing slash, github.com's
// when unset.
func (e Env) githubServer() string {
	if s := strings.TrimSuffix(e.get(GitHubServerURL), "/"); s != "" {
		return s
	}
	return defaultGitHubServer
}
