package decide

import (
	"cmp"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Request is one connection or HTTP request a sandboxed process makes.
type Request struct {
	// Method is the HTTP method, or "" for a bare connection (CONNECT).
	Method string `json:"method,omitempty"`
	// Forward marks a forward-proxy request: plain HTTP in absolute form
	// sent to the proxy itself, not inside a CONNECT tunnel ("forward GET
	// http://host/path ...", what a client does with HTTP_PROXY for an
	// http:// URL). OpenShell decides it in handle_forward_proxy
	// (forward.go).
	Forward bool `json:"forward,omitempty"`
	// Scheme is https, http, wss or ws ("" for CONNECT); a forward-proxy
	// request may name any scheme.
	Scheme string `json:"scheme,omitempty"`
	Host   string `json:"host"`
	Port   int    `json:"port"`
	Path   string `json:"path,omitempty"`
	// Query holds the decoded query parameters.
	Query url.Values `json:"query,omitempty"`
	// Binary is the process executable; Ancestors its parent processes,
	// nearest first. OpenShell matches policy binaries against all of them.
	Binary    string   `json:"binary"`
	Ancestors []string `json:"ancestors,omitempty"`
	// Addr is the address the host resolves to, when the test names one:
	// DNS is an input of the decision, never looked up.
	Addr netip.Addr `json:"addr,omitzero"`

	// Command is the SQL command of a request on a sql endpoint ("sql CMD").
	Command string `json:"command,omitempty"`
	// GraphQL lists the operations of a GraphQL request ("graphql
	// TYPE[:NAME[:FIELD,...]]", repeatable), as OpenShell's parser reports
	// them (l7/graphql.rs): type, name and selected root fields.
	GraphQL []GraphQLOp `json:"graphql,omitempty"`
	// RPCMethod is the JSON-RPC/MCP method of the body ("rpc METHOD"); Tool
	// the MCP tools/call name ("tool NAME"); RPCResponse marks a body that is
	// a JSON-RPC response frame ("frame response").
	RPCMethod   string `json:"rpc_method,omitempty"`
	Tool        string `json:"tool,omitempty"`
	RPCResponse bool   `json:"rpc_response,omitempty"`
	// RPCStream marks a GET that opens an MCP receive stream: no body and
	// Accept: text/event-stream ("frame stream", l7/jsonrpc.rs:198).
	RPCStream bool `json:"rpc_stream,omitempty"`
	// Credentialed names the network policies whose endpoints the gateway
	// stamped provider_credentialed ("credentialed POLICY", repeatable):
	// it does so for endpoints in the scope of a provider that holds
	// credentials (stamp_provider_credentialed_endpoints,
	// openshell-server/src/grpc/policy.rs:2381 @ v0.0.111), outside the
	// policy YAML, so a test states it as it states DNS with "at IP".
	Credentialed []string `json:"credentialed,omitempty"`
	// QueryError is set when the query string cannot be decoded: OpenShell
	// fails such a request before policy evaluation (l7/rest.rs:608).
	QueryError string `json:"query_error,omitempty"`

	rawQuery string // the query as written, for String
}

// GraphQLOp is one operation of a GraphQL request.
type GraphQLOp struct {
	// Hash is the sha256 of a persisted query sent without its text
	// ("graphql persisted:HASH"); Type is then empty until the endpoint's
	// graphql_persisted_queries registry names it.
	Hash   string   `json:"hash,omitempty"`
	Type   string   `json:"type,omitempty"`
	Name   string   `json:"name,omitempty"`
	Fields []string `json:"fields,omitempty"`
}

func (op GraphQLOp) String() string {
	if op.Hash != "" {
		return "persisted:" + op.Hash
	}
	s := op.Type
	if op.Name != "" || len(op.Fields) > 0 {
		s += ":" + op.Name
	}
	if len(op.Fields) > 0 {
		s += ":" + strings.Join(op.Fields, ",")
	}
	return s
}

// Binaries returns the process followed by its ancestors.
func (r *Request) Binaries() []string {
	return append([]string{r.Binary}, r.Ancestors...)
}

// String renders the request in the syntax ParseRequest reads.
func (r *Request) String() string {
	var b strings.Builder
	if r.Forward {
		b.WriteString("forward ")
	}
	b.WriteString(r.target())
	fmt.Fprintf(&b, " from %s", r.Binary)
	for _, a := range r.Ancestors {
		fmt.Fprintf(&b, " via %s", a)
	}
	if r.Addr.IsValid() {
		fmt.Fprintf(&b, " at %s", r.Addr)
	}
	r.writePayload(&b)
	return b.String()
}

// target renders the request line: CONNECT HOST:PORT, or the method and
// the URL (https when no scheme is set, the port only when it is not the
// scheme's, the query as written or, for a Request built in code,
// encoded).
func (r *Request) target() string {
	if r.Method == "" {
		return "CONNECT " + net.JoinHostPort(r.Host, strconv.Itoa(r.Port))
	}
	scheme := cmp.Or(r.Scheme, "https")
	rq := r.rawQuery
	if rq == "" {
		rq = r.Query.Encode()
	}
	u := url.URL{Scheme: scheme, Host: r.Host, Opaque: "//" + hostForURL(r.Host) + r.Path, RawQuery: rq}
	if r.Port != r.defaultPort(scheme) {
		u.Opaque = "//" + net.JoinHostPort(r.Host, strconv.Itoa(r.Port)) + r.Path
	}
	return r.Method + " " + u.String()
}

// writePayload renders the clauses of what the request carries.
func (r *Request) writePayload(b *strings.Builder) {
	if r.Command != "" {
		fmt.Fprintf(b, " sql %s", r.Command)
	}
	for _, op := range r.GraphQL {
		fmt.Fprintf(b, " graphql %s", op)
	}
	if r.RPCMethod != "" {
		fmt.Fprintf(b, " rpc %s", r.RPCMethod)
	}
	if r.Tool != "" {
		fmt.Fprintf(b, " tool %s", r.Tool)
	}
	if r.RPCResponse {
		b.WriteString(" frame response")
	}
	if r.RPCStream {
		b.WriteString(" frame stream")
	}
	for _, k := range r.Credentialed {
		fmt.Fprintf(b, " credentialed %s", k)
	}
}

// ErrBadRequest reports request syntax ParseRequest cannot read.
var ErrBadRequest = errors.New("bad request")

const requestSyntax = "[forward] METHOD URL from BINARY [via ANCESTOR]... [at IP] [sql CMD] [graphql TYPE[:NAME[:FIELDS]]]... [rpc METHOD] [tool NAME] [frame response|stream] [credentialed POLICY]..., or CONNECT HOST:PORT from BINARY ..."

// forwardKeyword prefixes a forward-proxy request.
const forwardKeyword = "forward"

var httpMethods = map[string]bool{
	"GET": true, "HEAD": true, "OPTIONS": true, "POST": true, "PUT": true, "PATCH": true,
	"DELETE": true, "TRACE": true, "CONNECT": true,
	// A WebSocket client text message, as OpenShell's relay names it for
	// rules (l7/mod.rs:1580 access_preset_rules @ v0.0.111).
	"WEBSOCKET_TEXT": true,
}

// ParseRequest reads a request in the policy-test syntax:
//
//	GET https://api.github.com/repos/o/r/issues/5 from /usr/bin/gh
//	POST https://api.github.com/graphql from /usr/bin/gh via /usr/bin/bash via /usr/bin/node
//	GET http://host.docker.internal:8081/issues from /usr/bin/curl at 172.17.0.1
//	CONNECT 169.254.169.254:80 from /usr/bin/curl
//	POST https://api.github.com/graphql from /usr/bin/gh graphql query:GetIssue:repository
//	POST https://mcp.example.com/mcp from /usr/bin/node rpc tools/call tool search
//	WEBSOCKET_TEXT wss://chat.example.com/rooms/1 from /usr/bin/node
//	forward GET http://10.0.0.5:8080/status from /usr/bin/curl
//
// Scheme https implies port 443, http port 80, ws 80 and wss 443; BINARY and
// every ANCESTOR are absolute paths; "at IP" names the resolved address.
// A request without "forward" travels inside a CONNECT tunnel (https://
// and wss:// over TLS, http:// and ws:// in plain text). The "forward"
// prefix makes it a forward-proxy request: the absolute-form request line
// a client sends to the proxy itself for an http:// URL when HTTP_PROXY is
// set. Its target keeps the proxy's defaults (port 443 for https, 80 for
// every other scheme), and it takes no sql clause: a forward-proxy request
// is HTTP only.
func ParseRequest(s string) (*Request, error) {
	f := strings.Fields(s)
	r := &Request{}
	if len(f) > 0 && strings.EqualFold(f[0], forwardKeyword) {
		r.Forward = true
		f = f[1:]
	}
	if len(f) < 4 {
		return nil, fmt.Errorf("%w %q: want %s", ErrBadRequest, s, requestSyntax)
	}
	if err := r.parseRequestLine(s, f[0], f[1]); err != nil {
		return nil, err
	}
	if err := r.parseClauses(s, f[2:]); err != nil {
		return nil, err
	}
	if r.Binary == "" {
		return nil, fmt.Errorf("%w %q: missing \"from BINARY\": OpenShell matches every connection to a process", ErrBadRequest, s)
	}
	return r, nil
}

// parseRequestLine reads the method and the target of request s.
func (r *Request) parseRequestLine(s, word, target string) error {
	method := strings.ToUpper(word)
	if !httpMethods[method] {
		return fmt.Errorf("%w %q: unknown method %q", ErrBadRequest, s, word)
	}
	if r.Forward && (method == "CONNECT" || method == "WEBSOCKET_TEXT") {
		return fmt.Errorf("%w %q: a forward-proxy request is one plain HTTP request, not %s (drop \"forward\" for a CONNECT tunnel)", ErrBadRequest, s, method)
	}
	if err := r.parseTarget(s, method, target); err != nil {
		return err
	}
	if r.Host == "" || strings.ContainsAny(r.Host, "*/ ") {
		return fmt.Errorf("%w %q: host %q is not a host name or address", ErrBadRequest, s, r.Host)
	}
	return nil
}

// parseClauses reads the KEYWORD VALUE clauses after the target of
// request s.
func (r *Request) parseClauses(s string, rest []string) error {
	for len(rest) > 0 {
		if len(rest) < 2 {
			return fmt.Errorf("%w %q: %q needs a value (want %s)", ErrBadRequest, s, rest[0], requestSyntax)
		}
		if err := r.parseClause(s, strings.ToLower(rest[0]), rest[1]); err != nil {
			return err
		}
		rest = rest[2:]
	}
	return nil
}

// parseTarget reads the target of request s: HOST:PORT for CONNECT, a URL
// for every other method.
func (r *Request) parseTarget(s, method, target string) error {
	if method != "CONNECT" {
		r.Method = method
		if err := r.parseURL(target); err != nil {
			return fmt.Errorf("%w %q: %v", ErrBadRequest, s, err)
		}
		return nil
	}
	host, port, err := net.SplitHostPort(target)
	if err != nil {
		return fmt.Errorf("%w %q: CONNECT needs HOST:PORT: %v", ErrBadRequest, s, err)
	}
	r.Host = host
	if r.Port, err = parsePort(port); err != nil {
		return fmt.Errorf("%w %q: %v", ErrBadRequest, s, err)
	}
	return nil
}

// parseClause reads one "from BINARY", "via ANCESTOR" or "at IP" clause,
// or one clause of what the request carries, of request s.
func (r *Request) parseClause(s, kw, val string) error {
	var problem string
	switch kw {
	case "from", "via", "at":
		problem = r.parseOrigin(kw, val)
	case "sql", "graphql", "rpc", "tool", "frame", "credentialed":
		problem = r.parsePayload(kw, val)
	default:
		problem = fmt.Sprintf("unexpected %q (want %s)", kw, requestSyntax)
	}
	if problem != "" {
		return fmt.Errorf("%w %q: %s", ErrBadRequest, s, problem)
	}
	return nil
}

// parseOrigin reads a from, via or at clause: what sends the request, and
// from where. It returns the problem, or "".
func (r *Request) parseOrigin(kw, val string) string {
	switch kw {
	case "from":
		return r.setBinary(val)
	case "via":
		if !strings.HasPrefix(val, "/") {
			return fmt.Sprintf("ancestor %q must be an absolute path", val)
		}
		r.Ancestors = append(r.Ancestors, val)
	case "at":
		return r.setAddr(val)
	}
	return ""
}

// setBinary reads "from BINARY": one absolute path.
func (r *Request) setBinary(val string) string {
	if r.Binary != "" {
		return "more than one from"
	}
	if !strings.HasPrefix(val, "/") {
		return fmt.Sprintf("binary %q must be an absolute path", val)
	}
	r.Binary = val
	return ""
}

// setAddr reads "at IP": one IP address.
func (r *Request) setAddr(val string) string {
	a, err := netip.ParseAddr(val)
	if err != nil || r.Addr.IsValid() {
		return fmt.Sprintf("at needs one IP address, got %q", val)
	}
	r.Addr = a
	return ""
}

// parsePayload reads a sql, graphql, rpc, tool, frame or credentialed
// clause: what the request carries. It returns the problem, or "".
func (r *Request) parsePayload(kw, val string) string {
	switch kw {
	case "sql":
		if r.Forward {
			return "a forward-proxy request is HTTP only and carries no sql command"
		}
		return setOnce(&r.Command, val, "more than one sql")
	case "graphql":
		return r.addGraphQL(val)
	case "rpc":
		return setOnce(&r.RPCMethod, val, "more than one rpc")
	case "tool":
		return setOnce(&r.Tool, val, "more than one tool")
	case "frame":
		return r.parseFrame(val)
	case "credentialed":
		return r.addCredentialed(val)
	}
	return ""
}

// addGraphQL reads one "graphql TYPE[:NAME[:FIELDS]]" clause.
func (r *Request) addGraphQL(val string) string {
	op, err := parseGraphQLOp(val)
	if err != nil {
		return err.Error()
	}
	r.GraphQL = append(r.GraphQL, op)
	return ""
}

// addCredentialed reads one "credentialed POLICY" clause; each policy at
// most once.
func (r *Request) addCredentialed(val string) string {
	if slices.Contains(r.Credentialed, val) {
		return fmt.Sprintf("credentialed %s given twice", val)
	}
	r.Credentialed = append(r.Credentialed, val)
	return ""
}

// setOnce sets *field to val, or returns problem when it is already set.
func setOnce(field *string, val, problem string) string {
	if *field != "" {
		return problem
	}
	*field = val
	return ""
}

// parseFrame reads "frame response" or "frame stream", each at most once.
func (r *Request) parseFrame(val string) string {
	switch {
	case val == "response" && !r.RPCResponse:
		r.RPCResponse = true
	case val == "stream" && !r.RPCStream:
		r.RPCStream = true
	default:
		return fmt.Sprintf("want \"frame response\" or \"frame stream\" once each, got %q", val)
	}
	return ""
}

// parseURL reads the URL of a request other than CONNECT.
func (r *Request) parseURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return err
	}
	if err := r.checkURL(raw, u); err != nil {
		return err
	}
	r.Scheme, r.Host, r.Port = u.Scheme, u.Hostname(), r.defaultPort(u.Scheme)
	if p := u.Port(); p != "" {
		if r.Port, err = parsePort(p); err != nil {
			return err
		}
	}
	// The path as written, not u.EscapedPath(): Go re-escapes bytes such as
	// raw non-ASCII, which OpenShell's canonicaliser rejects instead
	// (l7/path.rs:546 non_ascii_raw_byte_rejected @ v0.0.111, :475 @
	// v0.0.83); canonicalRequestPath sees what the client sent.
	r.Path = cmp.Or(rawURLPath(raw), "/")
	r.rawQuery = u.RawQuery
	r.Query, r.QueryError = parseQueryParams(u.RawQuery)
	if len(r.Query) == 0 {
		r.Query = nil
	}
	return nil
}

