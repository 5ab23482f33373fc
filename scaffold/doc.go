// Package scaffold writes a new agents repository for `fullsend init`: an
// example agent and skill with sandbox: blocks, the policy tests they meet,
// the GitHub Actions and GitLab CI templates (package templates), signing
// instructions and a .gitignore.
//
// The files come from an embedded tree (Files); Write puts them under a
// directory through an os.Root, each atomically, and never replaces an
// existing file unless asked to. Compiling the result is the CLI's job (only
// cmd/fullsend imports compile).
package scaffold
