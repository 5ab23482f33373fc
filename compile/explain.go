package compile

import (
	"fmt"
	"strings"

	"github.com/fullsend-ai/agent-sandbox/bundle"
)

// Explanation lists every element of an agent's policy with the source
// lines that caused it.
type Explanation struct {
	Agent        string              `json:"agent"`
	File         string              `json:"file"`
	Tier         string              `json:"tier"`
	Runtime      string              `json:"runtime"`
	Provider     string              `json:"provider"`
	Spawns       []string            `json:"spawns,omitempty"`
	Placeholders []string            `json:"placeholders,omitempty"`
	Endpoints    []ExplainedEndpoint `json:"endpoints"`
	ReadOnly     []ExplainedItem     `json:"read_only"`
	ReadWrite    []ExplainedItem     `json:"read_write"`
}

// ExplainedEndpoint is one endpoint with its rules and binaries.
type ExplainedEndpoint struct {
	Policy   string          `json:"policy"`
	Host     string          `json:"host"`
	Port     int             `json:"port"`
	Protocol string          `json:"protocol"`
	Access   string          `json:"access,omitempty"`
	From     []bundle.Source `json:"from"`
	Rules    []ExplainedItem `json:"rules,omitempty"`
	Binaries []ExplainedItem `json:"binaries"`
}

// ExplainedItem is one rule, binary or path with its sources.
type ExplainedItem struct {
	Value string          `json:"value"`
	From  []bundle.Source `json:"from"`
}

// Explain builds the explanation of a compiled agent.
func Explain(c *Compiled) *Explanation {
	p := c.Policy
	e := &Explanation{
		Agent: c.Agent.Name, File: c.Agent.File, Tier: string(c.Tier), Runtime: c.Runtime,
		Provider: c.Provider, Spawns: c.Spawns, Placeholders: c.Placeholders,
	}
	for _, key := range p.PolicyKeys() {
		np := p.NetworkPolicies[key]
		for _, ep := range np.Endpoints {
			x := ExplainedEndpoint{Policy: key, Host: ep.Host, Port: ep.Port, Protocol: ep.Protocol, Access: ep.Access, From: ep.From}
			for _, r := range ep.Rules {
				v := r.Allow.Method + " " + r.Allow.Path
				if q := queryKey(r.Allow.Query); q != "" {
					v += " ?" + q
				}
				x.Rules = append(x.Rules, ExplainedItem{Value: v, From: r.From})
			}
			for _, b := range np.Binaries {
				x.Binaries = append(x.Binaries, ExplainedItem{Value: b.Path, From: b.From})
			}
			e.Endpoints = append(e.Endpoints, x)
		}
	}
	if fs := p.FilesystemPolicy; fs != nil {
		for _, path := range fs.ReadOnly {
			e.ReadOnly = append(e.ReadOnly, ExplainedItem{Value: path, From: fs.Sources[path]})
		}
		for _, path := range fs.ReadWrite {
			e.ReadWrite = append(e.ReadWrite, ExplainedItem{Value: path, From: fs.Sources[path]})
		}
		if fs.IncludeWorkdir {
			e.ReadWrite = append(e.ReadWrite, ExplainedItem{Value: "/sandbox (include_workdir)",
				From: []bundle.Source{{File: c.Agent.File, Line: c.Agent.NamePos.Line, Reason: "tier full"}}})
		}
	}
	return e
}

// String renders the explanation as an indented text report.
func (e *Explanation) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "agent %s (%s)\n  tier %s, runtime %s via %s\n", e.Agent, e.File, e.Tier, e.Runtime, e.Provider)
	if len(e.Spawns) > 0 {
		fmt.Fprintf(&b, "  may spawn: %s\n", strings.Join(e.Spawns, ", "))
	}
	if len(e.Placeholders) > 0 {
		fmt.Fprintf(&b, "  open placeholders: %s\n", strings.Join(e.Placeholders, ", "))
	}
	b.WriteString("\nnetwork\n")
	for _, ep := range e.Endpoints {
		fmt.Fprintf(&b, "  %s:%d  protocol %s", ep.Host, ep.Port, ep.Protocol)
		if ep.Access != "" {
			fmt.Fprintf(&b, ", access %s", ep.Access)
		}
		fmt.Fprintf(&b, "  [network_policies.%s]\n", ep.Policy)
		writeFrom(&b, "      ", ep.From)
		for _, r := range ep.Rules {
			fmt.Fprintf(&b, "    allow %s\n", r.Value)
			writeFrom(&b, "      ", r.From)
		}
		for _, bin := range ep.Binaries {
			fmt.Fprintf(&b, "    binary %s\n", bin.Value)
			writeFrom(&b, "      ", bin.From)
		}
	}
	b.WriteString("\nfilesystem\n")
	for _, group := range []struct {
		name  string
		items []ExplainedItem
	}{{"read-only", e.ReadOnly}, {"read-write", e.ReadWrite}} {
		for _, it := range group.items {
			fmt.Fprintf(&b, "  %-10s %s\n", group.name, it.Value)
			writeFrom(&b, "      ", it.From)
		}
	}
	return b.String()
}

func writeFrom(b *strings.Builder, indent string, from []bundle.Source) {
	for _, s := range from {
		fmt.Fprintf(b, "%s<- %s\n", indent, s)
	}
}
