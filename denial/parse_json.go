package denial

import (
	"cmp"
	"encoding/json"
	"slices"
)

// ocsfFields are the fields of an OCSF event this package reads
// (crates/openshell-ocsf/src/objects/{endpoint,process,http,firewall_rule}.rs
// @v0.0.111), as encoding/json decodes them into ocsfJSON: an absent or
// null key leaves its zero value, and the has* flags say which of the
// objects and optional keys were there. The strings share the line's
// memory.
type ocsfFields struct {
	hasClass  bool
	class     int
	time      int64
	actionID  int
	message   string
	hasDetail bool
	detail    string
	// dst_endpoint: domain, ip, port.
	hasDst       bool
	domain, ip   string
	endpointPort int
	// actor.process: name, pid, and the first 64 parents' names.
	hasProcess bool
	binary     string
	pid        int64
	ancestors  []string
	// firewall_rule: name, type.
	hasRule      bool
	rule, engine string
	// http_request: http_method, url.hostname, url.path, url.port.
	hasHTTP       bool
	method        string
	hasURL        bool
	hostname, uri string
	urlPort       int
}

// ParseJSONLine reads one OCSF JSONL line. action_id 2 is Denied, 1
// Allowed (crates/openshell-ocsf/src/enums/action.rs:13-23@v0.0.111).
// Classes other than 4001 and 4002 are LineOther; a line that is not one
// JSON object, or whose fields have other types, is LineUnparsed.
//
// The line is read in one pass without a copy (scanOCSF); a line that pass
// cannot read exactly as encoding/json would (escaped or case-folded keys,
// a key twice, deep nesting, a number out of range, a syntax error) is
// decoded with encoding/json (decodeOCSF), so both give the same result.
func ParseJSONLine(s string) (Event, LineResult) {
	f, ok := scanOCSF(s)
	if !ok {
		var err error
		if f, err = decodeOCSF(s); err != nil {
			return Event{}, LineUnparsed
		}
	}
	return f.event()
}

// event is the Event of the fields.
func (f *ocsfFields) event() (Event, LineResult) {
	if !f.hasClass {
		return Event{}, LineUnparsed
	}
	if f.class != 4001 && f.class != 4002 {
		return Event{}, LineOther
	}
	ev := Event{Format: FormatJSONL, Class: f.class, TimeMS: f.time}
	if ev.Action = jsonAction(f.actionID); ev.Action == "" {
		return ev, LineOther
	}
	ev.Reason, ev.Truncated = reasonText(f.reason())
	f.readEndpoint(&ev)
	if f.hasProcess {
		ev.Binary, ev.PID, ev.Ancestors = f.binary, f.pid, f.ancestors
	}
	if f.hasRule {
		ev.Policy, ev.Engine = f.rule, f.engine
	}
	f.readHTTPRequest(&ev)
	return ev, LineEvent
}

// jsonAction is the Event.Action of an action_id, "" for the others.
func jsonAction(id int) string {
	switch id {
	case 1:
		return "Allowed"
	case 2:
		return "Denied"
	}
	return ""
}

// reason is status_detail, else (absent or empty) message.
func (f *ocsfFields) reason() string {
	if !f.hasDetail {
		return f.message
	}
	return cmp.Or(f.detail, f.message)
}

// readEndpoint sets ev's Host (the domain, else the IP, ASCII-lowercased) and
// Port from dst_endpoint.
func (f *ocsfFields) readEndpoint(ev *Event) {
	if !f.hasDst {
		return
	}
	ev.Host, ev.Port = asciiLower(f.domain), f.endpointPort
	if ev.Host == "" {
		ev.Host = asciiLower(f.ip)
	}
}

// readHTTPRequest sets ev's Method and, from the URL, Host, Path (query
// stripped, "/" when empty) and a non-zero Port; they override the
// endpoint's.
func (f *ocsfFields) readHTTPRequest(ev *Event) {
	if !f.hasHTTP {
		return
	}
	ev.Method = f.method
	if !f.hasURL {
		return
	}
	ev.Host, ev.Path = asciiLower(f.hostname), stripQuery(f.uri)
	if f.urlPort != 0 {
		ev.Port = f.urlPort
	}
	if ev.Path == "" {
		ev.Path = "/"
	}
}

// maxAncestors bounds Event.Ancestors, nearest first.
const maxAncestors = 64

// scanOCSF reads the fields of one JSON line in a single pass over s,
// checking the whole line's syntax on the way (jsonScanner). It reports
// false, with nothing decided, when the line is not valid JSON or when
// encoding/json might read it otherwise than the pass: a key in a decoded
// object that is escaped, has an upper-case or non-ASCII letter
// (encoding/json matches keys case-insensitively) or comes twice
// (encoding/json merges the two), a field of another type, a number that
// is not an integer of the field's size, nesting deeper than fastDepth.
func scanOCSF(s string) (ocsfFields, bool) {
	var f ocsfFields
	sc := jsonScanner{s: s}
	if sc.peek() != '{' || !sc.fields(&f, objEvent, 0) {
		return f, false
	}
	sc.space()
	return f, sc.i == len(s)
}

