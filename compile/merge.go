package compile

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/fullsend-ai/agent-sandbox/agentdef"
	"github.com/fullsend-ai/agent-sandbox/agentdef/projectfile"
	"github.com/fullsend-ai/agent-sandbox/bundle"
	"github.com/fullsend-ai/agent-sandbox/openshell"
	"github.com/fullsend-ai/agent-sandbox/policycue"
	"gopkg.in/yaml.v3"
)

// fragmentLoader reads a file of the project by slash path.
type fragmentLoader func(name string) ([]byte, error)

// fragment merges the network policies of an OpenShell policy fragment (the
// form experiment 0005 and fullsend's skill `policy` field use) as
// contributions. Its static sections are ignored with a warning: they are the
// compiler's to emit.
func (b *builder) fragment(rel string, at agentdef.Pos, baseDir string, load fragmentLoader) {
	name, data, ok := b.loadFragment(rel, at, baseDir, load)
	if !ok {
		return
	}
	p, err := openshell.Unmarshal(data)
	if err != nil {
		b.errorf(agentdef.Pos{File: name, Line: 1}, "", "the fragment must be a valid OpenShell policy document", "%v", openshell.DecodeError(err))
		return
	}
	if p.FilesystemPolicy != nil || p.Process != nil || p.Landlock != nil {
		b.warnf(agentdef.Pos{File: name, Line: 1}, "filesystem_policy", "declare paths in the sandbox: block instead",
			"static sections of policy fragment %s are ignored; only network_policies are merged", name)
	}
	hosts, rules := fragmentHostPositions(name, data), fragmentRulePositions(name, data)
	for _, key := range p.PolicyKeys() {
		b.fragmentPolicy(name, key, p.NetworkPolicies[key], hosts[key], rules[key])
	}
}

// fragmentRulePositions returns, per network policy key and endpoint, the
// position in fragment name of each of the endpoint's rules (the line of
// its `- allow:`), so that a rule is blamed on its own line.
func fragmentRulePositions(name string, data []byte) map[string][][]agentdef.Pos {
	var doc yaml.Node
	if yaml.Unmarshal(data, &doc) != nil || len(doc.Content) == 0 {
		return nil
	}
	nps := mappingValue(doc.Content[0], "network_policies")
	if nps == nil || nps.Kind != yaml.MappingNode {
		return nil
	}
	out := map[string][][]agentdef.Pos{}
	for i := 0; i+1 < len(nps.Content); i += 2 {
		eps := mappingValue(nps.Content[i+1], "endpoints")
		if eps == nil || eps.Kind != yaml.SequenceNode {
			continue
		}
		for _, ep := range eps.Content {
			var at []agentdef.Pos
			if rs := mappingValue(ep, "rules"); rs != nil && rs.Kind == yaml.SequenceNode {
				for _, r := range rs.Content {
					at = append(at, agentdef.Pos{File: name, Line: r.Line, Column: r.Column})
				}
			}
			out[nps.Content[i].Value] = append(out[nps.Content[i].Value], at)
		}
	}
	return out
}

// loadFragment reads a fragment by a path relative to the file that names
// it; experiment 0005 wrote them relative to the project root, which is
// tried second. It returns the name the fragment was found under. A
// fragment that is, or lies under, a symbolic link is refused (see
// readNoLinks).
func (b *builder) loadFragment(rel string, at agentdef.Pos, baseDir string, load fragmentLoader) (string, []byte, bool) {
	for _, name := range []string{path.Join(baseDir, rel), path.Clean(rel)} {
		if strings.HasPrefix(rel, "/") || name == ".." || strings.HasPrefix(name, "../") {
			b.errorf(at, "sandbox", "keep policy fragments inside the project", "policy fragment %q leaves the project", rel)
			return "", nil, false
		}
		data, err := load(name)
		switch {
		case err == nil:
			return name, data, true
		case !errors.Is(err, fs.ErrNotExist):
			// Name the path only: a fragment that cannot be read (a
			// link, a special file) may not be the project's.
			hint := "a policy fragment must be a regular file of the project"
			if errors.Is(err, projectfile.ErrSymlink) {
				hint = "copy the fragment into the project instead of linking it"
			}
			b.errorf(at, "sandbox", hint, "policy fragment %s: %v", rel, err)
			return "", nil, false
		}
	}
	b.errorf(at, "sandbox", "the path is relative to the file that names it, or to the project root",
		"policy fragment %s: not found next to %s or in the project root", rel, baseDir)
	return "", nil, false
}

