package agentdef

import (
	"fmt"
	"net/netip"
	"path"
	"regexp"
	"strings"
	"unicode"

	"gopkg.in/yaml.v3"

	"github.com/fullsend-ai/agent-sandbox/placeholder"
)

// Sandbox declaration syntax. The compiler owns the semantics (tier caps,
// merging, catalog lookups); this file checks syntax and positions. The
// vocabularies (keys, tiers, protocols, ...) are generated from the input
// schemas (zz_generated_input.go).
var (
	identRE = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)
	// hostRE is a lowercase DNS name, optionally with a leading `*.` or `**.`.
	hostRE = regexp.MustCompile(`^(\*\*?\.)?([a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?\.)*[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)
)

// maxPathLen is OpenShell's limit on one filesystem path.
const maxPathLen = 4096

// sandbox decodes a `sandbox:` block: a mapping, or a string naming a
// policy fragment file relative to the declaring file's directory.
func (d *decoder) sandbox(n *yaml.Node, name string) *Sandbox {
	sb := &Sandbox{Pos: d.pos(n)}
	switch {
	case n.Kind == yaml.ScalarNode && n.Tag == "!!str":
		if d.relPath(n, name) {
			sb.PolicyFile, sb.PolicyFilePos = n.Value, d.pos(n)
		}
	case n.Kind == yaml.MappingNode:
		d.sandboxFields(sb, d.fields(n, name, sandboxKeys), name)
	default:
		d.errAt(d.pos(n), name, fmt.Sprintf("want a mapping or a policy file path, got a %s", kindName(n)),
			"write sandbox: {tier: read-only, endpoints: [...]} or sandbox: policies/agent.yaml")
	}
	return sb
}

// sandboxFields reads the fields f of a sandbox mapping into sb.
func (d *decoder) sandboxFields(sb *Sandbox, f map[string]field, name string) {
	if v, ok := f["tier"]; ok {
		d.sandboxTier(sb, v, fieldPath(name, "tier"))
	}
	if v, ok := f["provider"]; ok {
		d.sandboxProvider(sb, v, fieldPath(name, "provider"))
	}
	if v, ok := f["profiles"]; ok {
		sb.Profiles = d.profiles(v.value, fieldPath(name, "profiles"))
	}
	if v, ok := f["providers"]; ok {
		sb.Providers = d.providers(v.value, fieldPath(name, "providers"))
	}
	if v, ok := f["endpoints"]; ok {
		sb.Endpoints = d.endpoints(v.value, fieldPath(name, "endpoints"))
	}
	if v, ok := f["filesystem"]; ok {
		d.filesystem(sb, v.value, fieldPath(name, "filesystem"))
	}
	if v, ok := f["outputs"]; ok {
		sb.Outputs = d.absPaths(v.value, fieldPath(name, "outputs"), true)
	}
	if v, ok := f["spawn-widening"]; ok {
		sb.SpawnWidening = d.spawnWidening(v.value, fieldPath(name, "spawn-widening"))
	}
}

// sandboxTier reads the sandbox's tier.
func (d *decoder) sandboxTier(sb *Sandbox, v field, name string) {
	if s, good := d.enum(v.value, name, tiers...); good {
		sb.Tier, sb.TierPos = s, d.pos(v.value)
	}
}

// sandboxProvider reads the sandbox's inference provider.
func (d *decoder) sandboxProvider(sb *Sandbox, v field, name string) {
	if s, good := d.ident(v.value, name); good {
		sb.Provider, sb.ProviderPos = s, d.pos(v.value)
	}
}

// profiles reads a list of capability profile names.
func (d *decoder) profiles(n *yaml.Node, name string) []NameRef {
	var out []NameRef
	items, _ := d.stringList(n, name, false)
	for _, it := range items {
		if d.identItem(it) {
			out = append(out, NameRef{Name: it.value, Pos: d.pos(it.node)})
		}
	}
	return out
}

// endpoints reads a list of endpoint declarations, keeping the valid ones.
func (d *decoder) endpoints(n *yaml.Node, name string) []EndpointDecl {
	if n.Kind != yaml.SequenceNode {
		d.errAt(d.pos(n), name, fmt.Sprintf("want a list of endpoints, got a %s", kindName(n)), "")
		return nil
	}
	var out []EndpointDecl
	for i, e := range n.Content {
		if ep, ok := d.endpoint(e, fieldIndex(name, i)); ok {
			out = append(out, ep)
		}
	}
	return out
}

// filesystem reads the read_only and read_write paths; / may not be
// writable.
func (d *decoder) filesystem(sb *Sandbox, n *yaml.Node, name string) {
	if !d.mapping(n, name) {
		return
	}
	ff := d.fields(n, name, filesystemKeys)
	if x, ok := ff["read_only"]; ok {
		sb.ReadOnly = d.absPaths(x.value, fieldPath(name, "read_only"), true)
	}
	if x, ok := ff["read_write"]; ok {
		sb.ReadWrite = d.absPaths(x.value, fieldPath(name, "read_write"), true)
		for _, p := range sb.ReadWrite {
			if path.Clean(p.Path) == "/" {
				d.errAt(p.Pos, fieldPath(name, "read_write"), "/ may not be writable", "name the directories the agent writes")
			}
		}
	}
}

// ident reads a lowercase hyphenated identifier.
func (d *decoder) ident(n *yaml.Node, name string) (string, bool) {
	s, ok := d.str(n, name)
	if !ok {
		return "", false
	}
	return s, d.identItem(stringItem{value: s, node: n, field: name})
}

func (d *decoder) identItem(it stringItem) bool {
	if !identRE.MatchString(it.value) {
		d.errAt(d.pos(it.node), it.field, fmt.Sprintf("invalid name %q", it.value),
			"lowercase letters, digits and single hyphens, such as forge-read")
		return false
	}
	return true
}

// endpoint decodes one endpoint declaration.
func (d *decoder) endpoint(n *yaml.Node, name string) (EndpointDecl, bool) {
	ep := EndpointDecl{Pos: d.pos(n), Port: 443, Protocol: "rest"}
	if !d.mapping(n, name) {
		return ep, false
	}
	before := d.nerr
	f := d.fields(n, name, endpointKeys)
	if v, ok := f["host"]; ok {
		d.endpointHost(&ep, v, fieldPath(name, "host"))
	} else {
		d.errAt(d.pos(n), fieldPath(name, "host"), "missing required field host", "add host: api.example.com")
	}
	if v, ok := f["port"]; ok {
		d.endpointPort(&ep, v, fieldPath(name, "port"))
	}
	if v, ok := f["protocol"]; ok {
		d.endpointProtocol(&ep, v, fieldPath(name, "protocol"))
	}
	if v, ok := f["access"]; ok {
		d.endpointAccess(&ep, f, v, name)
	}
	if v, ok := f["rules"]; ok {
		ep.Rules = d.rules(v.value, fieldPath(name, "rules"))
	}
	if v, ok := f["allowed_ips"]; ok {
		ep.AllowedIPs = d.allowedIPs(v.value, fieldPath(name, "allowed_ips"))
	}
	if v, ok := f["binaries"]; ok {
		ep.Binaries = d.absPaths(v.value, fieldPath(name, "binaries"), false)
	}
	return ep, d.nerr == before
}

// endpointHost reads an endpoint's host.
func (d *decoder) endpointHost(ep *EndpointDecl, v field, name string) {
	if s, good := d.str(v.value, name); good && d.host(v.value, name, s) {
		ep.Host = s
	}
}

// endpointPort reads an endpoint's port.
func (d *decoder) endpointPort(ep *EndpointDecl, v field, name string) {
	if p, good := d.integer(v.value, name, 1, 65535); good {
		ep.Port = p
	}
}

// endpointProtocol reads an endpoint's protocol.
func (d *decoder) endpointProtocol(ep *EndpointDecl, v field, name string) {
	if s, good := d.enum(v.value, name, protocols...); good {
		ep.Protocol = s
	}
}

// endpointAccess reads an access preset, which excludes rules.
func (d *decoder) endpointAccess(ep *EndpointDecl, f map[string]field, v field, name string) {
	if s, good := d.enum(v.value, fieldPath(name, "access"), accesses...); good {
		ep.Access = s
	}
	if r, both := f["rules"]; both {
		d.errAt(d.pos(r.key), fieldPath(name, "rules"), "access and rules are exclusive",
			"use access for a preset or rules for METHOD /path allowances, not both")
	}
}

// rules reads a non-empty list of rules, keeping the valid ones.
func (d *decoder) rules(n *yaml.Node, name string) []RuleDecl {
	if n.Kind != yaml.SequenceNode {
		d.errAt(d.pos(n), name, fmt.Sprintf("want a list of rules, got a %s", kindName(n)), `write rules: ["GET /repos/**"]`)
		return nil
	}
	if len(n.Content) == 0 {
		d.errAt(d.pos(n), name, "rules is empty", "list at least one METHOD /path rule, or use access")
		return nil
	}
	var out []RuleDecl
	for i, r := range n.Content {
		if rd, good := d.rule(r, fieldIndex(name, i)); good {
			out = append(out, rd)
		}
	}
	return out
}

// allowedIPs reads the allowed_ips list, keeping the valid entries.
func (d *decoder) allowedIPs(n *yaml.Node, name string) []string {
	var out []string
	items, _ := d.stringList(n, name, false)
	for _, it := range items {
		if d.allowedIP(it) {
			out = append(out, it.value)
		}
	}
	return out
}

// host validates an endpoint host: a lowercase DNS name with an optional
// leading `*.`/`**.` label, an IP literal, or a host-typed placeholder.
func (d *decoder) host(n *yaml.Node, name, s string) bool {
	var msg, hint string
	if strings.Contains(s, "{{") {
		msg, hint = placeholderHostProblem(s)
	} else {
		msg, hint = HostProblem(s)
	}
	if msg != "" {
		d.errAt(d.pos(n), name, msg, hint)
		return false
	}
	return true
}

// placeholderHostProblem returns what is wrong with a host holding a
// placeholder, with a hint; "" when it is one host placeholder.
func placeholderHostProblem(s string) (msg, hint string) {
	if refs, err := placeholder.Find(s); err == nil && len(refs) > 0 && AllHostLabel(refs) {
		// {{GCP_REGION}}-aiplatform.googleapis.com: check the host with
		// example values in place.
		out, _, err := placeholder.Expand(s, placeholder.FieldHostLabel, placeholder.Examples())
		if err != nil {
			return err.Error(), "host-label placeholders are {{GCP_REGION}} and {{AWS_REGION}}"
		}
		return HostProblem(out)
	}
	if _, err := placeholder.Check(s, placeholder.FieldHost); err != nil {
		return err.Error(), "host placeholders are {{FORGE_HOST}} and {{HOST_IP}}, or {{GCP_REGION}} and {{AWS_REGION}} inside a label"
	}
	if refs, _ := placeholder.Find(s); len(refs) != 1 || refs[0].Start != 0 || refs[0].End != len(s) {
		return fmt.Sprintf("host %q mixes a placeholder with text", s), "a host placeholder must be the whole host"
	}
	return "", ""
}

// HostProblem returns what is wrong with a literal host, with a hint; ""
// for a valid DNS name or IP literal.
func HostProblem(s string) (msg, hint string) {
	switch {
	case s == "":
		return "host is empty", ""
	case strings.HasSuffix(s, "."):
		return fmt.Sprintf("host %q ends with a dot", s), "drop the trailing dot (OpenShell fails to load it)"
	case strings.ToLower(s) != s:
		return fmt.Sprintf("host %q has upper-case letters", s), "write " + strings.ToLower(s)
	case isIP(s):
		return "", ""
	case strings.ContainsAny(s, "/:@ "):
		return fmt.Sprintf("host %q is not a host name", s), "write the bare host; the port goes in port:, paths in rules:"
	case len(s) > 253 || !hostRE.MatchString(s):
		return fmt.Sprintf("invalid host %q", s), invalidHostHint(s)
	case strings.HasPrefix(s, "*") && strings.Count(s, ".") < 2:
		return fmt.Sprintf("wildcard host %q covers a whole top-level domain", s), "wildcard hosts need at least three labels, such as *.example.com"
	}
	return "", ""
}

// invalidHostHint is the hint for a host that is no DNS name.
func invalidHostHint(s string) string {
	if s == "*" || s == "**" {
		return "wildcard-only hosts allow the whole internet; name the hosts"
	}
	return "a DNS name such as api.github.com; wildcards only as the whole first label (*.example.com)"
}

func isIP(s string) bool {
	_, err := netip.ParseAddr(s)
	return err == nil
}

// allowedIP validates an allowed_ips entry: an IP or CIDR literal, or a
// placeholder allowed there ({{HOST_IP}}).
func (d *decoder) allowedIP(it stringItem) bool {
	s := it.value
	if strings.Contains(s, "{{") {
		if _, err := placeholder.Check(s, placeholder.FieldAllowedIP); err != nil {
			d.errAt(d.pos(it.node), it.field, err.Error(), `write allowed_ips: ["{{HOST_IP}}"]`)
			return false
		}
		return true
	}
	if _, err := netip.ParsePrefix(s); err == nil {
		return true
	}
	if isIP(s) {
		return true
	}
	d.errAt(d.pos(it.node), it.field, fmt.Sprintf("invalid allowed_ips entry %q", s),
		"an IP address or CIDR prefix such as 10.0.0.5/32, or {{HOST_IP}}")
	return false
}

// rule decodes one rule: "METHOD /path" or {method, path, query}.
func (d *decoder) rule(n *yaml.Node, name string) (RuleDecl, bool) {
	var rd RuleDecl
	var methodNode, pathNode *yaml.Node
	var ok bool
	switch {
	case n.Kind == yaml.ScalarNode && n.Tag == "!!str":
		rd, ok = d.ruleString(n, name)
		methodNode, pathNode = n, n
	case n.Kind == yaml.MappingNode:
		rd, methodNode, pathNode, ok = d.ruleMapping(n, name)
	default:
		d.errAt(d.pos(n), name, fmt.Sprintf("want \"METHOD /path\" or a mapping, got a %s", kindName(n)), "")
		return RuleDecl{Pos: d.pos(n)}, false
	}
	if !ok {
		return rd, false
	}
	if !containsString(httpMethods, rd.Method) {
		hint := "one of: " + strings.Join(httpMethods, ", ")
		if containsString(httpMethods, strings.ToUpper(rd.Method)) {
			hint = "methods are upper-case: " + strings.ToUpper(rd.Method)
		}
		d.errAt(d.pos(methodNode), fieldPath(name, "method"), fmt.Sprintf("invalid method %q", rd.Method), hint)
		return rd, false
	}
	if hint, err := checkAbsPath(rd.Path, true); err != nil {
		d.errAt(d.pos(pathNode), fieldPath(name, "path"), err.Error(), hint)
		return rd, false
	}
	return rd, true
}

// ruleString decodes the "METHOD /path" form of a rule, which has no query.
func (d *decoder) ruleString(n *yaml.Node, name string) (RuleDecl, bool) {
	rd := RuleDecl{Pos: d.pos(n)}
	method, p, ok := strings.Cut(strings.TrimSpace(n.Value), " ")
	if !ok {
		d.errAt(d.pos(n), name, fmt.Sprintf("rule %q is not METHOD /path", n.Value), `write "GET /repos/{{OWNER}}/{{REPO_NAME}}/issues/**"`)
		return rd, false
	}
	rd.Method, rd.Path = method, strings.TrimSpace(p)
	if strings.Contains(rd.Path, "?") {
		d.errAt(d.pos(n), name, fmt.Sprintf("rule %q has a query string in its path", n.Value),
			"use the mapping form: {method: GET, path: /search/issues, query: {q: \"*\"}}")
		return rd, false
	}
	return rd, true
}

// ruleMapping decodes the {method, path, query} form of a rule, with the
// nodes of its method and path.
func (d *decoder) ruleMapping(n *yaml.Node, name string) (rd RuleDecl, methodNode, pathNode *yaml.Node, ok bool) {
	rd = RuleDecl{Pos: d.pos(n)}
	f := d.fields(n, name, ruleKeys)
	m, okm := f["method"]
	p, okp := f["path"]
	if !okm || !okp {
		d.errAt(d.pos(n), name, "a rule needs method and path", "write {method: GET, path: /repos/**}")
		return rd, nil, nil, false
	}
	if rd.Method, ok = d.str(m.value, fieldPath(name, "method")); !ok {
		return rd, nil, nil, false
	}
	if rd.Path, ok = d.str(p.value, fieldPath(name, "path")); !ok {
		return rd, nil, nil, false
	}
	if q, has := f["query"]; has {
		if rd.Query, ok = d.ruleQuery(q.value, fieldPath(name, "query")); !ok {
			return rd, nil, nil, false
		}
	}
	return rd, m.value, p.value, true
}

// ruleQuery decodes a rule's query: parameter name -> glob, where the glob
// may hold path placeholders. On error it returns the entries read so far.
func (d *decoder) ruleQuery(n *yaml.Node, qname string) (map[string]string, bool) {
	if !d.mapping(n, qname) {
		return nil, false
	}
	query := map[string]string{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		vname := fieldPath(qname, k.Value)
		if k.Value == "" || strings.ContainsFunc(k.Value, unicode.IsSpace) {
			d.errAt(d.pos(k), vname, fmt.Sprintf("invalid query parameter name %q", k.Value), "")
			return query, false
		}
		val, good := d.str(v, vname)
		if !good {
			return query, false
		}
		if _, err := placeholder.Check(val, placeholder.FieldPath); err != nil {
			d.errAt(d.pos(v), vname, err.Error(), "query placeholders are {{OWNER}}, {{REPO_NAME}} and {{ISSUE_NUMBER}}")
			return query, false
		}
		query[k.Value] = val
	}
	return query, true
}

// absPaths reads a list of absolute paths. Placeholders are checked for
// path fields when allowed, and rejected otherwise.
func (d *decoder) absPaths(n *yaml.Node, name string, placeholders bool) []PathDecl {
	items, _ := d.stringList(n, name, false)
	var out []PathDecl
	for _, it := range items {
		if hint, err := checkAbsPath(it.value, placeholders); err != nil {
			d.errAt(d.pos(it.node), it.field, err.Error(), hint)
			continue
		}
		out = append(out, PathDecl{Path: it.value, Pos: d.pos(it.node)})
	}
	return out
}

// checkAbsPath validates an absolute path: leading '/', no '..' or '.'
// steps, no control characters, at most maxPathLen bytes, and only known
// path placeholders.
func checkAbsPath(p string, placeholders bool) (string, error) {
	switch {
	case p == "":
		return "write an absolute path such as /sandbox/out", fmt.Errorf("path is empty")
	case len(p) > maxPathLen:
		return "", fmt.Errorf("path is longer than %d bytes", maxPathLen)
	case !strings.HasPrefix(p, "/"):
		return "paths are absolute: start with /", fmt.Errorf("path %q is not absolute", p)
	case strings.ContainsFunc(p, unicode.IsControl):
		return "remove control characters", fmt.Errorf("path %q contains a control character", p)
	}
	if seg := dotStep(p); seg != "" {
		return "write the path without '.' or '..' steps", fmt.Errorf("path %q contains a %q step", p, seg)
	}
	if strings.Contains(p, "{{") {
		return checkPathPlaceholders(p, placeholders)
	}
	return "", nil
}

// dotStep returns the first '.' or '..' step of a slash-separated path, or
// "" when it has none.
func dotStep(p string) string {
	for _, seg := range strings.Split(p, "/") {
		if seg == ".." || seg == "." {
			return seg
		}
	}
	return ""
}

// checkPathPlaceholders validates the placeholders of path p: path
// placeholders where they are allowed, none elsewhere. It returns a hint
// with the error.
func checkPathPlaceholders(p string, placeholders bool) (string, error) {
	if !placeholders {
		return "placeholders are not allowed here", fmt.Errorf("path %q contains a placeholder", p)
	}
	if _, err := placeholder.Check(p, placeholder.FieldPath); err != nil {
		return "path placeholders are {{OWNER}}, {{REPO_NAME}} and {{ISSUE_NUMBER}}", err
	}
	return "", nil
}

// relPath validates a path relative to the declaring file's directory (a
// policy fragment): not absolute, no placeholders, and, once joined with
// that directory, still inside the project ('..' steps may climb out of the
// agent's or skill's directory, never out of the project root).
func (d *decoder) relPath(n *yaml.Node, name string) bool {
	if msg, hint := relPathProblem(d.file, n.Value); msg != "" {
		d.errAt(d.pos(n), name, msg, hint)
		return false
	}
	return true
}

// relPathProblem returns what is wrong with policy file path p, relative
// to the directory of file, with a hint; "" when it is fine.
func relPathProblem(file, p string) (msg, hint string) {
	switch {
	case strings.TrimSpace(p) == "":
		return "policy file path is empty", "name a policy fragment relative to this file, such as policies/triage.yaml"
	case strings.HasPrefix(p, "/") || strings.HasPrefix(p, "\\"):
		return fmt.Sprintf("policy file %q is absolute", p), "paths are relative to the declaring file's directory"
	case strings.ContainsFunc(p, unicode.IsControl) || strings.Contains(p, "{{") || strings.ContainsRune(p, '\\') || strings.Contains(p, "://"):
		return fmt.Sprintf("invalid policy file path %q", p), "a plain slash-separated relative path inside the project"
	}
	if joined := path.Join(path.Dir(file), p); joined == ".." || strings.HasPrefix(joined, "../") {
		return fmt.Sprintf("policy file %q leaves the project", p), "keep policy fragments inside the project"
	}
	return "", ""
}

// AllHostLabel reports whether every placeholder reference may stand inside
// a host label ({{GCP_REGION}}-aiplatform.googleapis.com).
func AllHostLabel(refs []placeholder.Ref) bool {
	for _, r := range refs {
		if !placeholder.Allowed(r.Name, placeholder.FieldHostLabel) {
			return false
		}
	}
	return true
}
