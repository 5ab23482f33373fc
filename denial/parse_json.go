package denial

import (
	"cmp"
	"encoding/json"
)

// ocsfJSON is the part of an OCSF event this package reads
// (crates/openshell-ocsf/src/objects/{endpoint,process,http,firewall_rule}.rs@v0.0.111).
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

// ParseJSONLine reads one OCSF JSONL line. action_id 2 is Denied, 1
// Allowed (crates/openshell-ocsf/src/enums/action.rs:13-23@v0.0.111).
// Classes other than 4001 and 4002 are LineOther.
func ParseJSONLine(s string) (Event, LineResult) {
	var j ocsfJSON
	if err := json.Unmarshal([]byte(s), &j); err != nil || j.ClassUID == nil {
		return Event{}, LineUnparsed
	}
	if *j.ClassUID != 4001 && *j.ClassUID != 4002 {
		return Event{}, LineOther
	}
	ev := Event{Format: FormatJSONL, Class: *j.ClassUID, TimeMS: j.Time}
	if ev.Action = jsonActions[j.ActionID]; ev.Action == "" {
		return ev, LineOther
	}
	ev.Reason, ev.Truncated = reasonText(j.reason())
	j.readEndpoint(&ev)
	j.readActor(&ev)
	j.readFirewallRule(&ev)
	j.readHTTPRequest(&ev)
	return ev, LineEvent
}

// jsonActions maps the action_ids read to Event.Action.
var jsonActions = map[int]string{1: "Allowed", 2: "Denied"}

// reason is status_detail, else (absent or empty) message.
func (j *ocsfJSON) reason() string {
	if j.StatusDetail == nil {
		return j.Message
	}
	return cmp.Or(*j.StatusDetail, j.Message)
}

// readFirewallRule sets ev's Policy and Engine from firewall_rule.
func (j *ocsfJSON) readFirewallRule(ev *Event) {
	if f := j.FirewallRule; f != nil {
		ev.Policy, ev.Engine = f.Name, f.Type
	}
}

// readEndpoint sets ev's Host (the domain, else the IP, ASCII-lowercased) and
// Port from dst_endpoint.
func (j *ocsfJSON) readEndpoint(ev *Event) {
	d := j.DstEndpoint
	if d == nil {
		return
	}
	ev.Host, ev.Port = asciiLower(d.Domain), d.Port
	if ev.Host == "" {
		ev.Host = asciiLower(d.IP)
	}
}

// readActor sets ev's Binary, PID and Ancestors (at most 64, nearest first)
// from actor.process.
func (j *ocsfJSON) readActor(ev *Event) {
	if j.Actor == nil || j.Actor.Process == nil {
		return
	}
	ev.Binary, ev.PID = j.Actor.Process.Name, j.Actor.Process.PID
	for p, n := j.Actor.Process.Parent, 0; p != nil && n < 64; p, n = p.Parent, n+1 {
		ev.Ancestors = append(ev.Ancestors, p.Name)
	}
}

// readHTTPRequest sets ev's Method and, from the URL, Host, Path (query
// stripped, "/" when empty) and a non-zero Port; they override the
// endpoint's.
func (j *ocsfJSON) readHTTPRequest(ev *Event) {
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