// object names the decoded objects of an OCSF event.
type object uint8

// The decoded objects.
const (
	objEvent    object = iota // the event
	objEndpoint               // dst_endpoint
	objActor                  // actor
	objProcess                // actor.process and its parent_process objects
	objRule                   // firewall_rule
	objHTTP                   // http_request
	objURL                    // http_request.url
)

// field reads the value of key of obj (the scanner is at the value; depth
// is the parent depth of a process, 0 for the actor's): known says whether
// the key names a field, ok whether its value was read as encoding/json
// reads it. It reads nothing for a key it does not know.
func (f *ocsfFields) field(sc *jsonScanner, obj object, depth int, key string) (known, ok bool) {
	switch obj {
	case objEvent:
		return f.eventField(sc, key)
	case objEndpoint:
		return f.endpointField(sc, key)
	case objActor:
		return key == "process", key != "process" || sc.objectValue(f, &f.hasProcess, objProcess, 0)
	case objProcess:
		return f.processField(sc, depth, key)
	case objRule:
		return f.ruleField(sc, key)
	case objHTTP:
		return f.httpField(sc, key)
	}
	return f.urlField(sc, key)
}

// eventField reads a key of the event object.
func (f *ocsfFields) eventField(sc *jsonScanner, key string) (bool, bool) {
	switch key {
	case "class_uid":
		return true, sc.intValue(&f.class, &f.hasClass)
	case "time":
		return true, sc.int64Value(&f.time)
	case "action_id":
		return true, sc.intValue(&f.actionID, nil)
	case "message":
		return true, sc.stringValue(&f.message, nil)
	case "status_detail":
		return true, sc.stringValue(&f.detail, &f.hasDetail)
	case "dst_endpoint":
		return true, sc.objectValue(f, &f.hasDst, objEndpoint, 0)
	case "actor":
		return true, sc.objectValue(f, nil, objActor, 0)
	case "firewall_rule":
		return true, sc.objectValue(f, &f.hasRule, objRule, 0)
	case "http_request":
		return true, sc.objectValue(f, &f.hasHTTP, objHTTP, 0)
	}
	return false, true
}

// endpointField reads a key of dst_endpoint.
func (f *ocsfFields) endpointField(sc *jsonScanner, key string) (bool, bool) {
	switch key {
	case "domain":
		return true, sc.stringValue(&f.domain, nil)
	case "ip":
		return true, sc.stringValue(&f.ip, nil)
	case "port":
		return true, sc.intValue(&f.endpointPort, nil)
	}
	return false, true
}

// processField reads a key of actor.process (depth 0) or of its nth
// parent_process (depth n): the actor's name and pid, the first 64
// parents' names. Every pid is checked as encoding/json decodes it, an
// int64 (objects/process.rs:9-16@v0.0.111).
func (f *ocsfFields) processField(sc *jsonScanner, depth int, key string) (bool, bool) {
	switch key {
	case "name":
		var name string
		ok := sc.stringValue(&name, nil)
		f.setProcessName(depth, name)
		return true, ok
	case "pid":
		var pid int64
		ok := sc.int64Value(&pid)
		if depth == 0 {
			f.pid = pid
		}
		return true, ok
	case "parent_process":
		return true, f.parentValue(sc, depth+1)
	}
	return false, true
}

// parentValue reads the parent_process at depth, or null: a parent within
// the first 64 adds an ancestor.
func (f *ocsfFields) parentValue(sc *jsonScanner, depth int) bool {
	if sc.isNull() {
		return true
	}
	if sc.peek() != '{' {
		return false
	}
	if depth <= maxAncestors {
		f.ancestors = append(f.ancestors, "")
	}
	return sc.fields(f, objProcess, depth)
}

// setProcessName sets the name of the process at depth: the actor's
// Binary, an ancestor; a name past the 64th parent is dropped.
func (f *ocsfFields) setProcessName(depth int, name string) {
	switch {
	case depth == 0:
		f.binary = name
	case depth <= maxAncestors:
		f.ancestors[depth-1] = name
	}
}

// ruleField reads a key of firewall_rule.
func (f *ocsfFields) ruleField(sc *jsonScanner, key string) (bool, bool) {
	switch key {
	case "name":
		return true, sc.stringValue(&f.rule, nil)
	case "type":
		return true, sc.stringValue(&f.engine, nil)
	}
	return false, true
}

// httpField reads a key of http_request.
func (f *ocsfFields) httpField(sc *jsonScanner, key string) (bool, bool) {
	switch key {
	case "http_method":
		return true, sc.stringValue(&f.method, nil)
	case "url":
		return true, sc.objectValue(f, &f.hasURL, objURL, 0)
	}
	return false, true
}

