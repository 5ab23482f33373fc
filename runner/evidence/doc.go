// Package evidence is a run's evidence: OpenShell's own record of what the
// sandbox allowed and denied. It knows where OpenShell keeps its logs in a
// sandbox and the command that streams them (LogTarScript), reads that
// hostile tar stream within limits (ReadLogs), names the `openshell logs`
// fallback captures (CLILog), and writes the logs of a Record redacted and
// without following a symlink while counting their denials by package
// denial's kinds (Record.Keep). Package runner runs the sandbox commands
// and hands it the bytes and the run's secret masker.
package evidence
