// Package resolve is a job's runtime placeholder values: {{OWNER}},
// {{REPO_NAME}}, {{ISSUE_NUMBER}}, {{FORGE_HOST}}, {{HOST_IP}} and the
// cloud project and region, found from explicit values first, then from
// the CI environment through package cienv: the job's variables, the
// event or trigger payload the issue number comes from (GitHub's event
// JSON, GitLab's trigger payload; parsed with a size bound and fuzzed),
// host.docker.internal or the default route of /proc/net/route. Every
// value is validated by package placeholder; what cannot be resolved is
// one error listing every name with where its value was expected from.
//
// It reads through an injected Source (getenv, a filesystem rooted at /,
// a resolver) and never the process itself; package runner passes its
// Environment.
package resolve
