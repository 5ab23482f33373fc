package sign

import "strings"

// CI is what the CI environment says about the current build, for
// signature claims and provenance.
type CI struct {
	// Name is "github", "gitlab" or "".
	Name string
	// RunURL is the web address of the pipeline/workflow run.
	RunURL string
	// Revision is the git commit being built.
	Revision string
	// Ref is the git ref being built (refs/heads/main).
	Ref string
	// SourceRepo is the repository URI in SLSA form (git+https://...).
	SourceRepo string
	// BuilderID identifies the workflow or runner that builds.
	BuilderID string
}

// DetectCI reads GitHub Actions or GitLab CI variables through getenv.
func DetectCI(getenv func(string) string) CI {
	switch {
	case getenv("GITHUB_ACTIONS") == "true":
		server := strings.TrimSuffix(getenv("GITHUB_SERVER_URL"), "/")
		if server == "" {
			server = "https://github.com"
		}
		repo := getenv("GITHUB_REPOSITORY")
		ci := CI{Name: "github", Revision: getenv("GITHUB_SHA"), Ref: getenv("GITHUB_REF")}
		if repo != "" {
			ci.SourceRepo = "git+" + server + "/" + repo
			if id := getenv("GITHUB_RUN_ID"); id != "" {
				ci.RunURL = server + "/" + repo + "/actions/runs/" + id
				if a := getenv("GITHUB_RUN_ATTEMPT"); a != "" {
					ci.RunURL += "/attempts/" + a
				}
			}
		}
		if wf := getenv("GITHUB_WORKFLOW_REF"); wf != "" {
			ci.BuilderID = server + "/" + wf
		}
		return ci
	case getenv("GITLAB_CI") == "true":
		ci := CI{Name: "gitlab", Revision: getenv("CI_COMMIT_SHA"), RunURL: getenv("CI_JOB_URL")}
		if r := getenv("CI_COMMIT_REF_NAME"); r != "" {
			if getenv("CI_COMMIT_TAG") != "" {
				ci.Ref = "refs/tags/" + r
			} else {
				ci.Ref = "refs/heads/" + r
			}
		}
		if u := getenv("CI_PROJECT_URL"); u != "" {
			ci.SourceRepo = "git+" + u
		}
		if s, p, id := getenv("CI_SERVER_URL"), getenv("CI_PROJECT_PATH"), getenv("CI_RUNNER_ID"); s != "" && p != "" && id != "" {
			ci.BuilderID = strings.TrimSuffix(s, "/") + "/" + p + "/-/runners/" + id
		}
		return ci
	}
	return CI{}
}
