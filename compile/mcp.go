package compile

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/fullsend-ai/agent-sandbox/agentdef"
	"github.com/fullsend-ai/agent-sandbox/bundle"
	"github.com/fullsend-ai/agent-sandbox/openshell"
	"github.com/fullsend-ai/agent-sandbox/openshell/decide"
)

// mcpClientMethods are the JSON-RPC methods an MCP client sends besides
// tools/call to use a server's tools: the lifecycle handshake (initialize,
// then the notifications/initialized notification, which OpenShell parses
// and matches by method like a request: l7/jsonrpc.rs:411-425 @ v0.0.111)
// and the tool listing (MCP specification 2025-06-18, "Lifecycle" and
// "Tools"). They are allowed one by one rather than through
// mcp.allow_all_known_mcp_methods, which allows every method of the MCP
// protocol, resources and prompts included, and tools/call too unless a
// rule narrows it by tool (sandbox-policy.rego:511,543 @ v0.0.111;
// openshell/decide/l7.go models it): an explicit list is the least privilege.
// With allow_all_known_mcp_methods unset every rule needs a method
// (l7/mod.rs:767 @ v0.0.111), and MCP method names are exact except for
// tools/* globs (OSP080).
var mcpClientMethods = []string{"initialize", "notifications/initialized", "tools/list"}

// mcpUse is what an agent's tools use of one MCP server.
type mcpUse struct {
	server agentdef.MCPServerDecl
	// tools are the tool names the agent lists, sorted; anyTool is set by
	// mcp__server or mcp__server__*.
	tools   []string
	anyTool bool
	at      agentdef.Pos
	from    []bundle.Source
}

// mcpEndpoints emits, for every inline remote (http/sse) MCP server of the
// agent that an mcp__server__tool rule uses, an endpoint with protocol mcp
// on the url's host, port and path, allowing the client's handshake and
// list methods and tools/call for exactly the listed tools. Its binaries
// are the runtime's (Claude Code itself is the MCP client). stdio servers
// run inside the sandbox and need no endpoint; servers defined outside the
// agent file are left to sandbox.endpoints (egressChecks warns).
func (b *builder) mcpEndpoints(skills []*agentdef.Skill) {
	rules := slices.Clone(b.agent.Tools)
	for _, s := range skills {
		rules = append(rules, s.AllowedTools...)
	}
	uses := map[string]*mcpUse{}
	var order []string
	for _, r := range rules {
		if r.Tool != "mcp" {
			continue
		}
		i := slices.IndexFunc(b.agent.MCPServers, func(s agentdef.MCPServerDecl) bool { return s.Name == r.MCPServer })
		if i < 0 {
			continue // egressChecks: the server is not declared
		}
		u, ok := uses[r.MCPServer]
		if !ok {
			u = &mcpUse{server: b.agent.MCPServers[i], at: r.Pos}
			uses[r.MCPServer] = u
			order = append(order, r.MCPServer)
		}
		b.useMCPTool(u, r)
	}
	for _, name := range order {
		b.mcpEndpoint(uses[name])
	}
}

// useMCPTool records on u the tool that rule r uses: one tool by name, or
// every tool of the server (mcp__server, mcp__server__*), with a warning
// the first time.
func (b *builder) useMCPTool(u *mcpUse, r agentdef.ToolRule) {
	u.from = append(u.from, src(r.Pos, "tool "+r.Raw))
	switch {
	case r.MCPTool == "" || r.MCPTool == "*":
		if !u.anyTool {
			b.warnf(r.Pos, "tools", "list the server's tools one by one (mcp__"+r.MCPServer+"__TOOL) to allow only those",
				"%s allows every tool of MCP server %q: the policy allows tools/call for any tool name", r.Raw, r.MCPServer)
		}
		u.anyTool = true
	case !slices.Contains(u.tools, r.MCPTool):
		u.tools = append(u.tools, r.MCPTool)
	}
}

// mcpEndpoint adds the endpoint of one remote MCP server, or warns why it
// cannot.
func (b *builder) mcpEndpoint(u *mcpUse) {
	if !b.mcpRemote(u) || !b.mcpInspectable(u) {
		return
	}
	bins, ok := b.mcpBinaries(u)
	if !ok {
		return
	}
	b.contribs = append(b.contribs, mcpContribution(u, bins))
	b.mcpIntended = append(b.mcpIntended, mcpIntent{use: u, bin: bins[0]})
}

