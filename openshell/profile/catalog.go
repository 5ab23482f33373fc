package profile

// The built-in catalog: the facts of each provider profile OpenShell ships
// compiled into its gateway (BUILT_IN_PROFILE_YAMLS, crates/openshell-
// providers/src/profiles.rs:27-41 @ v0.0.111), for the two embedded tags,
// in our own table. An entry states what composition, the credential checks
// and the runner need: the id, the display name and category, the
// credentials (names, variables, how they are sent and refreshed), the
// discovery list, the endpoints and the binaries. The upstream prose
// (descriptions) is not carried. Each builder cites the file and tags it
// was read from: upstream v0.0.83 is commit e3d26dd3, v0.0.111 is 20d2e867.
// catalog_test.go decodes the real files from ../shared/fixtures and
// checks every entry against them (docs/openshell-release.md says how an
// entry is added for a new release).

// catalogTags returns the OpenShell tags the catalog holds, oldest first.
func catalogTags() []string { return []string{"v0.0.83", "v0.0.111"} }

// catalogEntry is one built-in profile: its id and the builder of its
// facts at a catalog tag. Which ids exist at a tag is BuiltinIDs.
type catalogEntry struct {
	id    string
	facts func(tag string) Profile
}

// catalog returns the entries, freshly built, sorted by id.
func catalog() []catalogEntry {
	return []catalogEntry{
		{"aws", awsFacts},
		{"aws-bedrock", awsBedrockFacts},
		{"aws-s3", awsS3Facts},
		{"claude-code", claudeCodeFacts},
		{"codex", codexFacts},
		{"copilot", copilotFacts},
		{"cursor", cursorFacts},
		{"deepinfra", deepinfraFacts},
		{"github", githubFacts},
		{"google-cloud", googleCloudFacts},
		{"google-vertex-ai", googleVertexAIFacts},
		{"nvidia", nvidiaFacts},
		{"pypi", pypiFacts},
	}
}

// https443 is an endpoint on port 443 with no protocol (L4 only).
func https443(hosts ...string) []Endpoint {
	out := make([]Endpoint, 0, len(hosts))
	for _, h := range hosts {
		out = append(out, Endpoint{Host: h, Port: 443})
	}
	return out
}

// rest is an enforced REST endpoint on port 443 with an access preset for
// each host.
func rest(access string, hosts ...string) []Endpoint {
	out := https443(hosts...)
	for i := range out {
		out[i].Protocol, out[i].Access, out[i].Enforcement = "rest", access, "enforce"
	}
	return out
}

// bins is a list of binary paths.
func bins(paths ...string) []Binary {
	out := make([]Binary, 0, len(paths))
	for _, p := range paths {
		out = append(out, Binary{Path: p})
	}
	return out
}

// secretVar is an optional credential read from env.
func secretVar(name string, env ...string) Credential {
	return Credential{Name: name, EnvVars: env}
}

// must marks a credential required.
func must(c Credential) Credential { c.Required = true; return c }

// bearer sends a credential as "authorization: Bearer".
func bearer(c Credential) Credential {
	c.AuthStyle, c.HeaderName = "bearer", "authorization"
	return c
}

// mat is refresh material: a name, required, secret.
func mat(name string, required, secret bool) Material {
	return Material{Name: name, Required: required, Secret: secret}
}

// googleRefresh is a refresh for the cloud-platform scope at Google's
// token URL, 300 s before expiry, at most an hour, with strategy and
// material.
func googleRefresh(strategy string, material ...Material) *Refresh {
	return &Refresh{Strategy: strategy, TokenURL: "https://oauth2.googleapis.com/token",
		Scopes:               []string{"https://www.googleapis.com/auth/cloud-platform"},
		RefreshBeforeSeconds: 300, MaxLifetimeSeconds: 3600, Material: material}
}

// googleJWT and googleADC are the material of the two Google strategies:
// a service account's email, key and optional subject; gcloud ADC's client
// id, client secret and refresh token.
func googleJWT() *Refresh {
	return googleRefresh("google_service_account_jwt", mat("client_email", true, false), mat("private_key", true, true), mat("subject", false, false))
}

