package validate

import (
	"cmp"
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
	configKey *yaml.Node // the config key, nil when absent
	config    *yaml.Node // the config mapping, nil when absent or null
}

// checkMiddlewares checks network_middlewares.
func (c *checker) checkMiddlewares(p *obj) {
	n := p.vals["network_middlewares"]
	if n == nil || n.Kind != yaml.MappingNode {
		return
	}
	mws := c.walkMiddlewares(n)
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

// walkMiddlewares walks the entries of the network_middlewares mapping n
// that are mappings (the shape walk reports the others), keeping the last
// of a repeated key.
func (c *checker) walkMiddlewares(n *yaml.Node) []middleware {
	var mws []middleware
	for k, v := range pairs(n) {
		if v.Kind != yaml.MappingNode {
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
	return mws
}

// walkMiddleware type-checks one entry: the struct walk without order and
// config, which are checked here.
func (c *checker) walkMiddleware(k, v *yaml.Node, path string) (middleware, bool) {
	mw := middleware{key: k.Value, keyNode: k}
	rest := &yaml.Node{Kind: yaml.MappingNode, Line: v.Line, Column: v.Column}
	for fk, fv := range pairs(v) {
		switch fk.Value {
		case "order":
			c.walkMiddlewareOrder(&mw, fk, fv, joinPath(path, "order"))
		case "config":
			c.walkMiddlewareConfig(&mw, fk, fv, joinPath(path, "config"))
		default:
			rest.Content = append(rest.Content, fk, fv)
		}
	}
	mw.o = c.walkStruct(rest, path, middlewareDef)
	return mw, mw.o != nil
}

// walkMiddlewareOrder records the order field fk: fv of mw.
func (c *checker) walkMiddlewareOrder(mw *middleware, fk, fv *yaml.Node, path string) {
	if mw.orderNode != nil {
		c.duplicateField(fk, path)
		return
	}
	mw.orderNode = fv
	mw.order = c.middlewareOrder(fv, path)
}

// walkMiddlewareConfig records the config field fk: fv of mw: a mapping,
// or null for none.
func (c *checker) walkMiddlewareConfig(mw *middleware, fk, fv *yaml.Node, path string) {
	if mw.configKey != nil {
		c.duplicateField(fk, path)
		return
	}
	mw.configKey = fk
	switch {
	case fv.Kind == yaml.MappingNode:
		mw.config = fv
		c.configKeys(fv, path)
	case !isNull(fv):
		c.errorf(fv, path, CodeType, "", "config must be a mapping, got %s", describe(fv))
	}
}

// middlewareOrder checks an i32 order and returns it (0 when invalid).
func (c *checker) middlewareOrder(v *yaml.Node, path string) int64 {
	if v.Kind != yaml.ScalarNode || !isPlain(v) {
		c.errorf(v, path, CodeType, "write a plain integer", "order must be an integer, got %s", describe(v))
		return 0
	}
	if isNull(v) {
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
	c.checkMiddlewareOrder(mw, path, orders)
	if o.has("middleware") && o.str("middleware") == "" {
		c.errorf(o.pos("middleware"), o.sub("middleware"), CodeMiddleware, "name the middleware implementation, e.g. openshell/regex", "middleware must not be empty")
	}
	c.checkBuiltinMiddleware(mw, path)
	onErr := o.str("on_error")
	if !slices.Contains(onErrorModes, onErr) {
		c.errorf(o.pos("on_error"), o.sub("on_error"), CodeMiddleware, "use fail_closed (the default) or fail_open", "invalid on_error %q", onErr)
	}
	c.checkMiddlewareEndpoints(p, mw, onErr == "" || onErr == "fail_closed")
}

// onErrorModes are the on_error values OpenShell accepts ("" is
// fail_closed).
var onErrorModes = []string{"", "fail_closed", "fail_open"}

// checkMiddlewareOrder reports mw sharing its order with an earlier
// middleware, and otherwise claims the order in orders.
func (c *checker) checkMiddlewareOrder(mw middleware, path string, orders map[int64]string) {
	first, dup := orders[mw.order]
	if !dup {
		orders[mw.order] = mw.key
		return
	}
	c.errorf(cmp.Or(mw.orderNode, mw.o.node), joinPath(path, "order"), CodeMiddlewareOrder, "give every middleware its own order (an omitted order is 0)",
		"middlewares %q and %q use the same order %d; OpenShell rejects the policy", first, mw.key, mw.order)
}

// checkMiddlewareEndpoints checks the endpoint selector of mw and, when it
// is valid and the middleware fails closed, the tls: skip endpoints it
// selects.
func (c *checker) checkMiddlewareEndpoints(p *obj, mw middleware, failClosed bool) {
	o := mw.o
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
	incs, incOK := c.selectorPatterns(sel, "include", include, incNodes)
	excs, excOK := c.selectorPatterns(sel, "exclude", exclude, excNodes)
	// An empty include (reported above) selects no endpoint.
	if incOK && excOK && failClosed {
		c.checkMiddlewareTLSSkip(p, mw.key, o, glob.NewHostSelector(incs, excs))
	}
}

// selectorPatterns parses the host patterns of the selector list field,
// reporting each invalid one; ok is false when there was one.
func (c *checker) selectorPatterns(sel *obj, field string, vals []string, nodes []*yaml.Node) (hps []*glob.Host, ok bool) {
	ok = true
	for i, s := range vals {
		hp, err := glob.CompileHost(s)
		if err != nil {
			ok = false
			c.errorf(nodes[i], fmt.Sprintf("%s[%d]", sel.sub(field), i), CodeMiddlewareSelector, "write a DNS host pattern such as api.example.com, *.example.com or **.example.com",
				"endpoint selector pattern %q is invalid: %v", s, err)
			continue
		}
		hps = append(hps, hp)
	}
	return hps, ok
}

// checkMiddlewareTLSSkip reports tls: skip endpoints a fail-closed
// middleware may select: it could never inspect them
// (middleware.rs:286-308 @ v0.0.111).
func (c *checker) checkMiddlewareTLSSkip(p *obj, key string, o *obj, sel *glob.HostSelector) {
	for _, e := range p.maps["network_policies"] {
		name := e.val.str("name")
		if name == "" {
			name = e.key
		}
		for _, ep := range e.val.lists["endpoints"] {
			if ep.str("tls") != openshell.TLSSkip {
				continue
			}
			cand, err := glob.CompileHost(ep.str("host"))
			if err != nil || !sel.MayMatch(cand) {
				continue
			}
			c.errorf(ep.pos("tls"), ep.sub("tls"), CodeMiddlewareTLSSkip, "narrow the middleware's endpoints (exclude this host), drop tls: skip, or set on_error: fail_open",
				"middleware %q selects network policy %q tls: skip endpoint %q, which it could never inspect; OpenShell rejects the policy", key, name, ep.str("host"))
		}
	}
}

// builtinRegex is the one built-in middleware OpenShell ships
// (openshell-supervisor-middleware-builtins/src/regex.rs:23 @ v0.0.111).
const builtinRegex = "openshell/regex"

// configKeys reports a key repeated in a middleware config: config is a
// BTreeMap<String, serde_json::Value> (middleware.rs:32 @ v0.0.111), so the
// last value silently wins (see duplicateMapKey).
func (c *checker) configKeys(n *yaml.Node, path string) {
	seen := map[string]*yaml.Node{}
	for k := range pairs(n) {
		if k.Kind == yaml.ScalarNode {
			c.noteMapKey(seen, k, path)
		}
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
	if mw.config != nil {
		c.checkRegexConfig(mw.config, joinPath(path, "config"))
	}
}

// checkRegexConfig checks the value OpenShell keeps of each key of an
// openshell/regex config mapping: the one field mode, redact.
func (c *checker) checkRegexConfig(config *yaml.Node, path string) {
	last := lastConfigValues(config)
	for i := 0; i+1 < len(config.Content); i += 2 {
		k, v := resolveAlias(config.Content[i]), resolveAlias(config.Content[i+1])
		if k != nil && v != nil && last[k.Value] == i {
			c.checkRegexConfigField(k, v, joinPath(path, k.Value))
		}
	}
}

// checkRegexConfigField checks one field k: v of an openshell/regex config.
func (c *checker) checkRegexConfigField(k, v *yaml.Node, path string) {
	if k.Value != "mode" {
		c.errorf(k, path, CodeMiddleware, "openshell/regex supports only config: {mode: redact}", "unknown field %q in %s config", k.Value, builtinRegex)
		return
	}
	if v.Kind != yaml.ScalarNode || v.ShortTag() != "!!str" || v.Value != "redact" {
		c.errorf(v, path, CodeMiddleware, "openshell/regex supports only mode: redact", "invalid %s config mode %s", builtinRegex, describe(v))
	}
}
