package profile

import (
	"cmp"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"
)

// checkCredentials checks the credential names, discovery.credentials,
// then each credential: its env vars (unique across the profile), auth
// style, refresh and token grant.
func (c *checker) checkCredentials() {
	names := c.checkCredentialNames()
	c.checkDiscovery(names)
	envs := map[string]bool{}
	for i, cr := range c.p.Credentials {
		base := fmt.Sprintf("credentials[%d]", i)
		c.checkEnvVars(base, cr.EnvVars, envs)
		c.checkAuthStyle(base, cr)
		if cr.Refresh != nil {
			c.checkRefresh(base, cr)
		}
		if cr.TokenGrant != nil {
			c.checkTokenGrant(base, cr)
		}
	}
}

// checkCredentialNames reports empty and duplicate credential names and
// returns the names.
func (c *checker) checkCredentialNames() map[string]bool {
	names := map[string]bool{}
	for i, cr := range c.p.Credentials {
		name := strings.TrimSpace(cr.Name)
		path := fmt.Sprintf("credentials[%d].name", i)
		if name == "" {
			c.errorf(path, CodeCredential, "name the credential", "credential name is required")
		} else if names[name] {
			c.errorf(path, CodeCredential, "give each credential its own name", "duplicate credential name: %s", name)
		}
		names[name] = true
	}
	return names
}

// checkDiscovery is discovery.credentials, profiles.rs:1547-1572 @ v0.0.111
// (v0.0.48 on): each a credential of the profile (names), once.
func (c *checker) checkDiscovery(names map[string]bool) {
	seen := map[string]bool{}
	for i, n := range c.p.Discovery {
		n = strings.TrimSpace(n)
		path := fmt.Sprintf("discovery.credentials[%d]", i)
		switch {
		case n == "":
			c.errorf(path, CodeDiscovery, "", "discovery credential name must not be empty")
		case seen[n]:
			c.errorf(path, CodeDiscovery, "", "duplicate discovery credential: %s", n)
		case !names[n]:
			c.errorf(path, CodeDiscovery, "name one of the profile's credentials", "unknown discovery credential: %s", n)
		}
		seen[n] = true
	}
}

// checkEnvVars checks the env vars of the credential at base: not empty,
// not in OpenShell's placeholder namespace, and not already one of envs
// (the profile's env vars so far, which it extends).
func (c *checker) checkEnvVars(base string, vars []string, envs map[string]bool) {
	for j, ev := range vars {
		path := fmt.Sprintf("%s.env_vars[%d]", base, j)
		t := strings.TrimSpace(ev)
		switch {
		case t == "":
			c.errorf(path, CodeCredential, "", "credential env var must not be empty")
		case c.reservedEnv(t):
			c.errorf(path, CodeCredential, "rename it: v<digits>_NAME and s<64 hex>_NAME are OpenShell's placeholder namespace",
				"credential env var '%s' uses reserved OpenShell placeholder revision namespace", ev)
		case envs[t]:
			c.errorf(path, CodeCredential, "each env var may feed one credential", "duplicate credential env var '%s'", ev)
		default:
			envs[t] = true
		}
	}
}

// reservedEnv is uses_reserved_revision_namespace (openshell-core
// secrets.rs:759-790 @ v0.0.111; v0.0.73 adds the check, v0.0.109 the
// s<64 hex>_ stable form).
func (c *checker) reservedEnv(key string) bool {
	return c.has("v0.0.73") && revisionEnv(key) || c.has("v0.0.109") && stableEnv(key)
}

// revisionEnv reports a v<digits>_NAME placeholder key.
func revisionEnv(key string) bool {
	rest, v := strings.CutPrefix(key, "v")
	rev, env, cut := strings.Cut(rest, "_")
	return v && cut && rev != "" && allDigits(rev) && isEnvName(env)
}

// stableEnv reports an s<64 lowercase hex>_NAME placeholder key.
func stableEnv(key string) bool {
	rest, s := strings.CutPrefix(key, "s")
	h, env, cut := strings.Cut(rest, "_")
	return s && cut && len(h) == 64 && onlyBytes(h, "0123456789abcdef") && isEnvName(env)
}

// isEnvName reports a non-empty name of ASCII letters, digits and '_'.
func isEnvName(s string) bool { return s != "" && onlyBytes(s, envBytes) }

// checkAuthStyle is profiles.rs:1600-1657 @ v0.0.111 (path auth from v0.0.58).
func (c *checker) checkAuthStyle(base string, cr Credential) {
	style := strings.ToLower(strings.TrimSpace(cr.AuthStyle))
	switch style {
	case "", "basic":
	case "bearer", "header":
		if strings.TrimSpace(cr.HeaderName) == "" {
			c.errorf(base+".header_name", CodeCredential, "e.g. header_name: authorization", "header_name is required for %s auth", style)
		}
	case "path":
		c.checkPathTemplate(base, cr)
	case "query":
		if strings.TrimSpace(cr.QueryParam) == "" {
			c.errorf(base+".query_param", CodeCredential, "", "query_param is required for query auth")
		}
	default:
		c.unsupportedAuthStyle(base, cr)
	}
}

