// Package stage is the run's files at the sandbox boundary, on the
// runner's side: the staged copy of the job's workspace that is uploaded
// (Copy: project runtime configuration left out, git configuration
// rewritten from an allowlist, hooks and outside .git files dropped, every
// byte scanned for the job's credentials and token shapes by a Scanner,
// committed fixtures told from new files through the git index), the
// verified agent definition in the form its runtime takes
// (ClaudeAgentsJSON, OpenCodePermission), and the outputs that come back
// (ExtractOutput writes an output's tar stream through an os.Root;
// Sanitize makes a downloaded tree inert).
//
// It is pure filesystem work: its inputs are paths, bytes and streams and
// its outputs files and reports. It runs no command and no sandbox and
// decides no policy; package runner calls it around the openshell
// commands. Everything it reads from an output or a checkout is hostile:
// every parser of such input here has a fuzz target.
package stage
