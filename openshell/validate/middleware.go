package validate

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/fullsend-ai/agent-sandbox/openshell"
	"github.com/fullsend-ai/agent-sandbox/openshell/glob"

	"gopkg.in/yaml.v3"
)

// network_middlewares (v0.0.86 and later) as OpenShell checks it at load:
// the serde shape of NetworkMiddlewareConfigDef (deny_unknown_fields,
// openshell-policy/src/middleware.rs:23-50 @ v0.0.111) and the structural
// rules of middleware::validate (middleware.rs:202-312 @ v0.0.111, called
// by validate_sandbox_policy at lib.rs:1564, which the gateway and the
// supervisor both run). Whether the named middleware is registered with
// the gateway, and its implementation-owned config, depend on the gateway
// (openshell-server/src/middleware.rs:9) and are not modelled.

// OpenShell's middleware limits (openshell-core/src/middleware.rs:267-271 @
// v0.0.111).
const (
	maxMiddlewareConfigs          = 10
	maxMiddlewareSelectorPatterns = 32
)

// middlewareDef is the shape of one middleware entry except order (an
// i32) and config (any JSON object), which checkMiddlewareEntry checks by
// hand.
var (
	middlewareDef = &structDef{name: "network middleware", fields: []fieldDef{
		{name: "name", kind: kString},
		{name: "middleware", kind: kString, required: true},
		{name: "order", kind: kString},
		{name: "config", kind: kString},
		{name: "on_error", kind: kString},
		{name: "endpoints", kind: kStruct, def: middlewareSelectorDef, nullable: true},
	}}
	middlewareSelectorDef = &structDef{name: "endpoints", fields: []fieldDef{
		{name: "include", kind: kStringList},
		{name: "exclude", kind: kStringList},
	}}
)

// middleware is one walked network_middlewares entry.
type middleware struct {
	key       string
	keyNode   *yaml.Node
	o         *obj
	order     int64
	orderNode *yaml.Node
	config    *yaml.Node // the config mapping, nil when absent or null
}

// checkMiddlewares checks network_middlewares.
func (c *checker) checkMiddlewares(p *obj) {
	n := p.vals["network_middlewares"]
	if n == nil || n.Kind != yaml.MappingNode {
		return
	}
	var mws []middleware
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := resolveAlias(n.Content[i]), resolveAlias(n.Content[i+1])
		if k == nil || v == nil || v.Kind != yaml.MappingNode {
			continue // reported by the shape walk
		}
		if mw, ok := c.walkMiddleware(k, v, joinPath("network_middlewares", k.Value)); ok {
			// A repeated key replaces the earlier entry (a BTreeMap,
			// openshell-policy/src/lib.rs:68 @ v0.0.111; the trap is reported by the
			// shape walk, walkValueMap).
			mws = slices.DeleteFunc(mws, func(m middleware) bool { return m.key == mw.key })
			mws = append(mws, mw)
		}
	}
	if len(mws) > maxMiddlewareConfigs {
		c.errorf(n, "network_middlewares", CodeMiddleware, fmt.Sprintf("keep at most %d middlewares", maxMiddlewareConfigs),
			"too many middleware configs (%d > %d); OpenShell rejects the policy", len(mws), maxMiddlewareConfigs)
	}
	// middleware::validate walks the configs sorted by key
	// (middleware.rs:211-212 @ v0.0.111).
	sort.SliceStable(mws, func(i, j int) bool { return mws[i].key < mws[j].key })
	orders := map[int64]string{}
	for _, mw := range mws {
		c.checkMiddleware(p, mw, orders)
	}
}

