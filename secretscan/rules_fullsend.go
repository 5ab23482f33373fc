package secretscan

// fullsendRules are fullsend's supplement to gitleaks' rules: loose,
// unanchored shapes of the credentials a sandbox is most likely to hold,
// so a token glued to other text, truncated, or in a newer format still
// counts, plus fullsend's own agent tokens. They have no entropy threshold
// and no allowlist: an outgoing comment is refused on the shape alone.
// gitleaks has no rule for Google OAuth access tokens (ya29.) or Docker
// personal access tokens (dckr_pat_).
var fullsendRules = []Rule{
	{ID: "github-token", Regex: `gh[pousr]_[A-Za-z0-9]{30,}`, Keywords: []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_"}, Joinable: true},
	{ID: "github-fine-grained-pat", Regex: `github_pat_[A-Za-z0-9_]{22,}`, Keywords: []string{"github_pat_"}, Joinable: true},
	{ID: "gitlab-token", Regex: `gl(?:pat|dt|rt|cbt|ptt|ft|imt|agent|oas|soat|ffct)-[A-Za-z0-9_\-]{20,}`,
		Keywords: []string{"glpat-", "gldt-", "glrt-", "glcbt-", "glptt-", "glft-", "glimt-", "glagent-", "gloas-", "glsoat-", "glffct-"}, Joinable: true},
	{ID: "anthropic-api-key", Regex: `sk-ant-[A-Za-z0-9_\-]{20,}`, Keywords: []string{"sk-ant-"}, Joinable: true},
	{ID: "openai-api-key", Regex: `sk-(?:proj|svcacct|admin)-[A-Za-z0-9_\-]{20,}`, Keywords: []string{"sk-proj-", "sk-svcacct-", "sk-admin-"}, Joinable: true},
	{ID: "openai-api-key", Regex: `\bsk-[A-Za-z0-9]{32,}`, Keywords: []string{"sk-"}, Joinable: true},
	{ID: "gcp-oauth-access-token", Regex: `ya29\.[A-Za-z0-9_\-]{20,}`, Keywords: []string{"ya29."}, Joinable: true},
	{ID: "huggingface-access-token", Regex: `hf_[A-Za-z0-9]{30,}`, Keywords: []string{"hf_"}, Joinable: true},
	{ID: "docker-personal-access-token", Regex: `dckr_(?:pat|oat)_[A-Za-z0-9_\-]{20,}`, Keywords: []string{"dckr_pat_", "dckr_oat_"}, Joinable: true},
	{ID: "aws-access-key-id", Regex: `(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}`, Keywords: []string{"akia", "asia", "abia", "acca"}, Joinable: true},
	{ID: "aws-secret-access-key", Regex: `(?i)aws.{0,20}?(?:secret|private).{0,20}?['"=:\s][A-Za-z0-9/+]{40}\b`, Keywords: []string{"aws"}},
	{ID: "private-key", Regex: `-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----`, Keywords: []string{"private key"}},
	{ID: "gcp-api-key", Regex: `AIza[0-9A-Za-z_\-]{35}`, Keywords: []string{"aiza"}, Joinable: true},
	{ID: "slack-token", Regex: `xox[abposr]-[A-Za-z0-9\-]{10,}`, Keywords: []string{"xox"}, Joinable: true},
	{ID: "npm-access-token", Regex: `npm_[A-Za-z0-9]{36}`, Keywords: []string{"npm_"}, Joinable: true},
	{ID: "jwt", Regex: `eyJ[A-Za-z0-9_\-]{10,}\.eyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}`, Keywords: []string{"eyj"}, Joinable: true},
	{ID: "fullsend-agent-token", Regex: `fsa_[A-Za-z0-9_\-]{40,}`, Keywords: []string{"fsa_"}, Joinable: true},
}
