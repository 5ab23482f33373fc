package policydiff

import (
	"slices"
	"strings"

	"github.com/fullsend-ai/agent-sandbox/bundle"
	"github.com/fullsend-ai/agent-sandbox/openshell"
	"github.com/fullsend-ai/agent-sandbox/prover"
)

// CatCredentialScope is a host added to where a provider's credential
// (already given to the sandbox) is sent: OpenShell substitutes the secret
// in requests to it, so the token reaches that host.
const CatCredentialScope = "credential_scope_expansion"

// credentialsOf returns an agent's credential sets at an OpenShell
// version: the one the gateway gives the prover (the set, the
// credential_binding endpoints and every provider layer's hosts, with a
// secret or not), where each provider that holds a secret has it
// resolved, and the hosts the risk table calls credentialed: the set, the
// credential_binding endpoints and those bindings.
func credentialsOf(a *Agent, set prover.Credentials, version string) (prover.Credentials, map[string][]prover.Bound, prover.Credentials) {
	own := set.ForPolicy(a.Policy)
	pc := own.ForProviders(a.Policy, a.Layers)
	bound := prover.BoundEndpoints(a.Policy, a.Layers, version)
	risk := own
	for _, name := range sortedKeys(bound) {
		var hosts []string
		for _, b := range bound[name] {
			hosts = append(hosts, b.Host)
		}
		if len(hosts) > 0 {
			risk = append(risk, prover.Credential{Name: name, Type: "provider_binding", TargetHosts: slices.Compact(hosts)})
		}
	}
	return pc, bound, risk
}

// credentialScope grades a head endpoint whose ports put it where a
// provider's credential is resolved and was not in the base: critical when
// the base already gave that provider a credential (the secret is now sent
// to one more host), high when the provider's credential is new.
func (d *differ) credentialScope(c *Change, ep *openshell.Endpoint, ports []int) {
	if len(ports) == 0 {
		ports = []int{ep.Port}
	}
	for _, name := range sortedKeys(d.hBound) {
		for _, port := range ports {
			b := prover.Bound{Host: strings.ToLower(strings.TrimSuffix(ep.Host, ".")), Port: port, Path: ep.Path}
			if !slices.Contains(d.hBound[name], b) || slices.Contains(d.bBound[name], b) {
				continue
			}
			c.apply(d.scopeGrade(name, b))
		}
	}
}

// scopeGrade is the grade of provider name's credential newly resolved at b.
func (d *differ) scopeGrade(name string, b prover.Bound) grade {
	how := "OpenShell binds a provider's credential to every endpoint of its profile"
	if !openshell.Supports(openshell.FeatureCredentialBinding, d.opts.headVersion) {
		how = "OpenShell before " + credentialBindingSince() + " resolves a provider's credential at every endpoint the sandbox reaches"
	}
	if _, had := d.bBound[name]; had {
		return grade{RiskCritical, CatCredentialScope, "provider " + name + "'s credential is now sent to " + b.String() + ": " + how}
	}
	return grade{RiskHigh, prover.CredentialReachExpansion, "a new credential (provider " + name + ") is sent to " + b.String() + ": " + how}
}

// credentialBindingSince is the first OpenShell release that binds a
// provider's static credential to its profile's endpoints.
func credentialBindingSince() string {
	v, _ := openshell.Since(openshell.FeatureCredentialBinding)
	return v
}

// providerCredentials reports a provider on both sides that holds a
// credential in the head only: the secret is now sent to each endpoint it
// is bound to.
func (d *differ) providerCredentials() {
	for _, hl := range d.h.Layers {
		i := slices.IndexFunc(d.b.Layers, func(bl prover.ProviderLayer) bool { return bl.Name == hl.Name })
		if i < 0 || d.b.Layers[i].Credentialed || !hl.Credentialed {
			continue
		}
		var where []string
		for _, b := range d.hBound[hl.Name] {
			where = append(where, b.String())
		}
		c := Change{Action: ActionWiden, Kind: "provider_profile", Field: "credentials", Policy: hl.Key, Before: "none",
			After: strings.Join(where, ", "), From: d.providerRefSource(hl.Name), order: "0e" + hl.Name + "\x00credentials"}
		c.apply(grade{RiskHigh, prover.CredentialReachExpansion, "provider " + hl.Name + " now holds a credential, sent to every endpoint it is bound to"})
		d.add(c)
	}
}

// providerRefSource is where the head names provider name: its profile
// file, or the agent's definition for a built-in profile.
func (d *differ) providerRefSource(name string) []bundle.Source {
	for _, p := range d.h.Manifest.Providers {
		if p.Name == name {
			return d.providerSource(d.h, p)
		}
	}
	return sourcesFor(d.h, "")
}