// checkURL refuses what a request URL may not hold: a scheme other than
// https, http, wss or ws (but see schemeOK), credentials, a fragment, or
// an IPv6 host without brackets.
func (r *Request) checkURL(raw string, u *url.URL) error {
	if !r.schemeOK(raw, u) {
		return fmt.Errorf("URL %q: scheme must be https, http, wss or ws", raw)
	}
	if u.User != nil {
		return fmt.Errorf("URL %q: credentials in URLs are not accepted", raw)
	}
	if u.Fragment != "" {
		return fmt.Errorf("URL %q: fragments never reach the server", raw)
	}
	// url.Parse reads an unbracketed "::1" as host ":" and port "1"; only a
	// bracketed IPv6 address may hold a colon.
	if host := u.Hostname(); strings.Contains(host, ":") {
		if _, err := netip.ParseAddr(host); err != nil {
			return fmt.Errorf("URL %q: host %q is not an address: an IPv6 address in a URL goes in brackets ([::1])", raw, host)
		}
	}
	return nil
}

// schemeOK reports whether the URL's scheme is one a request may name:
// https, http, wss or ws. A forward-proxy target may name any scheme:
// OpenShell reads it before deciding (parse_proxy_uri), and the scheme is
// an input of the decision (v0.0.83 forwards every scheme but https as
// plain HTTP).
func (r *Request) schemeOK(raw string, u *url.URL) bool {
	if _, ok := defaultPorts[u.Scheme]; ok {
		return true
	}
	return r.Forward && u.Scheme != "" && strings.HasPrefix(strings.ToLower(raw), u.Scheme+"://")
}

