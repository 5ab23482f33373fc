// Package ciout is what fullsend writes into a CI job's log, annotations
// and summary: the escapers that make untrusted text inert in a GitHub
// Actions or GitLab CI log (or a terminal), the Reporter that speaks each
// CI's log commands (GitHub workflow commands, GitLab collapsible
// sections, plain text), the job-summary writer and the Markdown escaper.
//
// Every path, name, error text or value that fullsend prints into a CI log
// and does not control goes through Escape (one line) or Lines (text whose
// line breaks stay): nothing in it can start a workflow command, a GitLab
// section or a terminal escape sequence.
//
// Role in the pipeline: runner (the run's log, the agent's fenced output,
// the job summary), verify (the job summary), report (`policy lint -o
// github`) and cmd/fullsend (every command's CI-safe output) write through
// it. It imports cienv (the CI kind) and the standard library only, and
// never reads the environment: callers pass the kind cienv detected.
//
// References:
//   - GitHub Actions workflow commands:
//     https://docs.github.com/en/actions/reference/workflows-and-actions/workflow-commands
//     and their parser, actions/runner src/Runner.Common/ActionCommand.cs
//     (TryParseV2, TryParse) and src/Runner.Worker/ActionCommandManager.cs;
//     the data encoding of actions/toolkit core/src/command.ts.
//   - GitLab CI collapsible sections:
//     https://docs.gitlab.com/ci/jobs/job_logs/#custom-collapsible-sections
package ciout
