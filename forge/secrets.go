package forge

import (
	"regexp"
	"strings"
)

// secretPattern is one credential shape the secret scan refuses to post.
// hints are literal substrings every match contains (lowercase when fold is
// set); the regexp only runs when one is present, which keeps the scan
// linear and cheap on ordinary text.
type secretPattern struct {
	name  string
	hints []string
	fold  bool
	re    *regexp.Regexp
}

// secretPatterns are credential shapes that must never leave through the
// proxy, whoever minted them. The scan runs on the decoded text an agent
// asked to post, so JSON escapes cannot hide a match. Patterns are not
// anchored at word boundaries: a token glued to other text still leaks.
var secretPatterns = []secretPattern{
	{"github-token", []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_"}, false, regexp.MustCompile(`gh[pousr]_[A-Za-z0-9]{30,}`)},
	{"github-fine-grained-pat", []string{"github_pat_"}, false, regexp.MustCompile(`github_pat_[A-Za-z0-9_]{22,}`)},
	{"gitlab-token", []string{"gl"}, false, regexp.MustCompile(`gl(?:pat|dt|rt|cbt|ptt|ft|imt|agent|oas|soat|ffct)-[A-Za-z0-9_\-]{20,}`)},
	{"aws-access-key-id", []string{"AKIA", "ASIA", "ABIA", "ACCA"}, false, regexp.MustCompile(`(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b`)},
	{"aws-secret-access-key", []string{"aws"}, true, regexp.MustCompile(`(?i)aws.{0,20}?(?:secret|private).{0,20}?['"=:\s][A-Za-z0-9/+]{40}\b`)},
	{"private-key", []string{"PRIVATE KEY"}, false, regexp.MustCompile(`-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----`)},
	{"google-api-key", []string{"AIza"}, false, regexp.MustCompile(`AIza[0-9A-Za-z_\-]{35}`)},
	{"slack-token", []string{"xox"}, false, regexp.MustCompile(`xox[abposr]-[A-Za-z0-9-]{10,}`)},
	{"npm-token", []string{"npm_"}, false, regexp.MustCompile(`npm_[A-Za-z0-9]{36}\b`)},
	{"jwt", []string{"eyJ"}, false, regexp.MustCompile(`eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}`)},
	{"fullsend-agent-token", []string{AgentTokenPrefix}, false, regexp.MustCompile(AgentTokenPrefix + `[A-Za-z0-9_-]{40,}`)},
}

// ScanSecrets returns the name of the first credential pattern found in s,
// or "" when s looks clean. It never returns the match itself, so callers
// can log the result.
func ScanSecrets(s string) string {
	lower := ""
	for _, p := range secretPatterns {
		text := s
		if p.fold {
			if lower == "" {
				lower = strings.ToLower(s)
			}
			text = lower
		}
		hit := false
		for _, h := range p.hints {
			if strings.Contains(text, h) {
				hit = true
				break
			}
		}
		if hit && p.re.MatchString(s) {
			return p.name
		}
	}
	return ""
}