// walkMiddleware type-checks one entry: the struct walk without order and
// config, which are checked here.
func (c *checker) walkMiddleware(k, v *yaml.Node, path string) (middleware, bool) {
	mw := middleware{key: k.Value, keyNode: k}
	rest := &yaml.Node{Kind: yaml.MappingNode, Line: v.Line, Column: v.Column}
	configSeen := false
	for i := 0; i+1 < len(v.Content); i += 2 {
		fk, fv := resolveAlias(v.Content[i]), resolveAlias(v.Content[i+1])
		if fk == nil || fv == nil {
			continue
		}
		switch fk.Value {
		case "order":
			if mw.orderNode != nil {
				c.errorf(fk, joinPath(path, "order"), CodeDuplicateKey, "keep one", "duplicate key %q", "order")
				continue
			}
			mw.orderNode = fv
			mw.order = c.middlewareOrder(fv, joinPath(path, "order"))
			continue
		case "config":
			if configSeen {
				c.errorf(fk, joinPath(path, "config"), CodeDuplicateKey, "keep one", "duplicate key %q", "config")
				continue
			}
			configSeen = true
			if fv.Kind != yaml.MappingNode && !(fv.Kind == yaml.ScalarNode && fv.ShortTag() == "!!null") {
				c.errorf(fv, joinPath(path, "config"), CodeType, "", "config must be a mapping, got %s", describe(fv))
			} else if fv.Kind == yaml.MappingNode {
				mw.config = fv
				c.configKeys(fv, joinPath(path, "config"))
			}
			continue
		}
		rest.Content = append(rest.Content, fk, fv)
	}
	o := c.walkStruct(rest, path, middlewareDef)
	if o == nil {
		return mw, false
	}
	mw.o = o
	return mw, true
}

// middlewareOrder checks an i32 order and returns it (0 when invalid).
func (c *checker) middlewareOrder(v *yaml.Node, path string) int64 {
	if v.Kind != yaml.ScalarNode || !isPlain(v) {
		c.errorf(v, path, CodeType, "write a plain integer", "order must be an integer, got %s", describe(v))
		return 0
	}
	if v.ShortTag() == "!!null" {
		c.errorf(v, path, CodeType, "give a value or remove the key", "order must be an integer, got null")
		return 0
	}
	n, err := strconv.ParseInt(strings.TrimPrefix(v.Value, "+"), 10, 32)
	if err != nil {
		c.errorf(v, path, CodeType, "", "order must be an integer between -2147483648 and 2147483647, got %s", v.Value)
		return 0
	}
	return n
}