func googleADC() *Refresh {
	return googleRefresh("oauth2_refresh_token", mat("client_id", true, false), mat("client_secret", true, true), mat("refresh_token", true, true))
}

// stsCredentials are the three AWS credentials one STS AssumeRole mints:
// the access key id carries the refresh and co-manages the other two.
func stsCredentials() []Credential {
	refresh := &Refresh{Strategy: "aws_sts_assume_role", RefreshBeforeSeconds: 300, MaxLifetimeSeconds: 3600,
		AdditionalOutputs: []Output{{"secret_access_key", "secret_access_key"}, {"session_token", "session_token"}},
		Material: []Material{mat("role_arn", true, false), mat("session_name", false, false), mat("external_id", false, false),
			mat("aws_region", false, false), mat("aws_access_key_id", false, false), mat("aws_secret_access_key", false, true),
			mat("aws_session_token", false, true)}}
	key := must(secretVar("access_key_id", "AWS_ACCESS_KEY_ID"))
	key.Refresh = refresh
	return []Credential{key, must(secretVar("secret_access_key", "AWS_SECRET_ACCESS_KEY")), must(secretVar("session_token", "AWS_SESSION_TOKEN"))}
}

// awsFacts: providers/aws.yaml @ v0.0.111 (from v0.0.86): STS credentials,
// no endpoint, no binary.
func awsFacts(string) Profile {
	return Profile{ID: "aws", DisplayName: "AWS", Category: "other", Credentials: stsCredentials()}
}

// awsBedrockFacts: providers/aws-bedrock.yaml @ v0.0.83 and v0.0.111: four
// optional AWS credentials, nothing discovered, no endpoint, no binary.
func awsBedrockFacts(string) Profile {
	return Profile{ID: "aws-bedrock", DisplayName: "AWS Bedrock", Category: "inference", InferenceCapable: true,
		Credentials: []Credential{secretVar("aws_access_key_id", "AWS_ACCESS_KEY_ID"), secretVar("aws_secret_access_key", "AWS_SECRET_ACCESS_KEY"),
			secretVar("aws_session_token", "AWS_SESSION_TOKEN"), secretVar("aws_region", "AWS_REGION", "AWS_DEFAULT_REGION")},
		Discovery: []string{}}
}

// awsS3Facts: providers/aws-s3.yaml @ v0.0.111 (from v0.0.86): STS
// credentials; six S3 host shapes, TLS terminated, read-write, SigV4 signed
// for service s3 (the two global shapes in us-east-1).
func awsS3Facts(string) Profile {
	eps := rest("read-write", "*.s3.amazonaws.com", "s3.amazonaws.com", "*.s3.*.amazonaws.com", "s3.*.amazonaws.com",
		"*.s3.dualstack.*.amazonaws.com", "s3.dualstack.*.amazonaws.com")
	for i := range eps {
		eps[i].TLS, eps[i].CredentialSigning, eps[i].SigningService = "terminate", "sigv4", "s3"
		if i < 2 {
			eps[i].SigningRegion = "us-east-1"
		}
	}
	return Profile{ID: "aws-s3", DisplayName: "AWS S3", Category: "other", Credentials: stsCredentials(), Endpoints: eps,
		Binaries: bins("/sandbox/.venv/bin/python", "/sandbox/.venv/bin/python3", "/sandbox/.uv/python/**", "/usr/bin/python3",
			"/usr/bin/python3.*", "/usr/bin/curl", "/usr/local/bin/aws", "/bin/bash")}
}

// claudeCodeFacts: providers/claude-code.yaml @ v0.0.83 and v0.0.111.
func claudeCodeFacts(string) Profile {
	key := must(secretVar("api_key", "ANTHROPIC_API_KEY", "CLAUDE_API_KEY"))
	key.AuthStyle, key.HeaderName = "header", "x-api-key"
	return Profile{ID: "claude-code", DisplayName: "Claude Code", Category: "agent", InferenceCapable: true,
		Credentials: []Credential{key}, Discovery: []string{"api_key"},
		Endpoints: rest("read-write", "api.anthropic.com", "statsig.anthropic.com", "sentry.io"),
		Binaries:  bins("/usr/bin/claude", "/usr/local/bin/claude")}
}

