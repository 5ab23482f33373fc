package cienv

import "strings"

// Kind names a CI system. Its values are the names the CLI, the run result
// and the CI templates use.
type Kind string

// The CI systems fullsend adapts to.
const (
	GitHubActions Kind = "github"
	GitLabCI      Kind = "gitlab"
	Local         Kind = "local"
)

// GitHub Actions default environment variables
// (https://docs.github.com/en/actions/reference/variables-reference).
const (
	GitHubActionsVar  = "GITHUB_ACTIONS" // "true" in every step
	GitHubRepository  = "GITHUB_REPOSITORY"
	GitHubServerURL   = "GITHUB_SERVER_URL"
	GitHubAPIURL      = "GITHUB_API_URL"
	GitHubSHA         = "GITHUB_SHA"
	GitHubRef         = "GITHUB_REF"
	GitHubRunID       = "GITHUB_RUN_ID"
	GitHubRunAttempt  = "GITHUB_RUN_ATTEMPT"
	GitHubWorkflowRef = "GITHUB_WORKFLOW_REF"
	GitHubEventPath   = "GITHUB_EVENT_PATH"
	GitHubWorkspace   = "GITHUB_WORKSPACE"
	RunnerTemp        = "RUNNER_TEMP"
	// GitHubOutput and GitHubStepSummary are environment files
	// (https://docs.github.com/en/actions/reference/workflows-and-actions/workflow-commands#environment-files).
	GitHubOutput      = "GITHUB_OUTPUT"
	GitHubStepSummary = "GITHUB_STEP_SUMMARY"
)

// GitLab CI predefined variables
// (https://docs.gitlab.com/ci/variables/predefined_variables/).
const (
	GitLabCIVar        = "GITLAB_CI" // "true" in every job
	GitLabNamespace    = "CI_PROJECT_NAMESPACE"
	GitLabProjectName  = "CI_PROJECT_NAME"
	GitLabProjectPath  = "CI_PROJECT_PATH"
	GitLabProjectURL   = "CI_PROJECT_URL"
	GitLabProjectDir   = "CI_PROJECT_DIR"
	GitLabServerURL    = "CI_SERVER_URL"
	GitLabServerHost   = "CI_SERVER_HOST"
	GitLabCommitSHA    = "CI_COMMIT_SHA"
	GitLabCommitRef    = "CI_COMMIT_REF_NAME"
	GitLabCommitTag    = "CI_COMMIT_TAG"
	GitLabJobURL       = "CI_JOB_URL"
	GitLabRunnerID     = "CI_RUNNER_ID"
	GitLabMergeRequest = "CI_MERGE_REQUEST_IID"
	// GitLabTriggerPayload is the webhook body of a triggered pipeline, as a
	// file variable (https://docs.gitlab.com/ci/triggers/#access-webhook-payload).
	GitLabTriggerPayload = "TRIGGER_PAYLOAD"
)

// OIDC identity token variables, for keyless signing. Their values are
// secrets: this package names them and never reads them.
const (
	// SigstoreIDToken holds a ready token with audience "sigstore": GitLab's
	// `id_tokens: SIGSTORE_ID_TOKEN: aud: sigstore`
	// (https://docs.gitlab.com/ci/secrets/id_token_authentication/), or any
	// CI that provides one.
	SigstoreIDToken = "SIGSTORE_ID_TOKEN"
	// ActionsIDTokenRequestURL and ActionsIDTokenRequestToken reach the
	// GitHub Actions token service of a job with `permissions: id-token:
	// write` (https://docs.github.com/en/actions/reference/security/oidc).
	ActionsIDTokenRequestURL   = "ACTIONS_ID_TOKEN_REQUEST_URL"
	ActionsIDTokenRequestToken = "ACTIONS_ID_TOKEN_REQUEST_TOKEN"
)

// defaultGitHubServer is github.com's web address, for GitHub Actions
// environments that do not say.
const defaultGitHubServer = "https://github.com"

// Env is the CI environment of one process, read through its getenv. The
// zero Env is Local with every variable empty.
type Env struct {
	kind   Kind
	getenv func(string) string
}

// Detect tells GitHub Actions, GitLab CI and anything else apart by their
// documented marker variables (GITHUB_ACTIONS=true, GITLAB_CI=true). A nil
// getenv reads as an empty environment.
func Detect(getenv func(string) string) Env {
	if getenv == nil {
		return Env{kind: Local}
	}
	e := Env{kind: Local, getenv: getenv}
	switch {
	case getenv(GitHubActionsVar) == "true":
		e.kind = GitHubActions
	case getenv(GitLabCIVar) == "true":
		e.kind = GitLabCI
	}
	return e
}

// Kind is the CI system detected.
func (e Env) Kind() Kind {
	if e.kind == "" {
		return Local
	}
	return e.kind
}

// IsCI reports whether a CI system was detected.
func (e Env) IsCI() bool { return e.Kind() != Local }

// Trim returns the same environment, detected as it is, whose accessors
// read every value with its surrounding white space removed.
func (e Env) Trim() Env {
	if e.getenv == nil {
		return e
	}
	get := e.getenv
	e.getenv = func(k string) string { return strings.TrimSpace(get(k)) }
	return e
}

func (e Env) get(k string) string {
	if e.getenv == nil {
		return ""
	}
	return e.getenv(k)
}

// first returns the first non-empty value of keys.
func (e Env) first(keys ...string) string {
	for _, k := range keys {
		if v := e.get(k); v != "" {
			return v
		}
	}
	return ""
}

// Value is one fact read from the CI environment: the value, the variable
// it came from, and why it is unusable when the variable is set in a shape
// the fact cannot take.
type Value struct {
	// Value is the fact; empty when the CI does not offer it (or Err).
	Value string
	// From names the variable read, for logs and hints.
	From string
	// Err is set when the variable is set but unusable.
	Err error
}

// Found reports whether the CI offered the fact, usable or not.
func (v Value) Found() bool { return v.Value != "" || v.Err != nil }
