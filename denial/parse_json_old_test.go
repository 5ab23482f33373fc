package denial

// The JSONL decoder as it was before the single-pass scanner
// (parse_json.go at 48cceaa), kept verbatim as the oracle of the
// differential tests while the scanner is proven against it.

import (
	"cmp"
	"encoding/json"
)

// oldOCSFJSON is the part of an OCSF event this package reads
// (crates/openshell-ocsf/src/objects/{endpoint,process,http,firewall_rule}.rs@v0.0.111).
type oldOCSFJSON struct {
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
		Process *oldProcessJSON `json:"process"`
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

// oldProcessJSON is actor.process (objects/process.rs:9-16@v0.0.111: pid is
// an i64).
type oldProcessJSON struct {
	Name   string          `json:"name"`
	PID    int64           `json:"pid"`
	Parent *oldProcessJSON `json:"parent_process"`
}

// oldParseJSONLine reads one OCSF JSONL line. action_id 2 is Denied, 1
// Allowed (crates/openshell-ocsf/src/enums/action.rs:13-23@v0.0.111).
// Classes other than 4001 and 4002 are LineOther.
func oldParseJSONLine(s string) (Event, LineResult) {
	var j oldOCSFJSON
	if err := json.Unmarshal([]byte(s), &j); err != nil || j.ClassUID == nil {
		return Event{}, LineUnparsed
	}
	if *j.ClassUID != 4001 && *j.ClassUID != 4002 {
		return Event{}, LineOther
	}
	ev := Event{Format: FormatJSONL, Class: *j.ClassUID, TimeMS: j.Time}
	if ev.Action = oldJSONActions[j.ActionID]; ev.Action == "" {
		return ev, LineOther
	}
	ev.Reason, ev.Truncated = reasonText(j.oldReason())
	j.oldReadEndpoint(&ev)
	j.oldReadActor(&ev)
	j.oldReadFirewallRule(&ev)
	j.oldReadHTTPRequest(&ev)
	return ev, LineEvent
}

// oldJSONActions maps the action_ids read to Event.Action.
var oldJSONActions = map[int]string{1: "Allowed", 2: "Denied"}

// reason is status_detail, else (absent or empty) message.
func (j *oldOCSFJSON) oldReason() string {
	if j.StatusDetail == nil {
		return j.Message
	}
	return cmp.Or(*j.StatusDetail, j.Message)
}

// oldReadFirewallRule sets ev's Policy and Engine from firewall_rule.
func (j *oldOCSFJSON) oldReadFirewallRule(ev *Event) {
	if f := j.FirewallRule; f != nil {
		ev.Policy, ev.Engine = f.Name, f.Type
	}
}

// oldReadEndpoint sets ev's Host (the domain, else the IP, ASCII-lowercased) and
// Port from dst_endpoint.
func (j *oldOCSFJSON) oldReadEndpoint(ev *Event) {
	d := j.DstEndpoint
	if d == nil {
		return
	}
	ev.Host, ev.Port = asciiLower(d.Domain), d.Port
	if ev.Host == "" {
		ev.Host = asciiLower(d.IP)
	}
}

// oldReadActor sets ev's Binary, PID and Ancestors (at most 64, nearest first)
// from actor.process.
func (j *oldOCSFJSON) oldReadActor(ev *Event) {
	if j.Actor == nil || j.Actor.Process == nil {
		return
	}
	ev.Binary, ev.PID = j.Actor.Process.Name, j.Actor.Process.PID
	for p, n := j.Actor.Process.Parent, 0; p != nil && n < 64; p, n = p.Parent, n+1 {
		ev.Ancestors = append(ev.Ancestors, p.Name)
	}
}

// oldReadHTTPRequest sets ev's Method and, from the URL, Host, Path (query
// stripped, "/" when empty) and a non-zero Port; they override the
// endpoint's.
func (j *oldOCSFJSON) oldReadHTTPRequest(ev *Event) {
	h := j.HTTPRequest
	if h == nil {
		return
	}
	ev.Method = h.HTTPMethod
	u := h.URL
	if u == nil {
		return
	}
	ev.Host, ev.Path = asciiLower(u.Hostname), stripQuery(u.Path)
	if u.Port != 0 {
		ev.Port = u.Port
	}
	if ev.Path == "" {
		ev.Path = "/"
	}
}