// codexFacts: providers/codex.yaml @ v0.0.83 and v0.0.111.
func codexFacts(string) Profile {
	return Profile{ID: "codex", DisplayName: "Codex", Category: "agent", InferenceCapable: true,
		Credentials: []Credential{must(secretVar("access_token", "CODEX_AUTH_ACCESS_TOKEN")), must(secretVar("refresh_token", "CODEX_AUTH_REFRESH_TOKEN")),
			must(secretVar("account_id", "CODEX_AUTH_ACCOUNT_ID")), secretVar("id_token", "CODEX_AUTH_ID_TOKEN")},
		Discovery: []string{"access_token", "refresh_token", "account_id", "id_token"},
		Endpoints: rest("read-write", "api.openai.com", "auth.openai.com", "chatgpt.com", "ab.chatgpt.com"),
		Binaries:  bins("/usr/bin/codex", "/usr/local/bin/codex", "/usr/lib/node_modules/@openai/**")}
}

// copilotFacts: providers/copilot.yaml @ v0.0.83 and v0.0.111; the two
// L4 telemetry endpoints allow uninspected credentials from v0.0.110.
func copilotFacts(tag string) Profile {
	eps := append(rest("read-write", "api.githubcopilot.com", "api.individual.githubcopilot.com", "api.business.githubcopilot.com",
		"api.enterprise.githubcopilot.com", "copilot-proxy.githubusercontent.com"),
		https443("telemetry.enterprise.githubcopilot.com", "default.exp-tas.com")...)
	if tag != "v0.0.83" {
		eps[5].AllowUninspectedCredentials, eps[6].AllowUninspectedCredentials = true, true
	}
	return Profile{ID: "copilot", DisplayName: "GitHub Copilot", Category: "agent",
		Credentials: []Credential{bearer(must(secretVar("api_token", "COPILOT_GITHUB_TOKEN", "GH_TOKEN", "GITHUB_TOKEN")))},
		Discovery:   []string{"api_token"}, Endpoints: eps,
		Binaries: bins("/usr/bin/copilot", "/usr/lib/node_modules/@github/copilot/node_modules/@github/**/copilot")}
}

// cursorFacts: providers/cursor.yaml @ v0.0.83 and v0.0.111: L4 only.
func cursorFacts(string) Profile {
	return Profile{ID: "cursor", DisplayName: "Cursor", Category: "agent",
		Endpoints: https443("cursor.blob.core.windows.net", "api2.cursor.sh", "repo.cursor.sh", "download.cursor.sh", "cursor.download.prss.microsoft.com"),
		Binaries:  bins("/usr/bin/curl", "/usr/bin/wget", "/sandbox/.cursor-server/**")}
}

// deepinfraFacts: providers/deepinfra.yaml @ v0.0.83 and v0.0.111.
func deepinfraFacts(string) Profile {
	return Profile{ID: "deepinfra", DisplayName: "DeepInfra", Category: "inference", InferenceCapable: true,
		Credentials: []Credential{bearer(must(secretVar("api_key", "DEEPINFRA_API_KEY")))}, Discovery: []string{"api_key"},
		Endpoints: rest("read-write", "api.deepinfra.com"), Binaries: bins("/usr/bin/curl", "/usr/local/bin/curl")}
}

