package denial

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// ocsf is an OpenShell OCSF network (4001) or HTTP (4002) event as its
// builders hold it, reduced to what the three log formats print. The
// generator below renders it the way each emitter does, written from the
// format strings at the tags it cites; it is this package's test input, not
// a copy of OpenShell's code.
type ocsf struct {
	Class    int
	Activity string // activity_name: Open, Refuse, Other, Fail
	Sev      string // the severity tag: INFO, MED, HIGH
	Action   string // Denied or Allowed
	// The actor: Binary and PID, when HasActor.
	HasActor bool
	Binary   string
	PID      int64
	// dst_endpoint: Host (domain, or IP when IP is set), Port; Proto is
	// connection_info.protocol_name (the bypass monitor's).
	Host  string
	IP    bool
	Port  int
	Proto string
	// http_request, when Method is set: the method and the URL's path
	// (OcsfUrl::new("http", host, path, port) at every call site).
	Method string
	Path   string
	// firewall_rule, when Engine is set.
	Policy, Engine string
	Message        string
	Detail         string
	Unmapped       [][2]string
	TimeMS         int64
}

// reason is the shorthand's reason text: status_detail, else message, line
// breaks as spaces, cut at 256 bytes (shorthand.rs:121-128,130-135
// @v0.0.111; :74-83@v0.0.83).
func (e ocsf) reason() string {
	r := e.Detail
	if r == "" {
		r = e.Message
	}
	r, _ = reasonText(r)
	return r
}

// actor is "{name}({pid})" (shorthand.rs:199,269@v0.0.111, :128,190@v0.0.83).
func (e ocsf) actor() string {
	if !e.HasActor {
		return ""
	}
	return fmt.Sprintf("%s(%d)", e.Binary, e.PID)
}

// url is Url::to_display_string (objects/http.rs:65-76 at both tags).
func (e ocsf) url() string {
	port := fmt.Sprintf(":%d", e.Port)
	if e.Port == 80 {
		port = ""
	}
	path := e.Path
	if path == "" {
		path = "/"
	}
	return "http://" + e.Host + port + path
}

// rule is " [policy:{name} engine:{type}]" (shorthand.rs:213-217,276-280
// @v0.0.111).
func (e ocsf) rule() string {
	if e.Engine == "" {
		return ""
	}
	return " [policy:" + e.Policy + " engine:" + e.Engine + "]"
}

// shorthand renders format_shorthand at v0.0.111 (NET shorthand.rs:193-258,
// HTTP :260-308) or v0.0.83 (NET :122-179, HTTP :181-234).
func (e ocsf) shorthand(v111 bool) string {
	if e.Class == 4001 {
		return e.net(v111)
	}
	return e.http(v111)
}

// net is the NET line: "NET:{ACTIVITY} {sev}{detail}{rule}{reason}{msg}".
func (e ocsf) net(v111 bool) string {
	dst := ""
	if e.Host != "" {
		dst = fmt.Sprintf("%s:%d", e.Host, e.Port)
		if e.Proto != "" {
			dst += "/" + e.Proto
		}
	}
	arrow := ""
	switch a := e.actor(); {
	case a != "" && dst != "":
		arrow = " " + a + " -> " + dst
	case a != "":
		arrow = " " + a
	case dst != "":
		arrow = " " + dst
	}
	reason := ""
	if e.Action == "Denied" && e.reason() != "" {
		reason = " [reason:" + e.reason() + "]"
	}
	msg := ""
	if v111 && e.Detail == "transparent_tcp_allowed" {
		msg = " [msg:" + e.Message + "]"
	}
	return "NET:" + strings.ToUpper(e.Activity) + " [" + e.Sev + "] " + strings.ToUpper(e.Action) + arrow + e.rule() + reason + msg
}

// http is the HTTP line: "HTTP:{METHOD} {sev}{detail}{rule}{context}";
// the method is UNKNOWN and the URL empty without http_request. v0.0.111
// prints the unmapped fields, context-escaped, and the reason in one
// bracket (unmapped_context, :104-119,158-172); v0.0.83 the reason alone.
func (e ocsf) http(v111 bool) string {
	method, u := "UNKNOWN", ""
	if e.Method != "" {
		method, u = e.Method, e.url()
	}
	arrow := " " + method + " " + u
	if a := e.actor(); a != "" {
		arrow = " " + a + " ->" + arrow
	}
	var ctx []string
	if v111 {
		for _, kv := range e.Unmapped {
			ctx = append(ctx, kv[0]+":"+escapeContext(kv[1]))
		}
	}
	if e.Action == "Denied" && e.reason() != "" {
		ctx = append(ctx, "reason:"+e.reason())
	}
	context := ""
	if len(ctx) > 0 {
		context = " [" + strings.Join(ctx, " ") + "]"
	}
	return "HTTP:" + method + " [" + e.Sev + "] " + strings.ToUpper(e.Action) + arrow + e.rule() + context
}

