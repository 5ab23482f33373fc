package openshell

import (
	"fmt"
	"net/netip"
	"sort"

	"github.com/fullsend-ai/agent-sandbox/bundle"
	"github.com/fullsend-ai/agent-sandbox/placeholder"
)

// ApplyPlaceholders substitutes values into every field of p that may hold a
// placeholder, in place, and returns the names still open, sorted and
// deduplicated. It fails on an unknown placeholder, a placeholder in a field
// where it is not allowed, or a substitution that would leave an invalid value
// (an allowed_ips entry that is not a host-sized prefix, for example). Values
// are validated again, so ApplyPlaceholders is safe with values from any source.
func ApplyPlaceholders(p *Policy, v placeholder.Values) ([]string, error) {
	for name, value := range v {
		if err := placeholder.Validate(name, value); err != nil {
			return nil, err
		}
	}
	e := &expander{values: v, open: map[string]bool{}}
	if fs := p.FilesystemPolicy; fs != nil {
		if err := e.filesystem(fs); err != nil {
			return nil, err
		}
	}
	for _, key := range p.PolicyKeys() {
		np := p.NetworkPolicies[key]
		if err := e.networkPolicy(key, &np); err != nil {
			return nil, err
		}
		p.NetworkPolicies[key] = np
	}
	names := make([]string, 0, len(e.open))
	for n := range e.open {
		names = append(names, n)
	}
	sort.Strings(names)
	return names, nil
}

// expander substitutes values into the fields of one policy and collects the
// names left open.
type expander struct {
	values placeholder.Values
	open   map[string]bool
}

// expand substitutes into *s as a field of kind f; where names the field in
// errors.
func (e *expander) expand(where string, s *string, f placeholder.Field) error {
	out, left, err := expandField(*s, f, e.values)
	if err != nil {
		return fmt.Errorf("%s: %w", where, err)
	}
	*s = out
	for _, n := range left {
		e.open[n] = true
	}
	return nil
}

// filesystem expands the read-only and read-write paths, moving the
// provenance of a changed path to its new spelling.
func (e *expander) filesystem(fs *FilesystemPolicy) error {
	for _, list := range []struct {
		name  string
		paths []string
	}{{"read_only", fs.ReadOnly}, {"read_write", fs.ReadWrite}} {
		for i := range list.paths {
			old := list.paths[i]
			if err := e.expand(fmt.Sprintf("filesystem_policy.%s[%d]", list.name, i), &list.paths[i], placeholder.FieldPath); err != nil {
				return err
			}
			if src, ok := fs.Sources[old]; ok && old != list.paths[i] {
				delete(fs.Sources, old)
				fs.Sources[list.paths[i]] = src
			}
		}
	}
	return nil
}

// networkPolicy expands the endpoints of one network policy and rejects
// placeholders in its binaries.
func (e *expander) networkPolicy(key string, np *NetworkPolicy) error {
	for i := range np.Endpoints {
		if err := e.endpoint(fmt.Sprintf("network_policies.%s.endpoints[%d]", key, i), &np.Endpoints[i]); err != nil {
			return err
		}
	}
	for i := range np.Binaries {
		if err := checkNone(fmt.Sprintf("network_policies.%s.binaries[%d].path", key, i), np.Binaries[i].Path); err != nil {
			return err
		}
	}
	return nil
}

// endpoint expands the host, allowed_ips and rule matches of one endpoint;
// base is its path in errors.
func (e *expander) endpoint(base string, ep *Endpoint) error {
	if err := e.expand(base+".host", &ep.Host, placeholder.FieldHost); err != nil {
		return err
	}
	if err := e.expand(base+".path", &ep.Path, placeholder.FieldPath); err != nil {
		return err
	}
	for j := range ep.AllowedIPs {
		if err := e.expand(fmt.Sprintf("%s.allowed_ips[%d]", base, j), &ep.AllowedIPs[j], placeholder.FieldAllowedIP); err != nil {
			return err
		}
	}
	for j := range ep.Rules {
		if err := expandMatch(fmt.Sprintf("%s.rules[%d].allow", base, j), &ep.Rules[j].Allow, e.expand); err != nil {
			return err
		}
	}
	for j := range ep.DenyRules {
		if err := expandMatch(fmt.Sprintf("%s.deny_rules[%d]", base, j), &ep.DenyRules[j], e.expand); err != nil {
			return err
		}
	}
	return nil
}

// OpenPlaceholders returns the placeholders still present in p without
// changing it.
func OpenPlaceholders(p *Policy) ([]string, error) {
	return ApplyPlaceholders(p.Clone(), nil)
}