// parseQueryParams decodes a query string as OpenShell's REST parser does
// (l7/rest.rs:608 parse_query_params and :638 decode_query_component @
// v0.0.111, :281 @ v0.0.83): pairs split on '&' only (';' is an ordinary
// byte, unlike url.ParseQuery), empty pairs skipped, a pair without '='
// has the empty value, '+' is a space, %XX is a byte; a truncated or
// non-hex escape, or a component that is not UTF-8 after decoding, is an
// error that fails the whole request before policy evaluation.
func parseQueryParams(q string) (url.Values, string) {
	out := url.Values{}
	for _, pair := range strings.Split(q, "&") {
		if pair == "" {
			continue
		}
		k, v, _ := strings.Cut(pair, "=")
		key, err := decodeQueryComponent(k)
		if err != "" {
			return nil, err
		}
		val, err := decodeQueryComponent(v)
		if err != "" {
			return nil, err
		}
		out[key] = append(out[key], val)
	}
	return out, ""
}

func decodeQueryComponent(in string) (string, string) {
	b := make([]byte, 0, len(in))
	for i := 0; i < len(in); i++ {
		switch c := in[i]; {
		case c == '+':
			b = append(b, ' ')
		case c != '%':
			b = append(b, c)
		default:
			d, ok := percentByte(in, i)
			if !ok {
				return "", "invalid percent-encoding in query component"
			}
			b = append(b, d)
			i += 2
		}
	}
	if !utf8.Valid(b) {
		return "", "query component is not valid UTF-8"
	}
	return string(b), ""
}