// fragmentPolicy adds the endpoints of one network policy of fragment name
// as contributions; endpoints with what the compiler does not merge (ports,
// tls, deny_rules) are errors.
func (b *builder) fragmentPolicy(name, key string, np openshell.NetworkPolicy, hostPos []agentdef.Pos, rulePos [][]agentdef.Pos) {
	bins := b.fragmentBinaries(name, key, np.Binaries)
	for i, ep := range np.Endpoints {
		at, from := fragmentSource(name, key, i, hostPos)
		if msg, hint := agentdef.HostProblem(ep.Host); msg != "" && !strings.Contains(ep.Host, "{{") {
			// OpenShell refuses the whole policy at load (a TLD wildcard
			// from v0.0.27, check_wildcard_host): report it here, at the
			// fragment's line, not in the compiled output.
			b.errorf(at, fmt.Sprintf("network_policies.%s.endpoints[%d].host", key, i), hint, "policy fragment %s: %s", name, msg)
			continue
		}
		if b.fragmentModelAPI(name, key, ep) {
			continue
		}
		if len(ep.Ports) > 0 || ep.TLS != "" || len(ep.DenyRules) > 0 {
			b.errorf(agentdef.Pos{File: name, Line: 1}, "network_policies."+key, "write one endpoint per port, without tls or deny_rules",
				"endpoint %s in policy fragment uses ports, tls or deny_rules, which the compiler does not merge", ep.Host)
			continue
		}
		var rules []agentdef.Pos
		if i < len(rulePos) {
			rules = rulePos[i]
		}
		b.contribs = append(b.contribs, fragmentContribution(ep, bins, from, rules))
	}
}

// fragmentSource is where endpoint i of the fragment's network policy key
// is written (its host's line, else the fragment's first line), as a
// position and as the source of what it grants.
func fragmentSource(name, key string, i int, hostPos []agentdef.Pos) (agentdef.Pos, bundle.Source) {
	from := bundle.Source{File: name, Reason: "policy fragment network_policies." + key}
	if i >= len(hostPos) {
		return agentdef.Pos{File: name, Line: 1}, from
	}
	at := hostPos[i]
	from.Line, from.Column = at.Line, at.Column
	return at, from
}

// fragmentContribution is a fragment endpoint as a contribution for bins,
// its rules keeping their own fields and taking their own line (rulePos,
// in order), else the endpoint's.
func fragmentContribution(ep openshell.Endpoint, bins []string, from bundle.Source, rulePos []agentdef.Pos) contribution {
	c := contribution{host: ep.Host, port: ep.Port, path: ep.Path, protocol: ep.Protocol, access: ep.Access,
		allowedIPs: ep.AllowedIPs, binaries: bins, from: from}
	for i, r := range ep.Rules {
		rf := from
		if i < len(rulePos) {
			rf.Line, rf.Column = rulePos[i].Line, rulePos[i].Column
		}
		r.From = []bundle.Source{rf}
		c.rules = append(c.rules, r)
	}
	return c
}

// endpointKey identifies a merged endpoint: host, port and the path that
// routes requests to it ("" for every path).
type endpointKey struct {
	host string
	port int
	path string
	// suffix names one binary set of a split endpoint (binary_split.go).
	suffix string
}

// compare orders endpoint keys by host, port, then path.
func (k endpointKey) compare(o endpointKey) int {
	return cmp.Or(cmp.Compare(k.host, o.host), cmp.Compare(k.port, o.port), cmp.Compare(k.path, o.path), cmp.Compare(k.suffix, o.suffix))
}

// presetMethods are the methods OpenShell's access presets allow; merging
// a preset with explicit rules spells the preset out.
var presetMethods = map[string][]string{
	openshell.AccessReadOnly:  {"GET", "HEAD", "OPTIONS"},
	openshell.AccessReadWrite: {"GET", "HEAD", "OPTIONS", "POST", "PUT", "PATCH"},
}

// network merges the contributions by host:port into network policies:
// one per endpoint, or one per set of binaries that get different rules
// there (binary_split.go). Contributions that disagree on protocol are an
// error naming both sources; access presets and rules union per binary.
func (b *builder) network() map[string]openshell.NetworkPolicy {
	groups, keys := groupContributions(b.contribs)
	out := map[string]openshell.NetworkPolicy{}
	for _, k := range keys {
		cs := groups[k]
		if !b.checkEndpoint(k, cs) {
			continue
		}
		sets := splitByBinary(cs)
		if len(sets) > 1 && !b.splittable(k, sets) {
			continue
		}
		for _, set := range sets {
			pk := k
			if len(sets) > 1 {
				pk = setKey(k, set)
			}
			key := freeKey(out, pk)
			out[key] = mergeEndpoint(pk, set, cs)
			if allBaseline(set.cs) {
				b.baselineKeys = append(b.baselineKeys, key)
			}
		}
	}
	return out
}