// checkMiddleware applies middleware::validate's rules to one entry
// (middleware.rs:213-309 @ v0.0.111).
func (c *checker) checkMiddleware(p *obj, mw middleware, orders map[int64]string) {
	o, path := mw.o, joinPath("network_middlewares", mw.key)
	if mw.key == "" {
		c.errorf(mw.keyNode, path, CodeMiddleware, "give the middleware a key", "middleware config name must not be empty")
	}
	if first, dup := orders[mw.order]; dup {
		n := mw.orderNode
		if n == nil {
			n = o.node
		}
		c.errorf(n, joinPath(path, "order"), CodeMiddlewareOrder, "give every middleware its own order (an omitted order is 0)",
			"middlewares %q and %q use the same order %d; OpenShell rejects the policy", first, mw.key, mw.order)
	} else {
		orders[mw.order] = mw.key
	}
	if o.has("middleware") && o.str("middleware") == "" {
		c.errorf(o.pos("middleware"), o.sub("middleware"), CodeMiddleware, "name the middleware implementation, e.g. openshell/regex", "middleware must not be empty")
	}
	c.checkBuiltinMiddleware(mw, path)
	onErr := o.str("on_error")
	if onErr != "" && onErr != "fail_closed" && onErr != "fail_open" {
		c.errorf(o.pos("on_error"), o.sub("on_error"), CodeMiddleware, "use fail_closed (the default) or fail_open", "invalid on_error %q", onErr)
	}
	sel := o.kids["endpoints"]
	if sel == nil {
		if !o.broken("endpoints") {
			c.errorf(o.pos("endpoints"), o.sub("endpoints"), CodeMiddlewareSelector, "add endpoints: {include: [api.example.com]}",
				"middleware %q has no endpoint selector, which OpenShell requires", mw.key)
		}
		return
	}
	include, incNodes := sel.strs("include")
	exclude, excNodes := sel.strs("exclude")
	if len(include) == 0 {
		c.errorf(sel.pos("include"), sel.sub("include"), CodeMiddlewareSelector, "list at least one host pattern under include",
			"endpoint selector must include at least one host pattern")
	}
	if n := len(include) + len(exclude); n > maxMiddlewareSelectorPatterns {
		c.errorf(sel.node, sel.path, CodeMiddlewareSelector, fmt.Sprintf("keep at most %d include and exclude patterns", maxMiddlewareSelectorPatterns),
			"middleware %q has too many selector patterns (%d > %d)", mw.key, n, maxMiddlewareSelectorPatterns)
		return
	}
	valid := len(include) > 0
	var incs, excs []*hostPattern
	for i, s := range append(append([]string{}, include...), exclude...) {
		node, field, idx := incNodes, "include", i
		if i >= len(include) {
			node, field, idx = excNodes, "exclude", i-len(include)
		}
		hp, reason := newHostPattern(s)
		if reason != "" {
			valid = false
			c.errorf(node[idx], fmt.Sprintf("%s[%d]", sel.sub(field), idx), CodeMiddlewareSelector, "write a DNS host pattern such as api.example.com, *.example.com or **.example.com",
				"endpoint selector pattern %q is invalid: %s", s, reason)
			continue
		}
		if field == "include" {
			incs = append(incs, hp)
		} else {
			excs = append(excs, hp)
		}
	}
	if valid && (onErr == "" || onErr == "fail_closed") {
		c.checkMiddlewareTLSSkip(p, mw.key, o, &hostSelector{includes: incs, excludes: excs})
	}
}

// checkMiddlewareTLSSkip reports tls: skip endpoints a fail-closed
// middleware may select: it could never inspect them
// (middleware.rs:286-308 @ v0.0.111).
func (c *checker) checkMiddlewareTLSSkip(p *obj, key string, o *obj, sel *hostSelector) {
	for _, e := range p.maps["network_policies"] {
		name := e.val.str("name")
		if name == "" {
			name = e.key
		}
		for _, ep := range e.val.lists["endpoints"] {
			if ep.str("tls") != openshell.TLSSkip {
				continue
			}
			cand, reason := newHostPattern(ep.str("host"))
			if reason != "" || !sel.mayMatchPattern(cand) {
				continue
			}
			c.errorf(ep.pos("tls"), ep.sub("tls"), CodeMiddlewareTLSSkip, "narrow the middleware's endpoints (exclude this host), drop tls: skip, or set on_error: fail_open",
				"middleware %q selects network policy %q tls: skip endpoint %q, which it could never inspect; OpenShell rejects the policy", key, name, ep.str("host"))
		}
	}
}

// hostPattern is OpenShell's DNS-label-aware host pattern
// (openshell-core/src/host_pattern.rs:16-223 @ v0.0.111): a `**` label
// consumes one or more labels, any other label is a glob::Pattern.
type hostPattern struct {
	source string
	labels []hostLabel
}

type hostLabel struct {
	recursive bool
	source    string
	pat       glob.RustPattern
	literal   bool
}

// newHostPattern mirrors HostPattern::new (host_pattern.rs:91-128); the
// reason is "" when the pattern is valid.
func newHostPattern(p string) (*hostPattern, string) {
	switch {
	case p == "":
		return nil, "host pattern must not be empty"
	case strings.ContainsFunc(p, isRustWhitespace):
		return nil, "host pattern must not contain whitespace"
	case strings.ContainsAny(p, "{}"):
		return nil, "host pattern must not contain brace alternates; list each host pattern separately"
	}
	src := asciiLower(p)
	hp := &hostPattern{source: src}
	for _, l := range strings.Split(src, ".") {
		if l == "" {
			return nil, "host pattern must not contain empty DNS labels"
		}
	}
	for _, l := range strings.Split(src, ".") {
		if l == "**" {
			hp.labels = append(hp.labels, hostLabel{recursive: true})
			continue
		}
		pat, ok := glob.ParseRust(l)
		if !ok {
			return nil, fmt.Sprintf("invalid host pattern: label %q is not a valid glob", l)
		}
		hp.labels = append(hp.labels, hostLabel{source: l, pat: pat, literal: !strings.ContainsAny(l, "*?[")})
	}
	return hp, ""
}

