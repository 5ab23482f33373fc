// Package cienv is the one adapter between fullsend and the CI system it
// runs in: GitHub Actions, GitLab CI, or neither (a terminal). It reads the
// CI's documented predefined variables through an injected getenv
// (os.Getenv in cmd/fullsend, a map in tests) and answers typed questions:
// which CI this is, the repository and forge of the job, the commit and ref
// being built, the run's web address, the builder id of provenance, where
// the issue number is, and the files a step reports to.
//
// Role in the pipeline: compile, image build and sign, verify, run and the
// CI templates all ask cienv instead of naming CI variables themselves.
// cienv is a leaf (standard library only) and never reads the process
// environment, the file system or the network: it says where a webhook
// payload is, its callers read it. Values that are secrets (the OIDC token
// request variables) are exported by name only, and nothing here logs.
//
// Variables by CI system:
//   - GitHub Actions, default environment variables:
//     https://docs.github.com/en/actions/reference/variables-reference
//   - GitLab CI, predefined CI/CD variables:
//     https://docs.gitlab.com/ci/variables/predefined_variables/
package cienv
