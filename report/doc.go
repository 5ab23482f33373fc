// Package report is the findings model and its output formats: Finding
// (rule id, severity, message, policy file and path, the agent or skill
// line behind it), Report, Rule, the deny and warn severities, and the
// formats text, json, sarif (SARIF 2.1.0), github (workflow commands) and
// gitlab (Code Quality) as a table of formatters (Formats, Report.Write); a
// new format is one more entry.
//
// lint produces a Report; the CLI renders it. report imports only bundle
// (the source of a finding) and the standard library. It must never import
// OPA or lint, so that findings are rendered without linking a rule engine.
package report
