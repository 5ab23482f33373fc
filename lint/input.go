package lint

import (
	"bytes"
	"encoding/json"
	"reflect"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/fullsend-ai/agent-sandbox/bundle"
	"github.com/fullsend-ai/agent-sandbox/openshell"
	"github.com/fullsend-ai/agent-sandbox/openshell/glob"
)

// Input is one policy to lint, with the fullsend context rules may use.
type Input struct {
	// Name is the agent name ("" when unknown).
	Name string
	// File is the policy file path findings name.
	File string
	// Policy is the policy model; rules see it as the YAML document
	// openshell.Marshal emits (DocumentValue).
	Policy *openshell.Policy
	// Context is the fullsend context, data.fullsend.context to the rules.
	Context Context
	// Raw is the policy file as written (optional): findings then carry the
	// line of their policy path.
	Raw []byte
}

func (in *Input) label() string {
	switch {
	case in.File != "":
		return in.File
	case in.Name != "":
		return "agent " + in.Name
	}
	return "policy"
}

// Context is what fullsend knows about a policy beyond the document: the
// agent, its tier and subagents, where each element came from, and all other
// agents (for privilege lifting). Rules read it as data.fullsend.context; it
// encodes to the same JSON for `conftest --data` and `opa eval --data`.
type Context struct {
	Agent string `json:"agent,omitempty"`
	// Tier is read-only, network or full.
	Tier string `json:"tier,omitempty"`
	// Runtime marks a policy meant to be loaded as is: no placeholder may remain.
	Runtime bool     `json:"runtime,omitempty"`
	Spawns  []string `json:"spawns,omitempty"`
	Skills  []string `json:"skills,omitempty"`
	// Placeholders are the placeholders the agent may leave open for the
	// runner. nil means unknown (not checked); empty means none allowed.
	Placeholders []string `json:"placeholders,omitempty"`
	// Provenance maps policy paths to their sources (Policy.Provenance()).
	Provenance map[string][]bundle.Source `json:"provenance,omitempty"`
	// Env is the environment the runner passes into the sandbox.
	Env map[string]string `json:"env,omitempty"`
	// Agents describes every agent of the project, by name.
	Agents map[string]AgentInfo `json:"agents,omitempty"`
}

// AgentInfo is one agent as other agents' rules see it.
type AgentInfo struct {
	Tier   string   `json:"tier,omitempty"`
	Spawns []string `json:"spawns,omitempty"`
	// Writes is true when the agent's policy lets it change state (Writes).
	Writes bool `json:"writes"`
}

// IsZero reports whether no context is known.
func (c *Context) IsZero() bool {
	return c.Agent == "" && c.Tier == "" && !c.Runtime && c.Spawns == nil && c.Skills == nil &&
		c.Placeholders == nil && c.Provenance == nil && c.Env == nil && c.Agents == nil
}