// urlField reads a key of http_request.url.
func (f *ocsfFields) urlField(sc *jsonScanner, key string) (bool, bool) {
	switch key {
	case "hostname":
		return true, sc.stringValue(&f.hostname, nil)
	case "path":
		return true, sc.stringValue(&f.uri, nil)
	case "port":
		return true, sc.intValue(&f.urlPort, nil)
	}
	return false, true
}

// ocsfJSON is ocsfFields as encoding/json decodes them, for the lines
// scanOCSF leaves to it.
type ocsfJSON struct {
	ClassUID     *int    `json:"class_uid"`
	Time         int64   `json:"time"`
	ActionID     int     `json:"action_id"`
	Message      string  `json:"message"`
	StatusDetail *string `json:"status_detail"`
	DstEndpoint  *struct {
		Domain string `json:"domain"`
		IP     string `json:"ip"`
		Port   int    `json:"port"`
	} `json:"dst_endpoint"`
	Actor *struct {
		Process *processJSON `json:"process"`
	} `json:"actor"`
	FirewallRule *struct {
		Name string `json:"name"`
		Type string `json:"type"`
	} `json:"firewall_rule"`
	HTTPRequest *struct {
		HTTPMethod string `json:"http_method"`
		URL        *struct {
			Hostname string `json:"hostname"`
			Path     string `json:"path"`
			Port     int    `json:"port"`
		} `json:"url"`
	} `json:"http_request"`
}

// processJSON is actor.process (objects/process.rs:9-16@v0.0.111: pid is
// an i64).
type processJSON struct {
	Name   string       `json:"name"`
	PID    int64        `json:"pid"`
	Parent *processJSON `json:"parent_process"`
}

// decodeOCSF decodes a line with encoding/json.
func decodeOCSF(s string) (ocsfFields, error) {
	var j ocsfJSON
	if err := json.Unmarshal([]byte(s), &j); err != nil {
		return ocsfFields{}, err
	}
	f := ocsfFields{time: j.Time, actionID: j.ActionID, message: j.Message}
	if j.ClassUID != nil {
		f.hasClass, f.class = true, *j.ClassUID
	}
	if j.StatusDetail != nil {
		f.hasDetail, f.detail = true, *j.StatusDetail
	}
	if d := j.DstEndpoint; d != nil {
		f.hasDst, f.domain, f.ip, f.endpointPort = true, d.Domain, d.IP, d.Port
	}
	if j.Actor != nil && j.Actor.Process != nil {
		f.readProcess(j.Actor.Process)
	}
	if r := j.FirewallRule; r != nil {
		f.hasRule, f.rule, f.engine = true, r.Name, r.Type
	}
	if h := j.HTTPRequest; h != nil {
		f.hasHTTP, f.method = true, h.HTTPMethod
		if u := h.URL; u != nil {
			f.hasURL, f.hostname, f.uri, f.urlPort = true, u.Hostname, u.Path, u.Port
		}
	}
	return f, nil
}

// readProcess takes the actor's process and its first 64 parents' names.
func (f *ocsfFields) readProcess(p *processJSON) {
	f.hasProcess, f.binary, f.pid = true, p.Name, p.PID
	for q, n := p.Parent, 0; q != nil && n < maxAncestors; q, n = q.Parent, n+1 {
		f.ancestors = append(f.ancestors, q.Name)
	}
}

// fields reads obj (at '{') into f (ocsfFields.field): each key must be
// plain (no escape) and, when it names no field, hold no upper-case or
// non-ASCII letter, which encoding/json could fold onto a field's name; a
// field's key must not come twice.
func (sc *jsonScanner) fields(f *ocsfFields, obj object, depth int) bool {
	var seen [9]string
	n := 0
	return sc.object(func(key string, plain bool) bool {
		if !plain || slices.Contains(seen[:n], key) {
			return false
		}
		known, ok := f.field(sc, obj, depth, key)
		if !known {
			return ok && !foldable(key) && sc.skip()
		}
		if n == len(seen) {
			return false
		}
		seen[n], n = key, n+1
		return ok
	})
}

// foldable reports whether key has a byte encoding/json folds in matching
// a key to a field name (fold.go: upper-case ASCII letters, and non-ASCII
// runes such as the Kelvin sign, which folds to 'k').
func foldable(key string) bool {
	for i := 0; i < len(key); i++ {
		if c := key[i]; c >= 'A' && c <= 'Z' || c >= 0x80 {
			return true
		}
	}
	return false
}

// objectValue reads an object field obj into f, setting *has when has is
// not nil, or null.
func (sc *jsonScanner) objectValue(f *ocsfFields, has *bool, obj object, depth int) bool {
	if sc.isNull() {
		return true
	}
	if sc.peek() != '{' {
		return false
	}
	setHas(has)
	return sc.fields(f, obj, depth)
}
