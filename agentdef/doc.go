// Package agentdef loads and parses agent definitions: it turns a project
// (an fs.FS) into the typed *Project the compiler works from, with the
// position of every value and the sha256 of every file read.
//
// It owns discovery (agents/*.md, skills/*/SKILL.md, the .claude/ and
// .opencode/ layouts), the frontmatter dialects (Claude Code, OpenCode,
// Agent Skills) parsed strictly, the tool-rule grammar (ParseToolRule),
// fullsend's `sandbox:` blocks, MCP server declarations, and the reference
// and spawn-cycle checks. Every problem is
// a Diagnostic at a file, line and column with a hint; Load fails on
// errors, LoadPartial keeps going so that one run reports every file's
// problems. The key lists and enums it checks are generated from the CUE
// input schemas (zz_generated_input.go, internal/schemagen), so it links
// neither CUE nor OPA: it is input parsing only, and compile, which derives
// policies from a Project, imports it, never the other way round.
package agentdef