// remoteMCPTypes are the transport types of a server the agent reaches
// over the network ("" is http when the url is given).
var remoteMCPTypes = []string{"", "http", "sse", "streamable-http"}

// mcpRemote reports whether the server u uses is a remote server with a
// literal url, the only kind an endpoint is compiled for; it warns about
// the others, except a server configured outside the agent file
// (egressChecks warns about it).
func (b *builder) mcpRemote(u *mcpUse) bool {
	s := u.server
	switch {
	case s.Command != "" || s.Type == "stdio":
		b.warnf(u.at, "tools", "if the server itself reaches the network, allow its command (Bash(...)) and declare its hosts in sandbox.endpoints",
			"MCP server %q is a stdio server: it runs inside the sandbox as %q and needs no MCP endpoint; any network it needs is its command's", s.Name, s.Command)
		return false
	case s.Host == "" && strings.Contains(s.URL, "${"):
		b.warnf(u.at, "tools", "write the url literally, or declare the server's endpoint in sandbox.endpoints",
			"MCP server %q: its url %q is expanded from the environment at run time, so no endpoint is compiled for it", s.Name, s.URL)
		return false
	case s.Host == "":
		return false // configured outside the agent file: egressChecks warns
	case !slices.Contains(remoteMCPTypes, s.Type):
		b.warnf(u.at, "tools", "use type http or sse, or declare the server's host in sandbox.endpoints",
			"MCP server %q has transport type %q: no endpoint is compiled for it", s.Name, s.Type)
		return false
	}
	return true
}

// mcpInspectable reports whether the target OpenShell release inspects
// MCP (protocol mcp); it warns when not.
func (b *builder) mcpInspectable(u *mcpUse) bool {
	if openshell.Supports(openshell.FeatureProtocolJSONRPC, b.version) {
		return true
	}
	s := u.server
	since, _ := openshell.Since(openshell.FeatureProtocolJSONRPC)
	b.warnf(u.at, "tools", fmt.Sprintf("target OpenShell %s or later (--openshell-version)", since),
		"MCP server %q: OpenShell %s cannot inspect MCP (protocol mcp arrived in %s), so no endpoint is emitted for %s and its tools are unreachable",
		s.Name, b.version, since, s.Host)
	return false
}

// mcpBinaries are the binaries granted the endpoint of the server u uses;
// false, with a warning, when the runtime has none in the catalog.
//
// Named tools: every binary the catalog lists for the runtime. An
// npm-installed Claude Code runs as node, and OpenShell matches the
// executable (or an ancestor's), never the script it runs
// (sandbox-policy.rego:147-172, argv excluded at 164, @ v0.0.83 and
// v0.0.111). Lint rule FS016 accepts an interpreter on an mcp endpoint
// whose tools/call rules name tools exactly: whatever node process uses
// the grant, it reaches only the tools the agent declared.
//
// Every tool of the server (mcp__server, mcp__server__*): the
// runtime's own executable only, and FS016 keeps refusing the
// interpreter there, with no exemption. With node listed, every node
// process of the sandbox could call any tool of the server, write
// tools included: not only Claude Code's own tree (which ancestor
// matching lets through whichever executable is listed) but a node
// process that left it (double-forked, reparented) or was started
// beside it. The compile cannot know how the image installs the
// runtime, so it says what an npm install loses; naming the tools
// works for both installs and is the least privilege anyway.
func (b *builder) mcpBinaries(u *mcpUse) ([]string, bool) {
	s := u.server
	all := b.cat.Runtimes[b.runtime].Binaries
	bins := all
	if u.anyTool && len(all) > 1 {
		bins = all[:1]
		b.warnf(u.at, "tools", "name the tools (mcp__"+s.Name+"__TOOL): named tools are granted to every executable the runtime runs as",
			"MCP server %q: a grant of every tool reaches it from %s only; an npm-installed %s runs as %s and is denied (lint FS016 refuses an interpreter where any tool may be called)",
			s.Name, all[0], b.runtime, strings.Join(all[1:], " or "))
	}
	if len(bins) == 0 {
		b.warnf(u.at, "tools", "add the runtime's binaries to the catalog",
			"MCP server %q: runtime %s has no binaries in the catalog, so no endpoint is emitted", s.Name, b.runtime)
		return nil, false
	}
	return bins, true
}