// githubFacts: providers/github.yaml @ v0.0.83 and v0.0.111. The REST and
// GraphQL API are read-only; github.com (git over HTTPS) is read-only at
// v0.0.83 and, at v0.0.111, GET, HEAD and OPTIONS anywhere plus POST to
// git-upload-pack (fetch without push).
func githubFacts(tag string) Profile {
	api := rest("read-only", "api.github.com", "api.github.com")
	api[1].Path, api[1].Protocol = "/graphql", "graphql"
	git := rest("read-only", "github.com")[0]
	if tag != "v0.0.83" {
		git.Access, git.RulesSet = "", true
		for _, m := range []string{"GET", "HEAD", "OPTIONS"} {
			git.Rules = append(git.Rules, Rule{Allow: &Match{Method: m, Path: "**"}})
		}
		git.Rules = append(git.Rules, Rule{Allow: &Match{Method: "POST", Path: "/**/git-upload-pack"}})
	}
	return Profile{ID: "github", DisplayName: "GitHub", Category: "source_control",
		Credentials: []Credential{bearer(must(secretVar("api_token", "GITHUB_TOKEN", "GH_TOKEN")))}, Discovery: []string{"api_token"},
		Endpoints: append(api, git), Binaries: bins("/usr/bin/gh", "/usr/local/bin/gh", "/usr/bin/git", "/usr/local/bin/git")}
}

// googleCloudFacts: providers/google-cloud.yaml @ v0.0.83 and v0.0.111:
// two refreshed bearer tokens, no endpoint, no binary.
func googleCloudFacts(string) Profile {
	sa := bearer(secretVar("service_account_token", "GCP_SA_ACCESS_TOKEN"))
	sa.Refresh = googleJWT()
	adc := bearer(secretVar("adc_token", "GCP_ADC_ACCESS_TOKEN"))
	adc.Refresh = googleADC()
	return Profile{ID: "google-cloud", DisplayName: "Google Cloud (GCP APIs)", Category: "other",
		Credentials: []Credential{sa, adc}, Discovery: []string{"service_account_token", "adc_token"}}
}

// googleVertexAIFacts: providers/google-vertex-ai.yaml @ v0.0.83 and
// v0.0.111: a bootstrap key (never injected) and two refreshed tokens.
func googleVertexAIFacts(string) Profile {
	sa := bearer(secretVar("service_account_token", "GOOGLE_VERTEX_AI_SERVICE_ACCOUNT_TOKEN", "VERTEX_AI_SERVICE_ACCOUNT_TOKEN"))
	sa.Refresh = googleJWT()
	adc := bearer(secretVar("gcloud_adc_token", "GOOGLE_VERTEX_AI_TOKEN", "VERTEX_AI_TOKEN"))
	adc.Refresh = googleADC()
	return Profile{ID: "google-vertex-ai", DisplayName: "Google Vertex AI", Category: "inference", InferenceCapable: true,
		Credentials: []Credential{secretVar("service_account_key", "GOOGLE_SERVICE_ACCOUNT_KEY"), sa, adc},
		Discovery:   []string{"service_account_token", "gcloud_adc_token"},
		Endpoints: rest("read-write", "*-aiplatform.googleapis.com", "aiplatform.googleapis.com",
			"aiplatform.us.rep.googleapis.com", "aiplatform.eu.rep.googleapis.com")}
}

// nvidiaFacts: providers/nvidia.yaml @ v0.0.83 and v0.0.111.
func nvidiaFacts(string) Profile {
	return Profile{ID: "nvidia", DisplayName: "NVIDIA", Category: "inference", InferenceCapable: true,
		Credentials: []Credential{bearer(must(secretVar("api_key", "NVIDIA_API_KEY")))}, Discovery: []string{"api_key"},
		Endpoints: rest("read-write", "integrate.api.nvidia.com"), Binaries: bins("/usr/bin/curl", "/usr/local/bin/curl")}
}

// pypiFacts: providers/pypi.yaml @ v0.0.83 and v0.0.111: L4 only.
func pypiFacts(string) Profile {
	return Profile{ID: "pypi", DisplayName: "PyPI", Category: "data",
		Endpoints: https443("pypi.org", "files.pythonhosted.org", "github.com", "objects.githubusercontent.com", "api.github.com", "downloads.python.org"),
		Binaries: bins("/sandbox/.venv/bin/python", "/sandbox/.venv/bin/python3", "/sandbox/.venv/bin/pip", "/app/.venv/bin/python",
			"/app/.venv/bin/python3", "/app/.venv/bin/pip", "/usr/local/bin/uv", "/sandbox/.uv/python/**")}
}