func expandMatch(where string, m *Match, expand func(string, *string, placeholder.Field) error) error {
	if err := checkNone(where+".method", m.Method); err != nil {
		return err
	}
	if err := expand(where+".path", &m.Path, placeholder.FieldPath); err != nil {
		return err
	}
	for _, c := range []struct{ name, v string }{
		{"command", m.Command}, {"operation_type", m.OperationType},
	} {
		if err := checkNone(where+"."+c.name, c.v); err != nil {
			return err
		}
	}
	if err := expand(where+".operation_name", &m.OperationName, placeholder.FieldPath); err != nil {
		return err
	}
	for i := range m.Fields {
		if err := expand(fmt.Sprintf("%s.fields[%d]", where, i), &m.Fields[i], placeholder.FieldPath); err != nil {
			return err
		}
	}
	for _, k := range sortedKeys(m.Query) {
		if err := checkNone(where+".query", k); err != nil {
			return err
		}
		q := m.Query[k]
		if err := expandQuery(where+".query."+k, &q, expand); err != nil {
			return err
		}
		m.Query[k] = q
	}
	if m.Tool != nil {
		if err := expandQuery(where+".tool", m.Tool, expand); err != nil {
			return err
		}
	}
	return expandParams(where+".params", m.Params, expand)
}

// expandQuery expands a glob-or-any matcher (query values, MCP tool).
func expandQuery(where string, q *QueryMatch, expand func(string, *string, placeholder.Field) error) error {
	if err := expand(where, &q.Glob, placeholder.FieldPath); err != nil {
		return err
	}
	for i := range q.Any {
		if err := expand(fmt.Sprintf("%s.any[%d]", where, i), &q.Any[i], placeholder.FieldPath); err != nil {
			return err
		}
	}
	return nil
}