// rawURLPath returns the path of an absolute URL exactly as written: after
// "scheme://authority", up to the query or fragment.
func rawURLPath(raw string) string {
	_, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return ""
	}
	i := strings.IndexAny(rest, "/?#")
	if i < 0 || rest[i] != '/' {
		return ""
	}
	p := rest[i:]
	if j := strings.IndexAny(p, "?#"); j >= 0 {
		p = p[:j]
	}
	return p
}

var defaultPorts = map[string]int{"https": 443, "wss": 443, "http": 80, "ws": 80}

// defaultPort is the port a URL without one names: the scheme's, or for a
// forward-proxy request 443 for https and 80 for every other scheme, as
// OpenShell's parse_proxy_uri reads the target (proxy.rs:3036 @ v0.0.83,
// :4268 @ v0.0.111).
func (r *Request) defaultPort(scheme string) int {
	if r.Forward {
		if scheme == "https" {
			return 443
		}
		return 80
	}
	return defaultPorts[scheme]
}

func hostForURL(h string) string {
	if strings.Contains(h, ":") {
		return "[" + h + "]"
	}
	return h
}

func parsePort(s string) (int, error) {
	p, err := strconv.Atoi(s)
	if err != nil || p < 1 || p > 65535 {
		return 0, fmt.Errorf("port %q must be 1..65535", s)
	}
	return p, nil
}