// checkPathTemplate checks path auth: a path_template with {credential}
// exactly once. Before v0.0.58 path is an unsupported auth_style.
func (c *checker) checkPathTemplate(base string, cr Credential) {
	if !c.has("v0.0.58") {
		c.unsupportedAuthStyle(base, cr)
		return
	}
	t := strings.TrimSpace(cr.PathTemplate)
	if t == "" {
		c.errorf(base+".path_template", CodeCredential, "e.g. path_template: /bot{credential}", "path_template is required for path auth")
	} else if n := strings.Count(t, "{credential}"); n != 1 {
		c.errorf(base+".path_template", CodeCredential, "", "path_template should contain {credential} exactly once, %s contains {credential} %d times", t, n)
	}
}

func (c *checker) unsupportedAuthStyle(base string, cr Credential) {
	c.errorf(base+".auth_style", CodeCredential, "one of basic, bearer, header, path, query", "unsupported auth_style: %s", cr.AuthStyle)
}

// The refresh strategy output tables of profiles.rs:718-766 @ v0.0.111 (the
// gateway-mintable set of 697-716 decides whether a provider may be created
// without credentials, which profile validation does not ask).
var (
	requiredOutputs = map[string][]string{"aws_sts_assume_role": {"secret_access_key", "session_token"}}
	primaryEnvKey   = map[string]string{"aws_sts_assume_role": "AWS_ACCESS_KEY_ID"}
	outputEnvKey    = map[[2]string]string{{"aws_sts_assume_role", "secret_access_key"}: "AWS_SECRET_ACCESS_KEY",
		{"aws_sts_assume_role", "session_token"}: "AWS_SESSION_TOKEN"}
)

// checkRefresh is profiles.rs:1659-1831 @ v0.0.111 (additional_outputs and
// the strategy output tables from v0.0.86).
func (c *checker) checkRefresh(base string, cr Credential) {
	r := cr.Refresh
	path := base + ".refresh"
	c.checkRefreshFields(path, r)
	if !c.has("v0.0.86") {
		return
	}
	strategy := cmp.Or(r.Strategy, "unspecified")
	required := requiredOutputs[r.Strategy]
	if len(required) == 0 && len(r.AdditionalOutputs) > 0 {
		c.errorf(path+".additional_outputs", CodeRefresh, "", "strategy %s does not support additional_outputs", strategy)
	}
	mapped := c.checkAdditionalOutputs(path, r, strategy, required)
	for _, k := range required {
		if !mapped[k] {
			c.errorf(path+".additional_outputs", CodeRefresh, "", "strategy %s requires additional output '%s'", strategy, k)
		}
	}
	if want, ok := primaryEnvKey[r.Strategy]; ok && !slices.Equal(cr.EnvVars, []string{want}) {
		c.errorf(base+".env_vars", CodeRefresh, "", "strategy %s requires primary credential to map to env var %s", strategy, want)
	}
}

// checkAdditionalOutputs checks each additional output of the refresh at
// path: an id, once, that the strategy (named strategy in messages)
// produces when it has required outputs, and its credential. It returns
// the required outputs mapped.
func (c *checker) checkAdditionalOutputs(path string, r *Refresh, strategy string, required []string) map[string]bool {
	seen, mapped := map[string]bool{}, map[string]bool{}
	for i, o := range r.AdditionalOutputs {
		op := fmt.Sprintf("%s.additional_outputs[%d]", path, i)
		id, cred := strings.TrimSpace(o.Output), strings.TrimSpace(o.Credential)
		if id == "" {
			c.errorf(op+".output", CodeRefresh, "", "refresh additional output id is required")
			continue
		}
		if seen[id] {
			c.errorf(op+".output", CodeRefresh, "", "duplicate refresh additional output: %s", id)
		}
		seen[id] = true
		if slices.Contains(required, id) {
			mapped[id] = true
		} else if len(required) > 0 {
			c.errorf(op+".output", CodeRefresh, "", "strategy %s does not produce output '%s'", strategy, id)
		}
		c.checkOutputCredential(op+".credential", r.Strategy, id, cred)
	}
	return mapped
}