// expandParams expands JSON-RPC/MCP params matchers, nested objects too;
// keys may hold no placeholder.
func expandParams(where string, ps map[string]ParamMatch, expand func(string, *string, placeholder.Field) error) error {
	for _, k := range sortedKeys(ps) {
		if err := checkNone(where, k); err != nil {
			return err
		}
		p := ps[k]
		if p.Matcher != nil {
			if err := expandQuery(where+"."+k, p.Matcher, expand); err != nil {
				return err
			}
		}
		if err := expandParams(where+"."+k, p.Object, expand); err != nil {
			return err
		}
		ps[k] = p
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// checkNone rejects any placeholder in a field that may hold none.
func checkNone(where, s string) error {
	refs, err := placeholder.Find(s)
	if err != nil {
		return fmt.Errorf("%s: %w", where, err)
	}
	if len(refs) > 0 {
		return fmt.Errorf("%s: %w: {{%s}} may not appear here", where, placeholder.ErrField, refs[0].Name)
	}
	return nil
}

// expandField expands s for a field kind, enforcing the per-kind shape rules:
// in a host a placeholder must be the whole value; in allowed_ips {{HOST_IP}}
// becomes a single-address prefix.
func expandField(s string, f placeholder.Field, v placeholder.Values) (string, []string, error) {
	refs, err := placeholder.Find(s)
	if err != nil || len(refs) == 0 {
		return s, nil, err
	}
	switch f {
	case placeholder.FieldHost:
		if hostLabelPlaceholders(s, refs) {
			// {{GCP_REGION}}-aiplatform.googleapis.com: the values are
			// validated DNS label fragments (no dot, no glob).
			return placeholder.Expand(s, placeholder.FieldHostLabel, v)
		}
		if len(refs) != 1 || refs[0].Start != 0 || refs[0].End != len(s) {
			return "", nil, fmt.Errorf("%w: a host placeholder must be the whole host, got %q", placeholder.ErrField, s)
		}
	case placeholder.FieldAllowedIP:
		if len(refs) != 1 || refs[0].Start != 0 {
			return "", nil, fmt.Errorf("%w: write {{HOST_IP}} or {{HOST_IP}}/32 as the whole entry, got %q", placeholder.ErrField, s)
		}
	}
	out, open, err := placeholder.Expand(s, f, v)
	if err != nil || len(open) > 0 || f != placeholder.FieldAllowedIP {
		return out, open, err
	}
	return hostPrefix(out)
}

// hostPrefix turns an expanded allowed_ips entry into a single-address
// prefix: "a.b.c.d" -> "a.b.c.d/32", and rejects any broader prefix.
func hostPrefix(s string) (string, []string, error) {
	if a, err := netip.ParseAddr(s); err == nil {
		return netip.PrefixFrom(a, a.BitLen()).String(), nil, nil
	}
	pfx, err := netip.ParsePrefix(s)
	if err != nil {
		return "", nil, fmt.Errorf("%w: %q is not an address or prefix", placeholder.ErrInvalidValue, s)
	}
	if pfx.Bits() != pfx.Addr().BitLen() {
		return "", nil, fmt.Errorf("%w: %q: {{HOST_IP}} stands for one host: use /%d", placeholder.ErrField, s, pfx.Addr().BitLen())
	}
	return pfx.String(), nil, nil
}

// Clone returns a deep copy of the parts of p that ApplyPlaceholders
// mutates, so callers can substitute runtime values without touching the
// compiled model.
func (p *Policy) Clone() *Policy {
	cp := *p
	if p.FilesystemPolicy != nil {
		fs := *p.FilesystemPolicy
		fs.ReadOnly = append([]string(nil), fs.ReadOnly...)
		fs.ReadWrite = append([]string(nil), fs.ReadWrite...)
		fs.Sources = map[string][]bundle.Source{}
		for k, s := range p.FilesystemPolicy.Sources {
			fs.Sources[k] = s
		}
		cp.FilesystemPolicy = &fs
	}
	cp.NetworkPolicies = make(map[string]NetworkPolicy, len(p.NetworkPolicies))
	for k, np := range p.NetworkPolicies {
		eps := make([]Endpoint, len(np.Endpoints))
		for i, ep := range np.Endpoints {
			eps[i] = ep.clone()
		}
		np.Endpoints = eps
		cp.NetworkPolicies[k] = np
	}
	if p.NetworkMiddlewares != nil {
		cp.NetworkMiddlewares = make(map[string]NetworkMiddleware, len(p.NetworkMiddlewares))
		for k, mw := range p.NetworkMiddlewares {
			mw.Config, _ = cloneValue(mw.Config).(map[string]any)
			if mw.Endpoints != nil {
				sel := MiddlewareSelector{
					Include: append([]string(nil), mw.Endpoints.Include...),
					Exclude: append([]string(nil), mw.Endpoints.Exclude...),
				}
				mw.Endpoints = &sel
			}
			cp.NetworkMiddlewares[k] = mw
		}
	}
	return &cp
}

// clone returns a deep copy of ep: no slice, map or pointer is shared.
func (ep Endpoint) clone() Endpoint {
	ep.Ports = append([]int(nil), ep.Ports...)
	ep.AllowedIPs = append([]string(nil), ep.AllowedIPs...)
	ep.Rules = append([]Rule(nil), ep.Rules...)
	for j := range ep.Rules {
		ep.Rules[j].Allow = ep.Rules[j].Allow.clone()
	}
	ep.DenyRules = append([]Match(nil), ep.DenyRules...)
	for j := range ep.DenyRules {
		ep.DenyRules[j] = ep.DenyRules[j].clone()
	}
	if ep.GraphQLPersistedQueries != nil {
		ops := make(map[string]GraphQLOperation, len(ep.GraphQLPersistedQueries))
		for k, op := range ep.GraphQLPersistedQueries {
			op.Fields = append([]string(nil), op.Fields...)
			ops[k] = op
		}
		ep.GraphQLPersistedQueries = ops
	}
	if ep.CredentialBinding != nil {
		cb := *ep.CredentialBinding
		ep.CredentialBinding = &cb
	}
	if ep.JSONRPC != nil {
		j := *ep.JSONRPC
		ep.JSONRPC = &j
	}
	if ep.MCP != nil {
		m := *ep.MCP
		m.StrictToolNames = cloneBool(m.StrictToolNames)
		m.AllowAllKnownMCPMethods = cloneBool(m.AllowAllKnownMCPMethods)
		ep.MCP = &m
	}
	return ep
}

// clone returns a deep copy of m.
func (m Match) clone() Match {
	m.Query = cloneQuery(m.Query)
	m.Fields = append([]string(nil), m.Fields...)
	if m.Tool != nil {
		t := *m.Tool
		t.Any = append([]string(nil), t.Any...)
		m.Tool = &t
	}
	m.Params = cloneParams(m.Params)
	return m
}

func cloneParams(ps map[string]ParamMatch) map[string]ParamMatch {
	if ps == nil {
		return nil
	}
	out := make(map[string]ParamMatch, len(ps))
	for k, p := range ps {
		if p.Matcher != nil {
			q := *p.Matcher
			q.Any = append([]string(nil), q.Any...)
			p.Matcher = &q
		}
		p.Object = cloneParams(p.Object)
		out[k] = p
	}
	return out
}

func cloneBool(b *bool) *bool {
	if b == nil {
		return nil
	}
	v := *b
	return &v
}

// cloneValue deep-copies decoded YAML/JSON data (maps, lists, scalars).
func cloneValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		if x == nil {
			return x
		}
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = cloneValue(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = cloneValue(e)
		}
		return out
	default:
		return v
	}
}

func cloneQuery(q map[string]QueryMatch) map[string]QueryMatch {
	if q == nil {
		return nil
	}
	out := make(map[string]QueryMatch, len(q))
	for k, m := range q {
		m.Any = append([]string(nil), m.Any...)
		out[k] = m
	}
	return out
}

// hostLabelPlaceholders reports whether every placeholder of host s is a
// host-label placeholder ({{GCP_REGION}}, {{AWS_REGION}}) inside a label
// of an otherwise literal host.
func hostLabelPlaceholders(s string, refs []placeholder.Ref) bool {
	for _, r := range refs {
		if !placeholder.Allowed(r.Name, placeholder.FieldHostLabel) {
			return false
		}
	}
	return len(refs) > 0
}
