package prover

import (
	"bytes"
	_ "embed"
	"fmt"
	"slices"

	"gopkg.in/yaml.v3"

	"github.com/fullsend-ai/agent-sandbox/openshell"
	"github.com/fullsend-ai/agent-sandbox/openshell/glob"
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

// ForHost returns the credentials whose target hosts overlap host, as
// OpenShell's prover reads host patterns (credentials_for_host,
// credentials.rs:138-151 @ v0.0.111; glob.CredentialHost).
func (cs Credentials) ForHost(host string) []Credential {
	h := glob.NewCredentialHost(host)
	var out []Credential
	for _, c := range cs {
		if slices.ContainsFunc(c.TargetHosts, func(t string) bool { return h.Overlaps(glob.NewCredentialHost(t)) }) {
			out = append(out, c)
		}
	}
	return out
}

// Credentialed reports whether any credential is in scope for host.
func (cs Credentials) Credentialed(host string) bool { return len(cs.ForHost(host)) > 0 }