// splittable reports whether the binary sets of endpoint k can be told
// apart in OpenShell; an error at the first differing set's source when
// not.
func (b *builder) splittable(k endpointKey, sets []binarySet) bool {
	field := settingConflict(sets)
	if field == "" {
		return true
	}
	set, at := settingSource(sets)
	b.errorf(posOf(at), "sandbox.endpoints", "declare the same "+field+" for every binary of the endpoint, or give the binaries the same rules",
		"%s:%d: binaries %s get their own rules, which OpenShell holds in separate network policies only when %s agrees (find_endpoint_ambiguities, crates/openshell-policy/src/ambiguity.rs:51-117@v0.0.111); it does not, and the compiler will not widen one binary to another's",
		k.host, k.port, strings.Join(set.bins, ", "), field)
	return false
}

// groupContributions groups the contributions by endpoint (protocol rest
// and port 443 when they name none) and lists the endpoints sorted by
// host, port, then path.
func groupContributions(contribs []contribution) (map[endpointKey][]contribution, []endpointKey) {
	groups := map[endpointKey][]contribution{}
	for _, c := range contribs {
		c.protocol = cmp.Or(c.protocol, openshell.ProtocolREST)
		c.port = cmp.Or(c.port, 443)
		k := endpointKey{host: c.host, port: c.port, path: c.path}
		groups[k] = append(groups[k], c)
	}
	return groups, slices.SortedFunc(maps.Keys(groups), endpointKey.compare)
}

// freeKey is the network policy key of endpoint k that out does not hold
// yet. Two hosts may spell the same key (a-b.io and a.b.io): the suffix
// comes from the endpoint itself, so the key stays the same whatever else
// the policy holds.
func freeKey(out map[string]openshell.NetworkPolicy, k endpointKey) string {
	base := policyKey(k)
	key := base
	for i := 0; ; i++ {
		if _, taken := out[key]; !taken {
			return key
		}
		key = base + "_" + endpointHash(k, i)
	}
}

// allBaseline reports whether every contribution to an endpoint is the
// runtime's model API baseline.
func allBaseline(cs []contribution) bool {
	return !slices.ContainsFunc(cs, func(c contribution) bool { return !c.baseline })
}

// checkEndpoint checks that the contributions to endpoint k agree on
// protocol (an error naming both sources) and records the tiers they need.
func (b *builder) checkEndpoint(k endpointKey, cs []contribution) bool {
	first := cs[0]
	for _, c := range cs {
		if c.protocol != first.protocol {
			b.errorf(posOf(c.from), "sandbox.endpoints", "use one protocol per host:port",
				"%s:%d: protocol %q conflicts with %q from %s", k.host, k.port, c.protocol, first.protocol, first.from)
			return false
		}
	}
	for _, c := range cs {
		if !c.baseline {
			b.needEndpoint(k, c)
		}
	}
	return true
}

// mergeEndpoint builds the network policy of one binary set of endpoint
// k (set.bins nil: every binary); the connection settings (allowed_ips,
// allow_encoded_slash) come from every contribution to the endpoint, all,
// so the policies of a split endpoint agree on them.
func mergeEndpoint(k endpointKey, set binarySet, all []contribution) openshell.NetworkPolicy {
	m := endpointMerge{
		ep:   openshell.Endpoint{Host: k.host, Path: k.path, Port: k.port, Protocol: all[0].protocol, Enforcement: openshell.EnforcementEnforce},
		bins: map[string][]bundle.Source{},
		ips:  map[string]bool{},
	}
	for _, c := range set.cs {
		m.add(c, set.bins)
	}
	for _, c := range all {
		m.settings(c)
	}
	return m.policy(k, set.cs)
}

// endpointMerge accumulates the contributions to one endpoint.
type endpointMerge struct {
	ep       openshell.Endpoint
	bins     map[string][]bundle.Source
	ips      map[string]bool
	preset   string // the widest access preset
	hasRules bool
}