// MarshalJSON encodes the context as data.fullsend.context sees it, keeping an
// empty (non-nil) placeholder list, which means "none allowed".
func (c Context) MarshalJSON() ([]byte, error) {
	type plain Context
	raw, err := json.Marshal(plain(c))
	if err != nil {
		return nil, err
	}
	if c.Placeholders == nil || len(c.Placeholders) > 0 {
		return raw, nil
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	m["placeholders"] = []string{}
	return json.Marshal(m)
}

// DataDocument wraps the context as a data file for conftest/opa --data.
func (c Context) DataDocument() map[string]any {
	return map[string]any{"fullsend": map[string]any{"context": c}}
}

// value is the context as the rules see it: the value of its JSON
// (MarshalJSON), built directly, which spares a JSON encode and decode per
// policy. Contexts with invalid UTF-8 take the JSON route, whose escaping of
// such strings it does not copy. TestContextValue keeps the two equal.
func (c *Context) value() ast.Value { return c.valueWith(nil, nil) }

// sharedAgents holds the value of each distinct Context.Agents map of a
// Lint call, built once: ProjectInputs hands every agent the same map of
// all agents, whose value would otherwise be rebuilt for each of them
// (quadratic in the number of agents). Values are read-only once built.
type sharedAgents map[uintptr]*ast.Term

// shareAgents builds the agents value of every distinct map among inputs.
// Maps with strings that are not valid UTF-8 are left out: their contexts
// take the JSON route (value).
func shareAgents(inputs []Input) sharedAgents {
	out := sharedAgents{}
	for i := range inputs {
		a := inputs[i].Context.Agents
		if len(a) == 0 {
			continue
		}
		key := reflect.ValueOf(a).Pointer()
		if _, done := out[key]; done {
			continue
		}
		b := valueBuilder{}
		t := b.agents(a)
		if b.invalid {
			t = nil
		}
		out[key] = t
	}
	return out
}

// valueWith is value, taking the agents' value from shared when it holds
// the context's map, and the terms of strings and provenance sources from
// memo when it is not nil.
func (c *Context) valueWith(shared sharedAgents, memo *termMemo) ast.Value {
	if c.IsZero() {
		return ast.NewObject()
	}
	b := valueBuilder{memo: memo}
	obj := ast.NewObject()
	if c.Agent != "" {
		obj.Insert(ast.InternedTerm("agent"), b.str(c.Agent))
	}
	if c.Tier != "" {
		obj.Insert(ast.InternedTerm("tier"), b.str(c.Tier))
	}
	if c.Runtime {
		obj.Insert(ast.InternedTerm("runtime"), ast.BooleanTerm(true))
	}
	if len(c.Spawns) > 0 {
		obj.Insert(ast.InternedTerm("spawns"), b.strs(c.Spawns))
	}
	if len(c.Skills) > 0 {
		obj.Insert(ast.InternedTerm("skills"), b.strs(c.Skills))
	}
	if c.Placeholders != nil { // empty means none allowed (MarshalJSON)
		obj.Insert(ast.InternedTerm("placeholders"), b.strs(c.Placeholders))
	}
	if len(c.Provenance) > 0 {
		prov := ast.NewObject()
		for path, srcs := range c.Provenance {
			terms := make([]*ast.Term, len(srcs))
			for i, s := range srcs {
				terms[i] = b.source(s)
			}
			var t *ast.Term
			if srcs == nil {
				t = ast.NullTerm()
			} else {
				t = ast.ArrayTerm(terms...)
			}
			prov.Insert(b.str(path), t)
		}
		obj.Insert(ast.InternedTerm("provenance"), ast.NewTerm(prov))
	}
	if len(c.Env) > 0 {
		env := ast.NewObject()
		for k, v := range c.Env {
			env.Insert(b.str(k), b.str(v))
		}
		obj.Insert(ast.InternedTerm("env"), ast.NewTerm(env))
	}
	if len(c.Agents) > 0 {
		agents := shared[reflect.ValueOf(c.Agents).Pointer()]
		if agents == nil {
			agents = b.agents(c.Agents)
		}
		obj.Insert(ast.InternedTerm("agents"), agents)
	}
	if b.invalid {
		return c.jsonValue()
	}
	return obj
}

// valueBuilder makes string terms, noting strings that are not valid UTF-8.
type valueBuilder struct {
	invalid bool
	memo    *termMemo
}

// termMemo holds the terms of the strings and provenance sources already
// built by one Lint worker: the contexts of a project's agents repeat the
// same policy paths and sources (their runtime's and the catalog's
// baselines), which the memo builds once. Terms are read-only once built,
// so values may share them. It holds only valid UTF-8 strings.
type termMemo struct {
	strs    map[string]*ast.Term
	sources map[bundle.Source]*ast.Term
}

func newTermMemo() *termMemo {
	return &termMemo{strs: map[string]*ast.Term{}, sources: map[bundle.Source]*ast.Term{}}
}

// source is the value of one provenance source.
func (b *valueBuilder) source(s bundle.Source) *ast.Term {
	if b.memo != nil {
		if t, ok := b.memo.sources[s]; ok {
			return t
		}
	}
	o := ast.NewObject(ast.Item(ast.InternedTerm("file"), b.str(s.File)))
	if s.Line != 0 {
		o.Insert(ast.InternedTerm("line"), ast.IntNumberTerm(s.Line))
	}
	if s.Column != 0 {
		o.Insert(ast.InternedTerm("column"), ast.IntNumberTerm(s.Column))
	}
	o.Insert(ast.InternedTerm("reason"), b.str(s.Reason))
	t := ast.NewTerm(o)
	if b.memo != nil && utf8.ValidString(s.File) && utf8.ValidString(s.Reason) {
		b.memo.sources[s] = t
	}
	return t
}

// agents is the value of Context.Agents.
func (b *valueBuilder) agents(all map[string]AgentInfo) *ast.Term {
	agents := ast.NewObject()
	for name, a := range all {
		o := ast.NewObject()
		if a.Tier != "" {
			o.Insert(ast.InternedTerm("tier"), b.str(a.Tier))
		}
		if len(a.Spawns) > 0 {
			o.Insert(ast.InternedTerm("spawns"), b.strs(a.Spawns))
		}
		o.Insert(ast.InternedTerm("writes"), ast.BooleanTerm(a.Writes))
		agents.Insert(b.str(name), ast.NewTerm(o))
	}
	return ast.NewTerm(agents)
}

func (b *valueBuilder) str(s string) *ast.Term {
	if b.memo != nil {
		if t, ok := b.memo.strs[s]; ok {
			return t
		}
	}
	if !utf8.ValidString(s) {
		b.invalid = true
		return ast.StringTerm(s)
	}
	t := ast.StringTerm(s)
	if b.memo != nil {
		b.memo.strs[s] = t
	}
	return t
}

func (b *valueBuilder) strs(l []string) *ast.Term {
	terms := make([]*ast.Term, len(l))
	for i, s := range l {
		terms[i] = b.str(s)
	}
	return ast.ArrayTerm(terms...)
}

// jsonValue is value by way of the context's JSON.
func (c *Context) jsonValue() ast.Value {
	raw, err := json.Marshal(c)
	if err != nil {
		return ast.NewObject() // unreachable: the context is plain data
	}
	v, err := ast.ValueFromReader(bytes.NewReader(raw))
	if err != nil {
		return ast.NewObject()
	}
	return v
}

// Writes reports whether a policy lets any binary change state: an L4-only
// endpoint, access read-write or full, or a rule with a write method that is
// not a model inference call. It is the Go twin of the Rego lib.writes (a
// test keeps them equal).
func Writes(p *openshell.Policy) bool {
	for _, np := range p.NetworkPolicies {
		for i := range np.Endpoints {
			if EndpointWrites(&np.Endpoints[i]) {
				return true
			}
		}
	}
	return false
}

// EndpointWrites reports whether one endpoint lets a request change state.
func EndpointWrites(ep *openshell.Endpoint) bool {
	if !openshell.IsL7(ep) {
		return true
	}
	if writes, ok := accessWrites[ep.Access]; ok {
		return writes
	}
	for i := range ep.Rules {
		if ruleWrites(ep, &ep.Rules[i].Allow) {
			return true
		}
	}
	return false
}

// accessWrites says whether each access preset lets a request change
// state; without one, the rules decide.
var accessWrites = map[string]bool{openshell.AccessReadWrite: true, openshell.AccessFull: true, openshell.AccessReadOnly: false}

// ruleWrites reports whether an allow rule of an L7 endpoint without an
// access preset lets a request change state.
func ruleWrites(ep *openshell.Endpoint, m *openshell.Match) bool {
	if m.OperationType != "" {
		// GraphQL: a query reads, any other operation type writes.
		return !strings.EqualFold(m.OperationType, "query")
	}
	if mcpReadMethods[m.Method] && strings.EqualFold(ep.Protocol, openshell.ProtocolMCP) {
		return false
	}
	return !openshell.IsReadMethod(m.Method) && !inferenceRule(ep.Host, m)
}

// mcpReadMethods mirrors lib.mcp_read_methods: MCP methods that change
// nothing on the server (tools/call may, whatever the tool).
var mcpReadMethods = map[string]bool{
	"initialize": true, "notifications/initialized": true, "ping": true,
	"tools/list": true, "resources/list": true, "resources/templates/list": true, "resources/read": true,
	"prompts/list": true, "prompts/get": true,
}

// inferenceAPIs mirrors lib.inference_apis: model inference calls, which
// send prompts and change no state. Globs over the policy's host and rule
// path text.
var inferenceAPIs = []struct{ host, path string }{
	{"*.googleapis.com", "/v1/projects/*/locations/*/publishers/*/models/**"},
	{"*.googleapis.com", "/v1/projects/*/locations/*/publishers/*/models/*"},
	{"*.googleapis.com", "/token"},
	{"oauth2.googleapis.com", "/token"},
	{"api.anthropic.com", "/v1/messages"},
	{"api.anthropic.com", "/v1/messages/**"},
	{"api.openai.com", "/v1/responses"},
	{"api.openai.com", "/v1/chat/completions"},
	{"sts.googleapis.com", "/v1/token"},
	{"iamcredentials.googleapis.com", "/v1/projects/-/serviceAccounts/*"},
	{"bedrock-runtime.*.amazonaws.com", "/model/*/invoke"},
	{"bedrock-runtime.*.amazonaws.com", "/model/*/invoke-with-response-stream"},
	{"bedrock-runtime.*.amazonaws.com", "/model/*/converse"},
	{"bedrock-runtime.*.amazonaws.com", "/model/*/converse-stream"},
}

func inferenceRule(host string, m *openshell.Match) bool {
	if !strings.EqualFold(m.Method, "POST") {
		return false
	}
	h := openshell.NormalizeHost(host)
	for _, api := range inferenceGlobs() {
		if api.host.Match(h) && api.path.Match(m.Path) {
			return true
		}
	}
	return false
}

// inferenceGlobs are inferenceAPIs compiled as glob.match(host, ["."], _)
// and glob.match(path, ["/"], _), once: Writes runs for every agent of a
// project, and compiling the globs on every call was most of its cost.
var inferenceGlobs = sync.OnceValue(func() []struct{ host, path *glob.Rego } {
	out := make([]struct{ host, path *glob.Rego }, len(inferenceAPIs))
	for i, api := range inferenceAPIs {
		out[i].host = glob.CompileRego(api.host, []rune{'.'})
		out[i].path = glob.CompileRego(api.path, []rune{'/'})
	}
	return out
})

// DocumentValue renders a policy as the Rego value of its YAML document:
// the same keys, omissions and shapes openshell.Marshal emits and conftest
// parses, built directly (no YAML round trip) because it is the hot path.
func DocumentValue(p *openshell.Policy) ast.Value { return documentValue(p, nil) }

// documentValue is DocumentValue with the string terms from m when it is
// not nil: the policies of a project repeat their keys, hosts, paths and
// binaries.
func documentValue(p *openshell.Policy, m *termMemo) ast.Value {
	doc := ast.NewObject(ast.Item(m.str("version"), ast.IntNumberTerm(p.Version)))
	if fs := p.FilesystemPolicy; fs != nil {
		doc.Insert(m.str("filesystem_policy"), ast.ObjectTerm(
			ast.Item(m.str("include_workdir"), ast.BooleanTerm(fs.IncludeWorkdir)),
			ast.Item(m.str("read_only"), m.strList(fs.ReadOnly)),
			ast.Item(m.str("read_write"), m.strList(fs.ReadWrite)),
		))
	}
	if l := p.Landlock; l != nil {
		doc.Insert(m.str("landlock"), ast.ObjectTerm(ast.Item(m.str("compatibility"), m.str(l.Compatibility))))
	}
	if pr := p.Process; pr != nil {
		doc.Insert(m.str("process"), ast.ObjectTerm(
			ast.Item(m.str("run_as_user"), m.str(pr.RunAsUser)),
			ast.Item(m.str("run_as_group"), m.str(pr.RunAsGroup)),
		))
	}
	if len(p.NetworkPolicies) > 0 {
		nps := ast.NewObject()
		for key, np := range p.NetworkPolicies {
			eps := make([]*ast.Term, len(np.Endpoints))
			for i := range np.Endpoints {
				eps[i] = m.endpointTerm(&np.Endpoints[i])
			}
			bins := make([]*ast.Term, len(np.Binaries))
			for i, b := range np.Binaries {
				bins[i] = ast.ObjectTerm(ast.Item(m.str("path"), m.str(b.Path)))
			}
			nps.Insert(m.str(key), ast.ObjectTerm(
				ast.Item(m.str("name"), m.str(np.Name)),
				ast.Item(m.str("endpoints"), ast.ArrayTerm(eps...)),
				ast.Item(m.str("binaries"), ast.ArrayTerm(bins...)),
			))
		}
		doc.Insert(m.str("network_policies"), ast.NewTerm(nps))
	}
	return doc
}

func (m *termMemo) endpointTerm(ep *openshell.Endpoint) *ast.Term {
	o := ast.NewObject(ast.Item(m.str("host"), m.str(ep.Host)))
	if ep.Path != "" {
		o.Insert(m.str("path"), m.str(ep.Path))
	}
	if ep.Port != 0 {
		o.Insert(m.str("port"), ast.IntNumberTerm(ep.Port))
	}
	if len(ep.Ports) > 0 {
		ports := make([]*ast.Term, len(ep.Ports))
		for i, p := range ep.Ports {
			ports[i] = ast.IntNumberTerm(p)
		}
		o.Insert(m.str("ports"), ast.ArrayTerm(ports...))
	}
	for _, kv := range [][2]string{
		{"protocol", ep.Protocol}, {"tls", ep.TLS}, {"enforcement", ep.Enforcement}, {"access", ep.Access},
	} {
		if kv[1] != "" {
			o.Insert(m.str(kv[0]), m.str(kv[1]))
		}
	}
	if len(ep.Rules) > 0 {
		rules := make([]*ast.Term, len(ep.Rules))
		for i := range ep.Rules {
			rules[i] = ast.ObjectTerm(ast.Item(m.str("allow"), m.matchTerm(&ep.Rules[i].Allow)))
		}
		o.Insert(m.str("rules"), ast.ArrayTerm(rules...))
	}
	if len(ep.DenyRules) > 0 {
		rules := make([]*ast.Term, len(ep.DenyRules))
		for i := range ep.DenyRules {
			rules[i] = m.matchTerm(&ep.DenyRules[i])
		}
		o.Insert(m.str("deny_rules"), ast.ArrayTerm(rules...))
	}
	if len(ep.AllowedIPs) > 0 {
		o.Insert(m.str("allowed_ips"), m.strList(ep.AllowedIPs))
	}
	return ast.NewTerm(o)
}

func (tm *termMemo) matchTerm(m *openshell.Match) *ast.Term {
	o := ast.NewObject()
	for _, kv := range [][2]string{
		{"method", m.Method}, {"path", m.Path}, {"operation_type", m.OperationType}, {"operation_name", m.OperationName},
	} {
		if kv[1] != "" {
			o.Insert(tm.str(kv[0]), tm.str(kv[1]))
		}
	}
	if len(m.Fields) > 0 {
		o.Insert(tm.str("fields"), tm.strList(m.Fields))
	}
	if m.Command != "" {
		o.Insert(tm.str("command"), tm.str(m.Command))
	}
	if m.Tool != nil {
		o.Insert(tm.str("tool"), tm.matcherTerm(*m.Tool))
	}
	if len(m.Query) > 0 {
		q := ast.NewObject()
		keys := make([]string, 0, len(m.Query))
		for k := range m.Query {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			q.Insert(tm.str(k), tm.matcherTerm(m.Query[k]))
		}
		o.Insert(tm.str("query"), ast.NewTerm(q))
	}
	return ast.NewTerm(o)
}

// matcherTerm spells a matcher as the policy file does: a glob, or
// {any: [globs]}.
func (m *termMemo) matcherTerm(qm openshell.QueryMatch) *ast.Term {
	if len(qm.Any) > 0 {
		return ast.ObjectTerm(ast.Item(m.str("any"), m.strList(qm.Any)))
	}
	return m.str(qm.Glob)
}

// str is the term of s, from m when m is not nil and holds it.
func (m *termMemo) str(s string) *ast.Term {
	if m == nil {
		return ast.StringTerm(s)
	}
	if t, ok := m.strs[s]; ok {
		return t
	}
	t := ast.StringTerm(s)
	if utf8.ValidString(s) {
		m.strs[s] = t
	}
	return t
}

func (m *termMemo) strList(list []string) *ast.Term {
	terms := make([]*ast.Term, len(list))
	for i, s := range list {
		terms[i] = m.str(s)
	}
	return ast.ArrayTerm(terms...)
}