// parseGraphQLOp reads TYPE[:NAME[:FIELD,FIELD...]].
func parseGraphQLOp(v string) (GraphQLOp, error) {
	parts := strings.SplitN(v, ":", 3)
	op := GraphQLOp{Type: parts[0]}
	switch op.Type {
	case "persisted":
		return parsePersistedOp(v, parts)
	case "query", "mutation", "subscription":
	default:
		return op, fmt.Errorf("graphql %q: the operation type must be query, mutation, subscription or persisted", v)
	}
	if len(parts) > 1 {
		op.Name = parts[1]
	}
	if len(parts) > 2 {
		fields, err := parseGraphQLFields(v, parts[2])
		if err != nil {
			return op, err
		}
		op.Fields = fields
	}
	return op, nil
}

// parsePersistedOp reads persisted:HASH, split at ':' in parts.
func parsePersistedOp(v string, parts []string) (GraphQLOp, error) {
	if len(parts) != 2 || parts[1] == "" {
		return GraphQLOp{Type: parts[0]}, fmt.Errorf("graphql %q: want persisted:HASH", v)
	}
	return GraphQLOp{Hash: parts[1]}, nil
}

// parseGraphQLFields reads the FIELD,FIELD... list of the operation v.
func parseGraphQLFields(v, list string) ([]string, error) {
	fields := strings.Split(list, ",")
	if slices.Contains(fields, "") {
		return nil, fmt.Errorf("graphql %q: empty field name", v)
	}
	return fields, nil
}
