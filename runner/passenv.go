package runner

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/fullsend-ai/agent-sandbox/cienv"
)

// credentialNames are the forge and CI credentials of the job that a
// sandbox must not get by accident: the job's GitHub and GitLab tokens
// (https://docs.github.com/en/actions/security-for-github-actions/security-guides/automatic-token-authentication,
// https://docs.gitlab.com/ci/jobs/ci_job_token/), the tokens of the Actions
// runtime and OIDC services, and GitLab's predefined variables that hold a
// password or the job token.
var credentialNames = map[string]bool{
	"GITHUB_TOKEN": true, "GH_TOKEN": true, "GH_ENTERPRISE_TOKEN": true, "GITHUB_ENTERPRISE_TOKEN": true,
	"ACTIONS_RUNTIME_TOKEN": true, cienv.ActionsIDTokenRequestToken: true, cienv.SigstoreIDToken: true,
	"GITLAB_TOKEN": true, "GL_TOKEN": true, "CI_JOB_TOKEN": true, "CI_JOB_JWT": true,
	"CI_REGISTRY_PASSWORD": true, "CI_DEPLOY_PASSWORD": true, "CI_DEPENDENCY_PROXY_PASSWORD": true,
	// The clone URL embeds the job token (gitlab-ci-token:TOKEN@).
	"CI_REPOSITORY_URL": true,
}

// forgePrefix names the variables of forges and CI systems; with a
// credential-looking rest (secretEnvName, or a PAT or JWT part) they are
// treated as credentials too: GH_PAT, GITLAB_PRIVATE_TOKEN, CI_JOB_JWT_V2.
var (
	forgePrefix = regexp.MustCompile(`^(GITHUB|GH|GITLAB|GL|CI|ACTIONS|RUNNER|GITEA|FORGEJO|BITBUCKET)_`)
	patOrJWT    = regexp.MustCompile(`(^|_)(PAT|JWT)($|_)`)
)

// secretEnvName matches variable names whose values are credentials.
var secretEnvName = regexp.MustCompile(`(?i)(TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|CREDENTIAL|AUTH|COOKIE|(^|_)KEY($|_)|PRIVATE)`)

// IsCredentialEnv reports whether the variable name is a forge or CI
// credential: one of the job's known token variables, or a forge- or
// CI-prefixed name that looks like a secret.
func IsCredentialEnv(name string) bool {
	u := strings.ToUpper(name)
	return credentialNames[u] || forgePrefix.MatchString(u) && (secretEnvName.MatchString(u) || patOrJWT.MatchString(u))
}

// SelectEnv picks the variables of environ (KEY=VALUE entries, as
// os.Environ returns them) that patterns name, for Request.Env. A pattern
// is a NAME or a PREFIX* ("*" alone is every variable). A PREFIX* pattern
// never selects a forge or CI credential (IsCredentialEnv): a credential
// passes only when a pattern names it exactly; skipped lists, sorted, the
// credentials that PREFIX* patterns left out.
func SelectEnv(environ, patterns []string) (env map[string]string, skipped []string, err error) {
	for _, p := range patterns {
		if name := strings.TrimSuffix(p, "*"); p != "*" && !envName.MatchString(name) {
			return nil, nil, fmt.Errorf("%q is neither a variable name nor a PREFIX*", p)
		}
	}
	if len(patterns) == 0 {
		return nil, nil, nil
	}
	sel := envSelection{env: map[string]string{}, left: map[string]bool{}}
	for _, kv := range environ {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			continue
		}
		for _, p := range patterns {
			sel.apply(p, k, v)
		}
	}
	return sel.env, slices.Sorted(maps.Keys(sel.left)), nil
}

// envSelection is what SelectEnv picked, and the credentials PREFIX*
// patterns left out (unless a pattern named them).
type envSelection struct {
	env  map[string]string
	left map[string]bool
}

// apply selects the variable k (value v) when pattern p names it, or
// matches it as a PREFIX* and k is not a credential.
func (s *envSelection) apply(p, k, v string) {
	switch {
	case k == p:
		s.env[k] = v
		delete(s.left, k)
	case strings.HasSuffix(p, "*") && strings.HasPrefix(k, strings.TrimSuffix(p, "*")):
		if !IsCredentialEnv(k) {
			s.env[k] = v
		} else if _, named := s.env[k]; !named {
			s.left[k] = true
		}
	}
}

// collectEnv validates Request.Env and Request.PublicEnv into the pairs the
// runtime gets, sorted by name. Every value of Env is masked in all the run
// prints and announced to the CI as a secret; PublicEnv values are shown.
// A name in both, or a credential (IsCredentialEnv) made public, is refused.
func (x *run) collectEnv() error {
	keys, err := x.envNames()
	if err != nil {
		return err
	}
	for _, k := range keys {
		v, secret := x.req.Env[k]
		if !secret {
			v = x.req.PublicEnv[k]
		}
		if !envName.MatchString(k) || strings.ContainsAny(v, "\n\r") {
			return fmt.Errorf("%w: environment variable %q: want a variable name and a one-line value", ErrPolicy, k)
		}
		if secret {
			x.mask.Add(v)
			x.rep.Mask(v)
		}
		x.envVars = append(x.envVars, [2]string{k, v})
	}
	return nil
}

// envNames are the names of Request.Env and Request.PublicEnv, sorted. A
// name in both, or a public credential, is refused.
func (x *run) envNames() ([]string, error) {
	keys := make([]string, 0, len(x.req.Env)+len(x.req.PublicEnv))
	for k := range x.req.Env {
		keys = append(keys, k)
	}
	for k := range x.req.PublicEnv {
		if _, dup := x.req.Env[k]; dup {
			return nil, fmt.Errorf("%w: environment variable %s is given both as a secret and as public", ErrPolicy, k)
		}
		if IsCredentialEnv(k) {
			return nil, fmt.Errorf("%w: environment variable %s is a credential; it cannot be public", ErrPolicy, k)
		}
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys, nil
}