// isRustWhitespace is char::is_whitespace (Unicode White_Space).
func isRustWhitespace(r rune) bool {
	switch r {
	case ' ', '\t', '\n', '\v', '\f', '\r', 0x85, 0xA0, 0x1680, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000:
		return true
	}
	return r >= 0x2000 && r <= 0x200A
}

// asciiLower is str::to_ascii_lowercase.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

func (h *hostPattern) literalHost() (string, bool) {
	for _, l := range h.labels {
		if l.recursive || !l.literal {
			return "", false
		}
	}
	return h.source, true
}

func (h *hostPattern) universal() bool { return len(h.labels) == 1 && h.labels[0].recursive }

// matches mirrors HostPattern::matches (host_pattern.rs:131-168).
func (h *hostPattern) matches(host string) bool {
	labels := strings.Split(asciiLower(host), ".")
	for _, l := range labels {
		if l == "" {
			return false
		}
	}
	type st struct{ p, h int }
	seen := map[st]bool{}
	stack := []st{{0, 0}}
	for len(stack) > 0 {
		s := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[s] {
			continue
		}
		seen[s] = true
		if s.p == len(h.labels) && s.h == len(labels) {
			return true
		}
		if s.p >= len(h.labels) || s.h >= len(labels) {
			continue
		}
		l := h.labels[s.p]
		if l.recursive {
			stack = append(stack, st{s.p + 1, s.h + 1}, st{s.p, s.h + 1})
		} else if l.pat.Match(labels[s.h]) {
			stack = append(stack, st{s.p + 1, s.h + 1})
		}
	}
	return false
}

// overlaps mirrors HostPattern::overlaps (host_pattern.rs:181-222).
func (h *hostPattern) overlaps(o *hostPattern) bool {
	type st struct{ l, r int }
	seen := map[st]bool{}
	queue := []st{{0, 0}}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		if seen[s] {
			continue
		}
		seen[s] = true
		if s.l == len(h.labels) && s.r == len(o.labels) {
			return true
		}
		if s.l >= len(h.labels) || s.r >= len(o.labels) {
			continue
		}
		a, b := h.labels[s.l], o.labels[s.r]
		switch {
		case a.recursive && b.recursive:
			queue = append(queue, st{s.l + 1, s.r + 1}, st{s.l, s.r + 1}, st{s.l + 1, s.r})
		case a.recursive:
			queue = append(queue, st{s.l + 1, s.r + 1}, st{s.l, s.r + 1})
		case b.recursive:
			queue = append(queue, st{s.l + 1, s.r + 1}, st{s.l + 1, s.r})
		case labelsMayOverlap(a, b):
			queue = append(queue, st{s.l + 1, s.r + 1})
		}
	}
	return false
}

// labelsMayOverlap mirrors label_patterns_may_overlap (host_pattern.rs:258-281).
func labelsMayOverlap(a, b hostLabel) bool {
	switch {
	case a.literal && b.literal:
		return a.source == b.source
	case a.literal:
		return b.pat.Match(a.source)
	case b.literal:
		return a.pat.Match(b.source)
	}
	return true
}

// hostSelector is HostSelector (host_pattern.rs:37-88).
type hostSelector struct{ includes, excludes []*hostPattern }

