package cienv

// The accessors below read their variable whatever the Kind: a step may be
// given them outside the CI that defines them (a local rehearsal, act), and
// a file the user points at is used.

// OutputFile is $GITHUB_OUTPUT, the file a step appends NAME=VALUE outputs
// to; empty when unset.
func (e Env) OutputFile() string { return e.get(GitHubOutput) }

// StepSummary is $GITHUB_STEP_SUMMARY, the file a step appends its Markdown
// job summary to; empty when unset.
func (e Env) StepSummary() string { return e.get(GitHubStepSummary) }

// Workspace is the checked-out repository of the job: $GITHUB_WORKSPACE,
// else $CI_PROJECT_DIR; empty when neither is set.
func (e Env) Workspace() string { return e.first(GitHubWorkspace, GitLabProjectDir) }

// TempDir is the runner's per-job temporary directory, $RUNNER_TEMP
// (GitHub Actions); empty when unset.
func (e Env) TempDir() string { return e.get(RunnerTemp) }