// mcpContribution is the endpoint of the server u uses, on its url's host,
// port and path, for bins: the client's handshake and list methods, and
// tools/call (mcpToolsCall).
func mcpContribution(u *mcpUse, bins []string) contribution {
	s := u.server
	from := src(s.Pos, fmt.Sprintf("MCP server %s (mcpServers)", s.Name))
	c := contribution{
		host: s.Host, port: s.Port, path: mcpEndpointPath(s), protocol: openshell.ProtocolMCP,
		binaries: slices.Clone(bins), from: from,
		binFrom: map[string][]bundle.Source{},
	}
	for _, bin := range bins {
		c.binFrom[bin] = u.from
	}
	for _, m := range mcpClientMethods {
		c.rules = append(c.rules, mcpRule(openshell.Match{Method: m}, from))
	}
	c.rules = append(c.rules, mcpRule(mcpToolsCall(u), u.from...))
	return c
}

// mcpToolsCall is the tools/call match of u: any tool, else exactly the
// listed ones (u.tools is sorted).
func mcpToolsCall(u *mcpUse) openshell.Match {
	call := openshell.Match{Method: "tools/call"}
	if u.anyTool {
		return call
	}
	sort.Strings(u.tools)
	call.Tool = &openshell.QueryMatch{Glob: u.tools[0]}
	if len(u.tools) > 1 {
		call.Tool = &openshell.QueryMatch{Any: u.tools}
	}
	return call
}

// mcpIntent is a compiled MCP server use, for the self-check.
type mcpIntent struct {
	use *mcpUse
	bin string
}

// checkMCPIntended runs the decision engine on what each compiled MCP
// server use intends: the handshake, tools/list and a tools/call of every
// listed tool (or of an example tool for mcp__server), from the runtime's
// binary, with allow on the example-expanded policy (selfCheck's). A
// denial (a fragment's deny rule, another endpoint taking the path) is an
// error at the server.
func (b *builder) checkMCPIntended(allow func(*decide.Request) decide.Decision) {
	for _, in := range b.mcpIntended {
		s := in.use.server
		target := mcpTarget(s)
		for _, q := range mcpRequests(in.use) {
			r, err := decide.ParseRequest("POST " + target + " from " + in.bin + " " + q)
			if err != nil {
				continue // a tool name the request syntax cannot spell
			}
			if d := allow(r); !d.Allowed {
				b.errorf(s.Pos, "mcpServers", "check the sandbox declarations and policy fragments that cover "+s.Host,
					"MCP server %s: the compiled policy denies %s: %s", s.Name, r, d.Reason)
			}
		}
	}
}

// mcpTarget is the url the self-check posts to for server s: https on its
// port, http on port 80, with its path (else /).
func mcpTarget(s agentdef.MCPServerDecl) string {
	target := fmt.Sprintf("https://%s:%d%s", s.Host, s.Port, s.Path)
	if s.Port == 80 {
		target = fmt.Sprintf("http://%s%s", s.Host, s.Path)
	}
	if s.Path == "" {
		target += "/"
	}
	return target
}

// mcpRequests are the JSON-RPC requests, in decide.ParseRequest's words,
// that u intends: the handshake, tools/list and a tools/call of every
// listed tool (of an example tool when any tool is allowed).
func mcpRequests(u *mcpUse) []string {
	var reqs []string
	for _, m := range mcpClientMethods {
		reqs = append(reqs, "rpc "+m)
	}
	tools := u.tools
	if u.anyTool {
		tools = []string{"example_tool"}
	}
	for _, t := range tools {
		reqs = append(reqs, "rpc tools/call tool "+t)
	}
	return reqs
}

// mcpRule is one allow rule of an MCP endpoint. It counts as a read for
// the tier: using an MCP tool needs the catalog tier of the mcp tool
// class (network), which the tool rule itself records.
func mcpRule(m openshell.Match, from ...bundle.Source) openshell.Rule {
	m.From = from
	return openshell.Rule{Allow: m, From: from, Reads: true}
}

// mcpEndpointPath is the endpoint path of a remote MCP server. Streamable
// HTTP posts every message to the url's path, so the endpoint is that path
// exactly; the legacy sse transport posts to a message url the server
// announces at run time, so it gets the whole host. A url without a path
// gets the whole host too.
func mcpEndpointPath(s agentdef.MCPServerDecl) string {
	if s.Type == "sse" || s.Path == "" || s.Path == "/" {
		return ""
	}
	return s.Path
}

// mcpRuleKey distinguishes MCP rules of the same method in mergeRules.
func mcpRuleKey(m openshell.Match) string {
	if m.Tool == nil {
		return ""
	}
	return m.Tool.Glob + "|" + strings.Join(m.Tool.Any, ",")
}
