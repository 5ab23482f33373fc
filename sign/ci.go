package sign

import "github.com/fullsend-ai/agent-sandbox/cienv"

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

// DetectCI reads GitHub Actions or GitLab CI variables through getenv
// (see cienv for which).
func DetectCI(getenv func(string) string) CI {
	e := cienv.Detect(getenv)
	if !e.IsCI() {
		return CI{}
	}
	return CI{
		Name:       string(e.Kind()),
		RunURL:     e.RunURL(),
		Revision:   e.Revision(),
		Ref:        e.Ref(),
		SourceRepo: e.SourceRepo(),
		BuilderID:  e.BuilderID(),
	}
}
