package compile

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/fullsend-ai/agent-sandbox/agentdef"
	"github.com/fullsend-ai/agent-sandbox/openshell"
	"github.com/fullsend-ai/agent-sandbox/openshell/profile"
	"github.com/fullsend-ai/agent-sandbox/openshell/profile/check"
	"github.com/fullsend-ai/agent-sandbox/placeholder"
)

// EmitProfilesPrefix starts the id of every provider profile the profiles
// emit mode generates.
const EmitProfilesPrefix = "fullsend-shared-"

// sharedGrant is one network policy several agents hold identically.
type sharedGrant struct {
	id     string
	data   []byte
	agents map[string]string // agent -> its network policy key
}

// splitSharedProfiles is the profiles emit mode (ADR 0065 layout): every
// network policy that two or more agents hold identically, with no open
// placeholder (OpenShell substitutes none in a profile), becomes a
// generated provider profile, profiles/fullsend-shared-<key>.yaml, and
// leaves those agents' policies, which keep their filesystem, process,
// landlock and agent-specific endpoints and attach the profile instead
// (after the providers they name). A grant moves only when its generated
// profile validates and its layer is the agent's network policy again
// (openshell.Difference), so the composed policy the checks see is the
// compiled one under other keys; anything else stays where it was.
func splitSharedProfiles(out *Output) error {
	shared, err := sharedGrants(out)
	if err != nil {
		return err
	}
	for _, g := range shared {
		p, diags := profile.Decode("profiles/"+g.id+".yaml", g.data, out.OpenShellVersion)
		if p == nil || openshell.HasErrors(diags) || openshell.HasErrors(check.File("profiles/"+g.id+".yaml", g.data, out.OpenShellVersion)) {
			continue // stays compiled: the profile model cannot carry it
		}
		for _, name := range slices.Sorted(maps.Keys(g.agents)) {
			c, key := out.Agents[name], g.agents[name]
			if d := layerDifference(c.Policy.NetworkPolicies[key], p); d != "" {
				return fmt.Errorf("agent %s: network policy %s does not round-trip through profile %s: %s", name, key, g.id, d)
			}
			moveToProfile(c, key, p, g.data)
		}
	}
	return nil
}

// sharedGrants finds the network policies eligible to move, each with its
// generated profile, in a deterministic order.
func sharedGrants(out *Output) ([]*sharedGrant, error) {
	grants, err := groupGrants(out)
	if err != nil {
		return nil, err
	}
	var shared []*sharedGrant
	ids := map[string]int{}
	for _, g := range grants {
		if len(g.agents) < 2 {
			continue
		}
		g.name(ids)
		shared = append(shared, g)
	}
	return shared, nil
}

// groupGrants groups the agents' network policies by the profile document
// each would become (profileDoc), in the order the documents first appear
// (agents by name, then keys sorted). Provider layers and policies with an
// open placeholder are left out.
func groupGrants(out *Output) ([]*sharedGrant, error) {
	byDoc := map[string]*sharedGrant{}
	var order []*sharedGrant
	for _, name := range out.AgentNames() {
		c := out.Agents[name]
		for _, key := range slices.Sorted(maps.Keys(c.Policy.NetworkPolicies)) {
			if strings.HasPrefix(key, profile.ProviderRulePrefix) {
				continue
			}
			doc, err := profileDoc(key, c.Policy.NetworkPolicies[key])
			if err != nil {
				return nil, fmt.Errorf("agent %s: %w", name, err)
			}
			if doc == nil {
				continue
			}
			g, ok := byDoc[string(doc)]
			if !ok {
				g = &sharedGrant{data: doc, agents: map[string]string{}}
				byDoc[string(doc)] = g
				order = append(order, g)
			}
			g.agents[name] = key
		}
	}
	return order, nil
}

// name gives g its profile id, from the network policy key of its first
// agent by name (suffixed -2, -3... when another grant took it), and
// writes the id into its document. ids counts the grants of each base id.
func (g *sharedGrant) name(ids map[string]int) {
	key := g.agents[slices.Sorted(maps.Keys(g.agents))[0]]
	base := EmitProfilesPrefix + strings.Trim(strings.ReplaceAll(key, "_", "-"), "-")
	ids[base]++
	g.id = base
	if ids[base] > 1 {
		g.id = fmt.Sprintf("%s-%d", base, ids[base])
	}
	g.data = bytes.Replace(g.data, []byte("id: PROFILE_ID\n"), []byte("id: "+g.id+"\n"), 1)
}

// profileDoc renders a network policy as a provider profile (id left as
// PROFILE_ID), or nil when it holds a placeholder. The endpoints and
// binaries are the policy's own YAML: a profile endpoint takes the same
// keys (ProviderTypeProfile's endpoints, profiles.rs:380-411 @ v0.0.111).
func profileDoc(key string, np openshell.NetworkPolicy) ([]byte, error) {
	data, err := openshell.Marshal(&openshell.Policy{Version: 1, NetworkPolicies: map[string]openshell.NetworkPolicy{key: np}}, "")
	if err != nil {
		return nil, err
	}
	if refs, _ := placeholder.Find(string(data)); len(refs) > 0 {
		return nil, nil
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	pol := mappingValue(doc.Content[0], "network_policies")
	npNode := mappingValue(pol, key)
	out := &yaml.Node{Kind: yaml.MappingNode}
	add := func(k string, v *yaml.Node) {
		out.Content = append(out.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: k}, v)
	}
	str := func(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Value: s} }
	add("id", str("PROFILE_ID"))
	add("display_name", str("fullsend shared grant "+key))
	add("description", str("Generated by fullsend policy compile --emit profiles from the agents' compiled network policy "+key+". DO NOT EDIT."))
	for _, f := range []string{"endpoints", "binaries"} {
		if v := mappingValue(npNode, f); v != nil {
			add(f, v)
		}
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(out); err != nil {
		return nil, err
	}
	return buf.Bytes(), enc.Close()
}

// layerDifference compares a network policy with the layer its generated
// profile becomes ("" when they are the same document).
func layerDifference(np openshell.NetworkPolicy, p *profile.Profile) string {
	layer := p.NetworkPolicy(np.Name)
	a := &openshell.Policy{Version: 1, NetworkPolicies: map[string]openshell.NetworkPolicy{"k": np}}
	b := &openshell.Policy{Version: 1, NetworkPolicies: map[string]openshell.NetworkPolicy{"k": layer}}
	return openshell.Difference(a, b)
}

// moveToProfile takes key out of the agent's written policy and attaches
// the generated profile instead, after the agent's other providers; the
// policy the checks see is composed again.
func moveToProfile(c *Compiled, key string, p *profile.Profile, data []byte) {
	pol := c.Policy.Clone()
	delete(pol.NetworkPolicies, key)
	c.Policy, c.doc, c.docErr = pol, nil, nil
	c.Providers = append(c.Providers, ProviderLayer{Name: p.ID, Profile: p.ID, Pos: agentdef.Pos{File: c.Agent.File}, data: data, prof: p})
	atts := make([]profile.Attachment, 0, len(c.Providers))
	for _, l := range c.Providers {
		atts = append(atts, profile.Attachment{Provider: l.Name, Profile: l.prof})
	}
	comp := profile.Compose(pol, atts, profile.Gateway{ProvidersV2Enabled: true})
	for i := range c.Providers {
		c.Providers[i].Key = comp.Layers[i].Key
	}
	c.Composed = comp.Policy
}