// escapeContext is escape_context_field (shorthand.rs:104-119@v0.0.111).
func escapeContext(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\\' || r == '[' || r == ']':
			b.WriteString(`\` + string(r))
		case r == ' ' || r < 0x20:
			fmt.Fprintf(&b, `\u{%x}`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// fileLine is a line of the sandbox's log file: "{ts} OCSF {shorthand}"
// (shorthand_layer.rs:56-63 at both tags).
func (e ocsf) fileLine(v111 bool) string {
	ts := time.UnixMilli(e.TimeMS).UTC().Format("2006-01-02T15:04:05.000Z")
	return ts + " OCSF " + e.shorthand(v111)
}

// cliLine is a line of `openshell logs`: "[{secs}.{ms:03}] [{source:<7}]
// [{level:<5}] [{target}] {message}" (openshell-cli run.rs:6779-6809
// @v0.0.111), level OCSF, target ocsf (log_push.rs:54-85@v0.0.111).
func (e ocsf) cliLine() string {
	return fmt.Sprintf("[%d.%03d] [sandbox] [OCSF ] [ocsf] %s", e.TimeMS/1000, e.TimeMS%1000, e.shorthand(true))
}

// jsonLine is the JSONL line: serde_json of the event (format/jsonl.rs:18
// at both tags), in base_event.rs's key order (:79-127@v0.0.111), then the
// class's (network_activity.rs:66-90, http_activity.rs:70-..., endpoints
// objects/endpoint.rs:12-24, the actor objects/process.rs:9-16).
func (e ocsf) jsonLine() string {
	type kv = struct {
		K string
		V any
	}
	fields := []kv{{"class_uid", e.Class}, {"activity_name", e.Activity}, {"time", e.TimeMS},
		{"severity", e.Sev}, {"message", e.Message}}
	if e.Detail != "" {
		fields = append(fields, kv{"status_detail", e.Detail})
	}
	fields = append(fields, kv{"metadata", map[string]any{"version": "1.8.0", "product": map[string]string{"name": "OpenShell"}}})
	if len(e.Unmapped) > 0 {
		m := map[string]any{}
		for _, p := range e.Unmapped {
			m[p[0]] = p[1] == "true"
		}
		fields = append(fields, kv{"unmapped", m})
	}
	fields = append(fields, e.jsonClass()...)
	var b strings.Builder
	b.WriteByte('{')
	for i, f := range fields {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(f.K)
		v, _ := json.Marshal(f.V)
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.String()
}

// jsonClass is the class's fields of the JSONL line.
func (e ocsf) jsonClass() []struct {
	K string
	V any
} {
	type kv = struct {
		K string
		V any
	}
	var out []kv
	if e.Method != "" {
		out = append(out, kv{"http_request", map[string]any{"http_method": e.Method,
			"url": map[string]any{"scheme": "http", "hostname": e.Host, "path": e.Path, "port": e.Port}}})
	}
	dst := map[string]any{"domain": e.Host, "port": e.Port}
	if e.IP {
		dst = map[string]any{"ip": e.Host, "port": e.Port}
	}
	if e.Host != "" {
		out = append(out, kv{"dst_endpoint", dst})
	}
	if e.HasActor {
		out = append(out, kv{"actor", map[string]any{"process": map[string]any{"name": e.Binary, "pid": e.PID}}})
	}
	if e.Engine != "" {
		out = append(out, kv{"firewall_rule", map[string]string{"name": e.Policy, "type": e.Engine}})
	}
	if e.Proto != "" {
		out = append(out, kv{"connection_info", map[string]string{"protocol_name": e.Proto}})
	}
	action := map[string]int{"Allowed": 1, "Denied": 2}[e.Action]
	return append(out, kv{"action_id", action}, kv{"action", e.Action})
}
