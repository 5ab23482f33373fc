// Package secretscan finds credentials in text. It is the one rule set
// fullsend applies wherever a secret must not pass: the forge proxy's scan
// of what an agent posts, the proxy's audit-log redaction, and (exported as
// a Rego module, RegoModule) policy lint rule FS018.
//
// The rules are the default configuration of gitleaks
// (github.com/zricethezav/gitleaks/v8, version GitleaksVersion), generated
// into rules_gitleaks.go by `go generate ./secretscan` with gitleaks' own
// config loader, followed by a short fullsend supplement
// (rules_fullsend.go): unanchored shapes of the credentials a sandbox is
// most likely to hold (forge, model and registry tokens, fullsend agent
// tokens, PEM headers), so that a token glued to other text, truncated, or
// in a format gitleaks pins to an exact length still counts. gitleaks
// itself is not a dependency: its detector brings a CLI's worth of modules
// (viper, archive formats, a terminal UI toolkit) and global logging state.
//
// A rule fires the way it does in gitleaks: one of its keywords occurs in
// the lowercased text, its regex matches, the secret (its capture group) is
// above its entropy threshold, and no allowlist accepts it.
//
// Before matching, text is normalised (Normalize: invisible format
// characters such as zero-width spaces and soft hyphens are removed), and
// then scanned a second time with white space removed (Join), by the rules
// whose regex starts with a literal prefix (Rule.Joinable), so a secret
// split across lines or spaces is still found. FindRendered also scans
// the text as a forge's Markdown renderer could show it (Rendered: HTML
// comments and tags removed, character references decoded, Markdown
// delimiters dropped), so markup the reader never sees does not hide a
// secret; the forge proxy uses it for what agents post.
//
// Limits: a determined sender can still encode a secret (base64, reversed,
// split over several requests); the scan catches the secrets an agent
// posts by accident or by naive instruction, not a cipher.
//
// It is a leaf package: the standard library only.
package secretscan
