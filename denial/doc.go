// Package denial is an OpenShell denial as OpenShell's logs report it: the
// parsers of the three forms of its OCSF network and HTTP events (the
// sandbox's shorthand log file, the OCSF JSONL file, `openshell logs`
// output), the normalized Event, and the denial-kind table (Kinds) with the
// classifier that puts every event in one row of it (Classify). The table
// cites the OpenShell source of every row.
//
// It is the one owner of the kind names: the runner counts a run's denials
// with it into result.json and the job summary, and `policy suggest` groups
// and plans with it, so both name a denial alike. What suggest does with a
// kind is suggest's, not this package's.
//
// Assess sets each event's Trust: the agent can write whole shorthand lines
// through a binary path with line breaks (inject.go), so a shorthand event
// is granted only when the OCSF JSONL record corroborates it or, with
// shorthand alone, when nothing around it looks injected
// (docs/threat-model.md).
//
// Log lines are the sandboxed agent's bytes: the parsers never panic, never
// read past a line, bound a line at 1 MiB and keep no query string. The
// package imports the standard library only (the runner links it inside the
// image).
package denial