// add adds a contribution's rules, preset and sources, and those of its
// binaries that are among only (nil: all).
func (m *endpointMerge) add(c contribution, only []string) {
	m.ep.From = append(m.ep.From, c.from)
	for _, bin := range c.binaries {
		if only != nil && !slices.Contains(only, bin) {
			continue
		}
		m.bins[bin] = append(m.bins[bin], c.from)
		m.bins[bin] = append(m.bins[bin], c.binFrom[bin]...)
	}
	if len(c.rules) > 0 {
		m.hasRules = true
	}
	if c.access != "" && (m.preset == "" || c.access == openshell.AccessReadWrite) {
		m.preset = c.access
	}
}

// settings adds a contribution's connection settings.
func (m *endpointMerge) settings(c contribution) {
	for _, ip := range c.allowedIPs {
		m.ips[ip] = true
	}
	if c.allowEncodedSlash {
		m.ep.AllowEncodedSlash = true
	}
}

// policy builds the merged network policy: rules (presets spelled out)
// when any contribution has rules or none has a preset, else the preset;
// allowed_ips and binaries sorted.
func (m *endpointMerge) policy(k endpointKey, cs []contribution) openshell.NetworkPolicy {
	ep := m.ep
	if m.hasRules || m.preset == "" {
		ep.Rules = mergeRules(cs)
	} else {
		ep.Access = m.preset
	}
	for ip := range m.ips {
		ep.AllowedIPs = append(ep.AllowedIPs, ip)
	}
	sort.Strings(ep.AllowedIPs)
	np := openshell.NetworkPolicy{Name: policyName(k), Endpoints: []openshell.Endpoint{ep}, From: ep.From}
	paths := make([]string, 0, len(m.bins))
	for p := range m.bins {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		np.Binaries = append(np.Binaries, openshell.Binary{Path: p, From: dedupeSources(m.bins[p])})
	}
	return np
}

// needEndpoint records the tiers a contribution needs: network for the
// endpoint, full for a writing access preset or rule.
func (b *builder) needEndpoint(k endpointKey, c contribution) {
	b.need(policycue.TierNetwork, posOf(c.from), "endpoint %s:%d (%s)", k.host, k.port, c.from.Reason)
	if c.access == openshell.AccessReadWrite || c.access == openshell.AccessFull {
		b.need(policycue.TierFull, posOf(c.from), "access %s on %s:%d (%s)", c.access, k.host, k.port, c.from.Reason)
	}
	for _, r := range c.rules {
		if !ruleReads(r) {
			at := c.from
			if len(r.From) > 0 {
				at = r.From[0]
			}
			b.need(policycue.TierFull, posOf(at), "%s on %s:%d (%s)", ruleLabel(r.Allow), k.host, k.port, at.Reason)
		}
	}
}

// mergeRules unions the rules of all contributions, spelling out access
// presets, and sorts them by path, then method; identical rules merge their
// sources.
func mergeRules(cs []contribution) []openshell.Rule {
	merged := map[ruleKey]*openshell.Rule{}
	add := func(r openshell.Rule) {
		k := ruleKeyOf(r.Allow)
		if m, ok := merged[k]; ok {
			m.From = dedupeSources(append(m.From, r.From...))
			return
		}
		r.Allow.From = nil
		merged[k] = &r
	}
	for _, c := range cs {
		for _, r := range c.rules {
			add(r)
		}
		for _, m := range presetMethods[c.access] {
			add(openshell.Rule{Allow: openshell.Match{Method: m, Path: "/**"}, From: []bundle.Source{c.from}})
		}
	}
	keys := slices.SortedFunc(maps.Keys(merged), ruleKey.compare)
	rules := make([]openshell.Rule, 0, len(keys))
	for _, k := range keys {
		rules = append(rules, *merged[k])
	}
	return rules
}

// ruleKey identifies a rule in mergeRules: rules with the same key merge.
type ruleKey struct{ method, path, query, graphql, mcp string }

func ruleKeyOf(m openshell.Match) ruleKey {
	return ruleKey{m.Method, m.Path, queryKey(m.Query), graphQLKey(m), mcpRuleKey(m)}
}

// compare orders rules by path, then method, then their selectors.
func (k ruleKey) compare(o ruleKey) int {
	return cmp.Or(cmp.Compare(k.path, o.path), cmp.Compare(k.method, o.method),
		cmp.Compare(k.query, o.query), cmp.Compare(k.graphql, o.graphql), cmp.Compare(k.mcp, o.mcp))
}

