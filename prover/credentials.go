package prover

import (
	"bytes"
	_ "embed"
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/fullsend-ai/agent-sandbox/openshell"
)

// Credential is one credential in scope of the sandbox, in the shape of
// OpenShell's prover input (Credential, crates/openshell-prover/src/
// credentials.rs:66-74 @ v0.0.111). Only TargetHosts matter to the queries:
// the gateway's credential set is "presence only (host-coarse)"
// (crates/openshell-prover/README.md:96-100, policy.rs:524-590 @ v0.0.111).
type Credential struct {
	Name        string   `yaml:"name" json:"name"`
	Type        string   `yaml:"type" json:"type,omitempty"`
	Scopes      []string `yaml:"scopes" json:"scopes,omitempty"`
	InjectedVia string   `yaml:"injected_via" json:"injected_via,omitempty"`
	TargetHosts []string `yaml:"target_hosts" json:"target_hosts"`
}

// Credentials is a credential set.
type Credentials []Credential

//go:embed credentials.yaml
var defaultCredentials []byte

// DefaultCredentials is the credential set of a fullsend run: the hosts
// where the runner injects or relays a credential (the forge token, the
// forge proxy and the spawner that act with it, the model APIs). It is the
// same list as lint's data.fullsend.credentialed_hosts default
// (lint/rules/network.rego), kept in credentials.yaml in OpenShell's format.
func DefaultCredentials() Credentials {
	c, err := ParseCredentials(defaultCredentials)
	if err != nil {
		panic(fmt.Sprintf("prover: embedded credentials.yaml: %v", err))
	}
	return c
}

// ParseCredentials decodes a credentials file in OpenShell's prover format
// (`credentials: [{name, type, scopes, injected_via, target_hosts}]`,
// CredentialsFile, credentials.rs:16-34 @ v0.0.111). Unlike OpenShell's
// serde, unknown keys are refused: a misspelt target_hosts would silently
// drop a credential and hide every finding it causes.
func ParseCredentials(data []byte) (Credentials, error) {
	var f struct {
		Credentials Credentials `yaml:"credentials"`
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("parsing credentials YAML: %w", err)
	}
	for i, c := range f.Credentials {
		if len(c.TargetHosts) == 0 {
			return nil, fmt.Errorf("credentials[%d] (%s): target_hosts is empty: the credential would be in scope nowhere", i, c.Name)
		}
	}
	return f.Credentials, nil
}

// ForPolicy returns the set plus one credential per endpoint bound to a
// provider with credential_binding: the gateway stamps those endpoints
// credentialed (stamp_provider_credentialed_endpoints,
// crates/openshell-server/src/grpc/policy.rs:2381 @ v0.0.111).
func (cs Credentials) ForPolicy(p *openshell.Policy) Credentials {
	out := append(Credentials(nil), cs...)
	for _, key := range p.PolicyKeys() {
		for _, ep := range p.NetworkPolicies[key].Endpoints {
			if ep.CredentialBinding != nil && ep.Host != "" {
				out = append(out, Credential{Name: ep.CredentialBinding.Provider, Type: "credential_binding", TargetHosts: []string{ep.Host}})
			}
		}
	}
	return out
}

// ForHost returns the credentials whose target hosts overlap host, by
// OpenShell's host-pattern overlap (credentials_for_host,
// credentials.rs:138-151 @ v0.0.111).
func (cs Credentials) ForHost(host string) []Credential {
	var out []Credential
	for _, c := range cs {
		for _, t := range c.TargetHosts {
			if HostsOverlap(host, t) {
				out = append(out, c)
				break
			}
		}
	}
	return out
}

// Credentialed reports whether any credential is in scope for host.
func (cs Credentials) Credentialed(host string) bool { return len(cs.ForHost(host)) > 0 }

func normalizeHost(h string) string {
	return strings.ToLower(strings.TrimSuffix(strings.TrimSpace(h), "."))
}

// HostsOverlap reports whether two host patterns can name the same host
// (host_patterns_overlap, credentials.rs:173-180 @ v0.0.111).
func HostsOverlap(left, right string) bool {
	l, r := normalizeHost(left), normalizeHost(right)
	if l == "" || r == "" {
		return false
	}
	return l == r || hostPatternCovers(l, r) || hostPatternCovers(r, l)
}

// hostPatternCovers is host_pattern_covers (credentials.rs:182-205 @
// v0.0.111): a leading "**" label matches one or more leading labels; every
// other label matches one label, "*"-bearing labels as single-label globs.
func hostPatternCovers(pattern, host string) bool {
	pl, hl := strings.Split(pattern, "."), strings.Split(host, ".")
	if pl[0] == "**" {
		suffix := pl[1:]
		if len(suffix) == 0 || len(hl) <= len(suffix) {
			return false
		}
		return labelsMatch(suffix, hl[len(hl)-len(suffix):])
	}
	return labelsMatch(pl, hl)
}

// labelsMatch is labels_match (credentials.rs:207-222 @ v0.0.111).
func labelsMatch(pl, hl []string) bool {
	if len(pl) != len(hl) {
		return false
	}
	for i, p := range pl {
		if strings.Contains(p, "*") {
			if !wildcardLabelMatches(p, hl[i]) {
				return false
			}
		} else if p != hl[i] {
			return false
		}
	}
	return true
}

// wildcardLabelMatches is wildcard_label_matches (credentials.rs:224-260 @
// v0.0.111): prefix, then each middle part in order, then the suffix.
func wildcardLabelMatches(pattern, label string) bool {
	if pattern == "*" {
		return label != ""
	}
	if label == "" || !strings.Contains(pattern, "*") {
		return false
	}
	parts := strings.Split(pattern, "*")
	rest := label
	if parts[0] != "" {
		var ok bool
		if rest, ok = strings.CutPrefix(rest, parts[0]); !ok {
			return false
		}
	}
	if len(parts) > 2 {
		for _, part := range parts[1 : len(parts)-1] {
			if part == "" {
				continue
			}
			i := strings.Index(rest, part)
			if i < 0 {
				return false
			}
			rest = rest[i+len(part):]
		}
	}
	last := parts[len(parts)-1]
	return last == "" || strings.HasSuffix(rest, last)
}