// mayMatchPattern mirrors HostSelector::may_match_pattern
// (host_pattern.rs:68-87): conservative for two non-literal globs.
func (s *hostSelector) mayMatchPattern(cand *hostPattern) bool {
	for _, inc := range s.includes {
		if !inc.overlaps(cand) {
			continue
		}
		concrete, ok := cand.literalHost()
		if !ok {
			concrete, ok = inc.literalHost()
		}
		excluded := false
		for _, ex := range s.excludes {
			if ok && ex.matches(concrete) || !ok && (ex.universal() || ex.source == inc.source || ex.source == cand.source) {
				excluded = true
				break
			}
		}
		if !excluded {
			return true
		}
	}
	return false
}

// builtinRegex is the one built-in middleware OpenShell ships
// (openshell-supervisor-middleware-builtins/src/regex.rs:23 @ v0.0.111).
const builtinRegex = "openshell/regex"

// configKeys reports a key repeated in a middleware config: config is a
// BTreeMap<String, serde_json::Value> (middleware.rs:32 @ v0.0.111), so the
// last value silently wins (see duplicateMapKey).
func (c *checker) configKeys(n *yaml.Node, path string) {
	seen := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := resolveAlias(n.Content[i])
		if k == nil || k.Kind != yaml.ScalarNode {
			continue
		}
		if first := seen[k.Value]; first != nil {
			c.duplicateMapKey(k, joinPath(path, k.Value), first)
			continue
		}
		seen[k.Value] = k
	}
}

// lastConfigValues returns the index of the last pair of each key in a
// config mapping: the one OpenShell keeps.
func lastConfigValues(n *yaml.Node) map[string]int {
	last := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if k := resolveAlias(n.Content[i]); k != nil {
			last[k.Value] = i
		}
	}
	return last
}

// checkBuiltinMiddleware applies the built-in catalog's config validation.
// The openshell/ namespace is reserved for built-ins: an operator
// registration cannot claim it (openshell-supervisor-middleware/src/lib.rs:746
// @ v0.0.111), so a name there other than a built-in is refused
// ("not a registered OpenShell built-in", builtins/src/lib.rs:29-36 @
// v0.0.111). openshell/regex takes a config of at most {mode: redact}
// (RegexConfig: deny_unknown_fields, mode an enum with the one variant
// redact, regex.rs:26-48 @ v0.0.111). The gateway validates every
// middleware config before admitting a policy (openshell-server/src/
// middleware.rs:9-19 @ v0.0.111). Names outside openshell/ depend on the
// gateway's registry and are not checked.
func (c *checker) checkBuiltinMiddleware(mw middleware, path string) {
	name := mw.o.str("middleware")
	if !strings.HasPrefix(name, "openshell/") {
		return
	}
	if name != builtinRegex {
		c.errorf(mw.o.pos("middleware"), mw.o.sub("middleware"), CodeMiddleware, "the only OpenShell built-in is "+builtinRegex+"; other middleware names must be registered with the gateway outside the openshell/ namespace",
			"middleware implementation %q is not a registered OpenShell built-in", name)
		return
	}
	if mw.config == nil {
		return
	}
	last := lastConfigValues(mw.config)
	for i := 0; i+1 < len(mw.config.Content); i += 2 {
		k, v := resolveAlias(mw.config.Content[i]), resolveAlias(mw.config.Content[i+1])
		if k == nil || v == nil || last[k.Value] != i {
			continue
		}
		kpath := joinPath(joinPath(path, "config"), k.Value)
		if k.Value != "mode" {
			c.errorf(k, kpath, CodeMiddleware, "openshell/regex supports only config: {mode: redact}", "unknown field %q in %s config", k.Value, builtinRegex)
			continue
		}
		if v.Kind != yaml.ScalarNode || v.ShortTag() != "!!str" || v.Value != "redact" {
			c.errorf(v, kpath, CodeMiddleware, "openshell/regex supports only mode: redact", "invalid %s config mode %s", builtinRegex, describe(v))
		}
	}
}