func queryKey(q map[string]openshell.QueryMatch) string {
	var sb strings.Builder
	for _, k := range slices.Sorted(maps.Keys(q)) {
		fmt.Fprintf(&sb, "%s=%s|%s;", k, q[k].Glob, strings.Join(q[k].Any, ","))
	}
	return sb.String()
}

func dedupeSources(in []bundle.Source) []bundle.Source {
	seen := map[bundle.Source]bool{}
	out := in[:0:0]
	for _, s := range in {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	slices.SortStableFunc(out, func(a, b bundle.Source) int {
		return cmp.Or(cmp.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line))
	})
	return out
}

func isReadMethod(m string) bool {
	switch m {
	case "GET", "HEAD", "OPTIONS":
		return true
	}
	return false
}

// ruleReads reports whether an allow rule only reads: for a GraphQL rule a
// query, whatever its POST carries; else a rule marked Reads, or a GET,
// HEAD or OPTIONS.
func ruleReads(r openshell.Rule) bool {
	if r.Allow.OperationType != "" {
		return graphQLReads(r.Allow)
	}
	return r.Reads || isReadMethod(r.Allow.Method)
}

func posOf(s bundle.Source) agentdef.Pos {
	return agentdef.Pos{File: s.File, Line: s.Line, Column: s.Column}
}

// policyKey derives a stable network policy key from host:port:
// `*.googleapis.com:443` -> `wildcard_googleapis_com_443`, and a placeholder
// host from the placeholder's name: `{{FORGE_HOST}}:443` -> `forge_host_443`.
func policyKey(k endpointKey) string {
	key := keyPart(placeholderBraces.Replace(k.host)) + "_" + strconv.Itoa(k.port)
	if p := keyPart(k.path); p != "" {
		key += "_" + p
	}
	if k.suffix != "" {
		key += "_" + k.suffix
	}
	if strings.HasPrefix(key, "_provider_") {
		key = "ep" + key
	}
	return key
}

// placeholderBraces removes the braces of a placeholder host, so that its
// key is the placeholder's name: {{FORGE_HOST}} -> forge_host.
var placeholderBraces = strings.NewReplacer("{", "", "}", "")

// endpointHash is a short digest of host:port (and a round, should two
// digests ever meet) that tells apart hosts spelling the same key.
func endpointHash(k endpointKey, round int) string {
	id := k.host + ":" + strconv.Itoa(k.port) + k.path
	if k.suffix != "" {
		id += "|" + k.suffix
	}
	sum := sha256.Sum256([]byte(id + "#" + strconv.Itoa(round)))
	return hex.EncodeToString(sum[:4])
}

func policyName(k endpointKey) string {
	return strings.ReplaceAll(policyKey(k), "_", "-")
}

// filesystem builds the static filesystem section.
func (b *builder) filesystem(tier policycue.Tier) *openshell.FilesystemPolicy {
	fs := &openshell.FilesystemPolicy{Sources: map[string][]bundle.Source{}}
	// The workdir is writable only for agents that may write.
	fs.IncludeWorkdir = tier == policycue.TierFull
	if !fs.IncludeWorkdir {
		b.readOnly["/sandbox"] = append(b.readOnly["/sandbox"], src(b.agent.NamePos, "workdir, read-only below the full tier"))
	}
	for p, s := range b.readWrite {
		fs.ReadWrite = append(fs.ReadWrite, p)
		fs.Sources[p] = dedupeSources(s)
	}
	for p, s := range b.readOnly {
		if _, rw := b.readWrite[p]; rw {
			continue
		}
		fs.ReadOnly = append(fs.ReadOnly, p)
		fs.Sources[p] = dedupeSources(s)
	}
	sort.Strings(fs.ReadOnly)
	sort.Strings(fs.ReadWrite)
	return fs
}

// tier computes the agent's tier from what it needs and checks it against
// every declared cap; a need above a cap is an error at the need's position.
func (b *builder) tier() policycue.Tier {
	t := policycue.TierReadOnly
	for _, n := range b.needs {
		if n.tier.Rank() > t.Rank() {
			t = n.tier
		}
	}
	for _, c := range b.caps {
		for _, n := range b.needs {
			if n.tier.Rank() > c.tier.Rank() {
				b.errorf(n.pos, "", fmt.Sprintf("remove it, or raise sandbox.tier at %s", c.pos),
					"%s needs tier %s, above the agent's declared tier %s", n.what, n.tier, c.tier)
			}
		}
	}
	return t
}
