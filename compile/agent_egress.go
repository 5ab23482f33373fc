package compile

import (
	"fmt"
	"slices"
	"strings"

	"github.com/fullsend-ai/agent-sandbox/agentdef"
	"github.com/fullsend-ai/agent-sandbox/openshell"
)

// egressChecks warns where an agent holds a tool that only works through
// egress the policy does not grant, naming what to declare:
//   - a network client command (Bash(curl *), Bash(wget *): a catalog
//     binary with network access and no profile of its own) when no
//     endpoint of the policy lets that binary out: the command reaches
//     nothing;
//   - an mcp__server__tool rule whose server is not in the agent's
//     mcpServers, or whose remote server's host no endpoint allows.
//
// It runs on the compiled policy, so declarations of every origin count
// (sandbox.endpoints, profiles, skills, policy fragments).
func egressChecks(c *Compiled, skills []*agentdef.Skill) agentdef.Diagnostics {
	var ds agentdef.Diagnostics
	rules := slices.Clone(c.Agent.Tools)
	for _, s := range skills {
		rules = append(rules, s.AllowedTools...)
	}
	reach := policyReach(c)
	warned := map[string]bool{}
	for _, r := range rules {
		switch {
		case r.Tool == "Bash":
			ds = append(ds, networkClientWarnings(c, r, reach, warned)...)
		case r.Tool == "mcp":
			if d, ok := mcpWarning(c, r, reach); ok && !warned[r.Pos.String()+r.Raw] {
				warned[r.Pos.String()+r.Raw] = true
				ds = append(ds, d)
			}
		}
	}
	return ds
}

// reach is what the non-baseline network policies of a compiled policy let
// out: the binaries allowed anywhere, the hosts, and whether an MCP
// endpoint is declared.
type reach struct {
	binaries map[string]bool
	hosts    map[string]bool
	mcp      bool
}

func policyReach(c *Compiled) reach {
	r := reach{binaries: map[string]bool{}, hosts: map[string]bool{}}
	for key, np := range c.Policy.NetworkPolicies {
		if slices.Contains(c.Baseline, key) {
			continue
		}
		for _, b := range np.Binaries {
			r.binaries[b.Path] = true
		}
		for _, ep := range np.Endpoints {
			r.hosts[strings.ToLower(ep.Host)] = true
			r.mcp = r.mcp || ep.Protocol == openshell.ProtocolMCP
		}
	}
	return r
}

// networkClientWarnings warns, once per command, about a network client
// the rule allows that no endpoint lets out.
func networkClientWarnings(c *Compiled, r agentdef.ToolRule, rc reach, warned map[string]bool) agentdef.Diagnostics {
	var ds agentdef.Diagnostics
	for _, cmd := range r.Commands {
		bin, ok := c.catalog.Binaries[cmd.Command]
		if !ok || !bin.Network || len(bin.Profiles) > 0 || warned["cmd:"+cmd.Command] {
			continue
		}
		if slices.ContainsFunc(bin.Paths, func(p string) bool { return rc.binaries[p] }) {
			continue
		}
		warned["cmd:"+cmd.Command] = true
		ds = append(ds, agentdef.Diagnostic{
			Pos: r.Pos, Severity: agentdef.SeverityWarning, Field: "tools",
			Message: fmt.Sprintf("%s allows %s, but no host is declared for it: under this policy %s reaches nothing", r.Raw, cmd.Command, cmd.Command),
			Hint: fmt.Sprintf("declare each host %s needs in sandbox.endpoints (- host: api.example.com, access: read-only), "+
				"name a catalog profile in sandbox.profiles, or drop the rule", cmd.Command),
		})
	}
	return ds
}

// mcpWarning checks one mcp__server__tool rule against the agent's
// mcpServers and the policy's endpoints.
func mcpWarning(c *Compiled, r agentdef.ToolRule, rc reach) (agentdef.Diagnostic, bool) {
	d := agentdef.Diagnostic{Pos: r.Pos, Severity: agentdef.SeverityWarning, Field: "tools"}
	i := slices.IndexFunc(c.Agent.MCPServers, func(s agentdef.MCPServerDecl) bool { return s.Name == r.MCPServer })
	if i < 0 {
		d.Message, d.Hint = undeclaredMCPServer(c.Agent.Format, r)
		return d, true
	}
	s := c.Agent.MCPServers[i]
	switch {
	case s.Host != "" && !rc.hosts[s.Host]:
		d.Message = fmt.Sprintf("%s uses MCP server %q at %s, which no endpoint allows: the server is unreachable", r.Raw, s.Name, s.Host)
		d.Hint = fmt.Sprintf("declare it in sandbox.endpoints: - {host: %s, rules: [POST /PATH/**], binaries: [/usr/bin/node]} (Claude Code itself connects)", s.Host)
	case s.Command != "":
		return d, false // a stdio server runs in the sandbox; its egress is its command's
	case s.Host == "" && !rc.mcp && len(rc.hosts) == 0:
		d.Message = fmt.Sprintf("%s uses MCP server %q, defined outside the agent file, and no endpoint is declared for it", r.Raw, s.Name)
		d.Hint = fmt.Sprintf("declare the host of %s in sandbox.endpoints, or define it inline in mcpServers with its url", s.Name)
	default:
		return d, false
	}
	return d, true
}

// undeclaredMCPServer is the message and hint for a rule whose MCP server
// the agent does not declare: missing from a Claude agent's mcpServers,
// configured outside an OpenCode agent's file.
func undeclaredMCPServer(format agentdef.Format, r agentdef.ToolRule) (msg, hint string) {
	if format == agentdef.FormatOpenCode {
		return fmt.Sprintf("%s uses MCP server %q: OpenCode names MCP tools <server>_<tool>, and the server is configured outside the agent file", r.Raw, r.MCPServer),
			"declare the server's host in sandbox.endpoints"
	}
	return fmt.Sprintf("%s uses MCP server %q, which the agent does not declare: the tool is not there at run time", r.Raw, r.MCPServer),
		fmt.Sprintf("add %s to mcpServers (inline: {%s: {type: http, url: https://HOST/mcp}}) and declare HOST in sandbox.endpoints", r.MCPServer, r.MCPServer)
}
