package forge

import "regexp"

// secretPattern is one credential shape the secret scan refuses to post.
type secretPattern struct {
	name string
	re   *regexp.Regexp
}

// secretPatterns are credential shapes that must never leave through the
// proxy, whoever minted them. The scan runs on the decoded text an agent
// asked to post, so JSON escapes cannot hide a match.
var secretPatterns = []secretPattern{
	{"github-token", regexp.MustCompile(`\bgh[pousr]_[A-Za-z0-9]{30,}`)},
	{"github-fine-grained-pat", regexp.MustCompile(`\bgithub_pat_[A-Za-z0-9_]{22,}`)},
	{"gitlab-token", regexp.MustCompile(`\bgl(?:pat|dt|rt|cbt|ptt|ft|imt|agent|oas|soat|ffct)-[A-Za-z0-9_\-]{20,}`)},
	{"aws-access-key-id", regexp.MustCompile(`\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b`)},
	{"aws-secret-access-key", regexp.MustCompile(`(?i)aws.{0,20}?(?:secret|private).{0,20}?['"=:\s][A-Za-z0-9/+]{40}\b`)},
	{"private-key", regexp.MustCompile(`-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----`)},
	{"google-api-key", regexp.MustCompile(`\bAIza[0-9A-Za-z_\-]{35}`)},
	{"slack-token", regexp.MustCompile(`\bxox[abposr]-[A-Za-z0-9-]{10,}`)},
	{"npm-token", regexp.MustCompile(`\bnpm_[A-Za-z0-9]{36}\b`)},
	{"jwt", regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}`)},
	{"fullsend-agent-token", regexp.MustCompile(`\b` + AgentTokenPrefix + `[A-Za-z0-9_-]{40,}`)},
}

// ScanSecrets returns the name of the first credential pattern found in s,
// or "" when s looks clean. It never returns the match itself, so callers
// can log the result.
func ScanSecrets(s string) string {
	for _, p := range secretPatterns {
		if p.re.MatchString(s) {
			return p.name
		}
	}
	return ""
}