// checkRefreshFields checks the strategy, the two durations and the
// material names of a refresh block at path.
func (c *checker) checkRefreshFields(path string, r *Refresh) {
	if r.Strategy == "" {
		c.errorf(path+".strategy", CodeRefresh, "e.g. strategy: oauth2_refresh_token", "refresh strategy is required")
	}
	if r.RefreshBeforeSeconds < 0 {
		c.errorf(path+".refresh_before_seconds", CodeRefresh, "", "refresh_before_seconds must be greater than or equal to 0")
	}
	if r.MaxLifetimeSeconds < 0 {
		c.errorf(path+".max_lifetime_seconds", CodeRefresh, "", "max_lifetime_seconds must be greater than or equal to 0")
	}
	names := map[string]bool{}
	for i, m := range r.Material {
		n := strings.TrimSpace(m.Name)
		mp := fmt.Sprintf("%s.material[%d].name", path, i)
		if n == "" {
			c.errorf(mp, CodeRefresh, "", "refresh material name is required")
		} else if names[n] {
			c.errorf(mp, CodeRefresh, "", "duplicate refresh material name: %s", n)
		}
		names[n] = true
	}
}

// checkOutputCredential checks the credential (named cred) that receives a
// strategy's additional output id: it exists, has no refresh of its own and
// one env var, the one the strategy's table names.
func (c *checker) checkOutputCredential(loc, strategy, id, cred string) {
	k := slices.IndexFunc(c.p.Credentials, func(cr Credential) bool { return cr.Name == cred })
	if k < 0 {
		c.errorf(loc, CodeRefresh, "", "refresh additional output '%s' references unknown credential '%s'", id, cred)
		return
	}
	sib := &c.p.Credentials[k]
	if sib.Refresh != nil {
		c.errorf(loc, CodeRefresh, "", "credential '%s' is a refresh output and must not declare its own refresh", cred)
	}
	if len(sib.EnvVars) != 1 {
		c.errorf(loc, CodeRefresh, "", "refresh output credential '%s' must declare exactly one env var", cred)
		return
	}
	if want, ok := outputEnvKey[[2]string{strategy, id}]; ok && sib.EnvVars[0] != want {
		c.errorf(loc, CodeRefresh, "", "refresh output '%s' must map to env var %s, found %s", id, want, sib.EnvVars[0])
	}
}

// checkTokenGrant is profiles.rs:1835-1868 and 2283-2396 @ v0.0.111 (v0.0.61
// on), with the audience_overrides ambiguity check (audience.go).
func (c *checker) checkTokenGrant(base string, cr Credential) {
	path := base + ".token_grant"
	defer c.checkAudienceOverrides(base, cr)
	c.checkTokenEndpoint(path+".token_endpoint", cr.TokenGrant.TokenEndpoint)
	style := strings.ToLower(strings.TrimSpace(cr.AuthStyle))
	switch style {
	case "", "bearer":
		// The header defaults to Authorization.
		c.checkGrantHeader(base+".header_name", cmp.Or(strings.TrimSpace(cr.HeaderName), "Authorization"))
	case "header":
		c.checkGrantHeader(base+".header_name", strings.TrimSpace(cr.HeaderName))
	default:
		c.errorf(path, CodeTokenGrant, "", "token_grant credentials support auth_style bearer or header")
	}
}

// checkTokenEndpoint: an absolute URL, https, or http to a loopback or
// in-cluster service host.
func (c *checker) checkTokenEndpoint(loc, endpoint string) {
	u, err := url.Parse(endpoint)
	switch {
	case err != nil || !u.IsAbs() || u.Host == "" && u.Opaque != "":
		c.errorf(loc, CodeTokenGrant, "e.g. https://sts.example.com/token", "token_endpoint must be an absolute URL")
	case u.Scheme == "https":
	case u.Scheme == "http" && plaintextHost(u.Hostname()):
	default:
		c.errorf(loc, CodeTokenGrant, "use https", "token_endpoint must use https, except http for loopback or in-cluster service hosts")
	}
}

// framingHeaders are the headers a token grant may not set.
var framingHeaders = map[string]bool{"host": true, "content-length": true, "transfer-encoding": true, "connection": true}

// checkGrantHeader checks the header a token grant's token goes in (none
// when header is empty): a valid HTTP header name that is not a framing
// or connection header.
func (c *checker) checkGrantHeader(loc, header string) {
	switch {
	case header == "":
	case !onlyBytes(header, tokenBytes):
		c.errorf(loc, CodeTokenGrant, "", "token_grant header_name is not a valid HTTP header name")
	case framingHeaders[strings.ToLower(header)]:
		c.errorf(loc, CodeTokenGrant, "", "token_grant header_name may not override HTTP framing or connection headers")
	}
}

// plaintextHost reports the hosts a token endpoint may reach over http:
// loopback, or an in-cluster service.
func plaintextHost(h string) bool { return loopbackHost(h) || k8sServiceHost(h) }

func loopbackHost(h string) bool {
	h = strings.Trim(h, "[]")
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

func k8sServiceHost(h string) bool {
	labels := strings.Split(strings.ToLower(strings.TrimSuffix(h, ".")), ".")
	if slices.Contains(labels, "") {
		return false
	}
	return len(labels) == 3 && labels[2] == "svc" ||
		len(labels) == 5 && slices.Equal(labels[2:], []string{"svc", "cluster", "local"})
}
