package lint

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/fullsend-ai/agent-sandbox/report"
)

// Waiver accepts one finding (or every finding of a rule under a policy
// path) for a stated reason. Waived findings are still reported, marked with
// the reason, but never fail a lint. Waivers come from --waive flags and from
// data.fullsend.waivers in a data file:
//
//	{"fullsend": {"waivers": [{"id": "FS003", "agent": "triage",
//	  "path": "network_policies.model.endpoints[0]", "reason": "..."}]}}
type Waiver struct {
	// ID is the rule id (FS003) or the rule reference (namespace.rule).
	ID string `json:"id"`
	// Agent limits the waiver to one agent's policy ("" = any).
	Agent string `json:"agent,omitempty"`
	// Path is a policy path; it matches that element and everything under
	// it. "" matches every finding of the rule.
	Path string `json:"path,omitempty"`
	// Reason is required: a waiver without a why is not a waiver.
	Reason string `json:"reason"`
}

// ErrBadWaiver reports a waiver that cannot be parsed or has no reason.
var ErrBadWaiver = errors.New("bad waiver")

// ParseWaiver parses the --waive syntax `ID[@AGENT][:PATH]=REASON`, e.g.
// `FS003@triage:network_policies.model.endpoints[0]=model API is L4 by design`.
func ParseWaiver(s string) (Waiver, error) {
	spec, reason, ok := strings.Cut(s, "=")
	reason = strings.TrimSpace(reason)
	if !ok || reason == "" {
		return Waiver{}, fmt.Errorf("%w %q: want ID[@AGENT][:PATH]=REASON, the reason is required", ErrBadWaiver, s)
	}
	spec, path, _ := strings.Cut(spec, ":")
	id, agent, _ := strings.Cut(spec, "@")
	id = strings.TrimSpace(id)
	if id == "" || strings.ContainsAny(id, " \t") {
		return Waiver{}, fmt.Errorf("%w %q: missing or malformed rule id", ErrBadWaiver, s)
	}
	return Waiver{ID: id, Agent: strings.TrimSpace(agent), Path: strings.TrimSpace(path), Reason: reason}, nil
}

func (w Waiver) matches(f *report.Finding) bool {
	if w.ID != f.RuleID && w.ID != f.Rule {
		return false
	}
	if w.Agent != "" && w.Agent != f.Agent {
		return false
	}
	return w.Path == "" || underPath(f.PolicyPath, w.Path)
}

// underPath reports whether policy path p is path or an element under it.
func underPath(p, path string) bool {
	return p == path || strings.HasPrefix(p, path+".") || strings.HasPrefix(p, path+"[")
}

func matchWaiver(ws []Waiver, f *report.Finding) string {
	for _, w := range ws {
		if w.matches(f) {
			return w.Reason
		}
	}
	return ""
}

// waiversFromData reads data.fullsend.waivers strictly.
func waiversFromData(data map[string]any) ([]Waiver, error) {
	raw, ok := lookup(data, "fullsend", "waivers")
	if !ok {
		return nil, nil
	}
	list, ok := raw.([]any)
	if !ok {
		return nil, fmt.Errorf("%w: data.fullsend.waivers must be a list", ErrBadWaiver)
	}
	out := make([]Waiver, 0, len(list))
	for i, item := range list {
		w, err := waiverFromData(i, item)
		if err != nil {
			return nil, err
		}
		out = append(out, w)
	}
	return out, nil
}

// waiverFromData reads entry i of data.fullsend.waivers: an object of
// string fields id, agent, path and reason, with an id and a reason.
func waiverFromData(i int, item any) (Waiver, error) {
	m, ok := item.(map[string]any)
	if !ok {
		return Waiver{}, fmt.Errorf("%w: data.fullsend.waivers[%d] must be an object", ErrBadWaiver, i)
	}
	w, err := waiverFields(i, m)
	if err != nil {
		return Waiver{}, err
	}
	if w.ID == "" || strings.TrimSpace(w.Reason) == "" {
		return Waiver{}, fmt.Errorf("%w: data.fullsend.waivers[%d] needs an id and a reason", ErrBadWaiver, i)
	}
	return w, nil
}

// waiverFields reads the fields of entry i of data.fullsend.waivers:
// strings, each one of id, agent, path and reason.
func waiverFields(i int, m map[string]any) (Waiver, error) {
	var w Waiver
	fields := map[string]*string{"id": &w.ID, "agent": &w.Agent, "path": &w.Path, "reason": &w.Reason}
	for _, k := range slices.Sorted(maps.Keys(m)) { // the first bad field by name, every run
		v := m[k]
		s, ok := v.(string)
		if !ok {
			return Waiver{}, fmt.Errorf("%w: data.fullsend.waivers[%d].%s must be a string", ErrBadWaiver, i, k)
		}
		field, ok := fields[k]
		if !ok {
			return Waiver{}, fmt.Errorf("%w: data.fullsend.waivers[%d]: unknown field %q (want id, agent, path, reason)", ErrBadWaiver, i, k)
		}
		*field = s
	}
	return w, nil
}
