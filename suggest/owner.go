package suggest

import (
	"slices"
	"strings"

	"github.com/fullsend-ai/agent-sandbox/bundle"
	"github.com/fullsend-ai/agent-sandbox/openshell"
	"github.com/fullsend-ai/agent-sandbox/placeholder"
)

// policyBinary is a binary of the denial's policy (an L7 denial inside a
// tunnel names none: the CONNECT was allowed, so any binary of the policy
// stands for it).
func (p *planner) policyBinary(d *Denial) string {
	key, np := p.policyFor(d)
	if key == "" || len(np.Binaries) == 0 {
		return ""
	}
	return np.Binaries[0].Path
}

// policyFor finds the compiled network policy a denial names, by key, by
// name, else by its host and port.
func (p *planner) policyFor(d *Denial) (string, openshell.NetworkPolicy) {
	if key, np, ok := policyNamed(p.opts.Agent.Policy, d.Policy); ok {
		return key, np
	}
	return p.policyServing(d.Host, d.Port)
}

// policyNamed finds the network policy whose key, else whose name, is
// name; false for an empty name.
func policyNamed(pol *openshell.Policy, name string) (string, openshell.NetworkPolicy, bool) {
	if name == "" {
		return "", openshell.NetworkPolicy{}, false
	}
	if np, ok := pol.NetworkPolicies[name]; ok {
		return name, np, true
	}
	for _, key := range pol.PolicyKeys() {
		if np := pol.NetworkPolicies[key]; np.Name == name {
			return key, np, true
		}
	}
	return "", openshell.NetworkPolicy{}, false
}

// policyServing finds the first network policy (by key) with an endpoint
// for host and port.
func (p *planner) policyServing(host string, port int) (string, openshell.NetworkPolicy) {
	pol := p.opts.Agent.Policy
	for _, key := range pol.PolicyKeys() {
		np := pol.NetworkPolicies[key]
		for _, ep := range np.Endpoints {
			if ep.Port == port && p.sameHost(ep.Host, host) {
				return key, np
			}
		}
	}
	return "", openshell.NetworkPolicy{}
}

// sameHost compares a policy host (placeholders open) with a concrete one.
func (p *planner) sameHost(policyHost, host string) bool {
	if strings.EqualFold(policyHost, host) {
		return true
	}
	vals := placeholder.Examples()
	for k, v := range p.opts.Values {
		vals[k] = v
	}
	out, _, err := placeholder.Expand(policyHost, placeholder.FieldHost, vals)
	if err != nil {
		out, _, err = placeholder.Expand(policyHost, placeholder.FieldHostLabel, vals)
	}
	return err == nil && strings.EqualFold(out, host)
}

// ownerEntry finds the sandbox.endpoints entry that declares host:port in
// the files the policy's provenance names (the agent file first).
func (p *planner) ownerEntry(np openshell.NetworkPolicy, host string, port int) (*source, *endpointEntry) {
	for _, f := range p.ownerFiles(np) {
		s, err := p.source(f)
		if err != nil {
			continue
		}
		if e := p.entryFor(s, host, port); e != nil {
			return s, e
		}
	}
	return nil, nil
}

// ownerFiles are the Markdown files that may declare np's endpoints, in
// the order they are searched: the --to skill, the agent file when an
// endpoint comes from it, then every file an endpoint comes from.
func (p *planner) ownerFiles(np openshell.NetworkPolicy) []string {
	var files []string
	add := func(f string) {
		if strings.HasSuffix(f, ".md") && !slices.Contains(files, f) {
			files = append(files, f)
		}
	}
	if strings.HasPrefix(p.opts.To, "skill:") {
		add(p.targetFile())
	}
	if comesFrom(np, p.opts.Agent.File) {
		add(p.opts.Agent.File)
	}
	for _, ep := range np.Endpoints {
		for _, src := range ep.From {
			add(src.File)
		}
	}
	return files
}

// comesFrom reports whether an endpoint of np comes from file.
func comesFrom(np openshell.NetworkPolicy, file string) bool {
	return slices.ContainsFunc(np.Endpoints, func(ep openshell.Endpoint) bool {
		return slices.ContainsFunc(ep.From, func(src bundle.Source) bool { return src.File == file })
	})
}

// entryFor is src's sandbox.endpoints entry for host and port, nil when
// it has none.
func (p *planner) entryFor(src *source, host string, port int) *endpointEntry {
	for _, e := range src.endpoints() {
		if e.port == port && p.sameHost(e.host, host) {
			return &e
		}
	}
	return nil
}
