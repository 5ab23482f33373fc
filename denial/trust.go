package denial

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
)

// Trust says whether an event's fields could have been written by the
// sandboxed agent. OpenShell prints a process's executable path raw into its
// shorthand line, so an agent that runs a binary from a path holding line
// breaks writes whole lines of its own into the shorthand log and the
// `openshell logs` output (inject.go); the OCSF JSONL record escapes every
// string. docs/threat-model.md states what the agent controls.
type Trust string

// The trust levels, from the most to the least trusted. The zero value ""
// means the event has not been assessed yet (Assess sets every event).
const (
	// TrustStructured is an event read from the OCSF JSONL record
	// (Event.Structured).
	TrustStructured Trust = "structured"
	// TrustCorroborated is a shorthand or CLI event whose structured
	// counterpart is in the same evidence.
	TrustCorroborated Trust = "corroborated"
	// TrustShorthand is a shorthand or CLI event in evidence that holds no
	// structured record at all, with nothing suspicious around it.
	TrustShorthand Trust = "shorthand"
	// TrustSuspect is an event the agent could have written: never a grant.
	TrustSuspect Trust = "suspect"
)

// Grantable reports whether a suggestion may be derived from an event of
// this trust.
func (t Trust) Grantable() bool {
	return t == TrustStructured || t == TrustCorroborated || t == TrustShorthand
}

// matchWindowMS is how far apart the times of one event's JSONL record and
// its shorthand or CLI line may be: the JSONL carries the time the event
// was built (BaseEventData time, Utc::now, events/base_event.rs:156
// @v0.0.111, :149@v0.0.83), the shorthand line the time the layer wrote it
// (shorthand_layer.rs:56 at both tags) and the CLI line the time the push
// layer saw it (log_push.rs:69@v0.0.111): a few milliseconds later, on the
// same clock.
const matchWindowMS = 2000

// Assess sets the Trust of every event of one body of evidence (all the
// files of one run, read together with ReadLog or Scan, which mark the
// lines around unparsed fragments), and returns how many events it found
// suspect. It sets Suspect to the reason of a TrustSuspect event and Raw
// to its raw lines (at most 5 of 512 bytes). The rules:
//
//   - An event of the OCSF JSONL record is TrustStructured.
//   - When the evidence holds a structured record (one structured event),
//     a shorthand or CLI event is TrustCorroborated when a structured
//     event of the same class, action, host, port, method, path, binary,
//     pid, policy, engine and (when it is denied) reason, within 2 s,
//     matches it, one line per record and input; else TrustSuspect: the
//     record is complete, so a line it lacks is one the agent wrote.
//   - With shorthand alone, an event is TrustSuspect when it may share an
//     injected block with an unparsed line, when its binary is not a plain
//     absolute path, or when its reason names another binary; else
//     TrustShorthand. A block made only of well-formed lines is not seen:
//     only the JSONL record shows it (docs/threat-model.md).
//   - A JSON line read after a non-JSON line of its input is TrustSuspect:
//     the record's files hold only JSON, and an injected block can hold one.
func Assess(events []Event) int {
	structured := slices.ContainsFunc(events, func(ev Event) bool { return ev.Structured() })
	return AssessRecord(events, structured)
}

// AssessRecord is Assess for a caller that passes only some of the
// evidence's events (the runner keeps the denials): structured says whether
// the evidence held a structured event, among events or not.
func AssessRecord(events []Event, structured bool) int {
	var corroborated []bool
	if structured {
		corroborated = corroborate(events)
	}
	n := 0
	for i := range events {
		ev := &events[i]
		ev.Trust, ev.Suspect = judge(ev, structured, corroborated != nil && corroborated[i])
		if ev.Trust != TrustSuspect {
			ev.Raw = nil
			continue
		}
		n++
		if len(ev.Raw) == 0 && ev.line != "" {
			ev.Raw = []string{ev.line}
		}
	}
	return n
}

// judge decides one event's trust and, for a suspect one, why.
func judge(ev *Event, structured, corroborated bool) (Trust, string) {
	switch {
	case ev.Structured():
		return TrustStructured, ""
	case ev.Format == FormatJSONL:
		return TrustSuspect, "a JSON line after lines that are not JSON: not the OCSF JSONL record"
	case structured && corroborated:
		return TrustCorroborated, ""
	case structured:
		return TrustSuspect, "no event of the OCSF JSONL record matches this " + string(ev.Format) + " line"
	case ev.hint != "":
		return TrustSuspect, ev.hint
	}
	if why := binaryDoubt(ev); why != "" {
		return TrustSuspect, why
	}
	return TrustShorthand, ""
}

// binaryDoubt says why the event's binary may be the agent's writing: not
// a plain path, or not the binary its reason names; "" when neither.
func binaryDoubt(ev *Event) string {
	if !plainBinary(ev.Binary) {
		return "the binary " + strconv.Quote(ev.Binary) + " is not a plain absolute path"
	}
	named, whole := reasonBinary(ev.Reason)
	if named == "" {
		return ""
	}
	if named != ev.Binary && (whole || !strings.HasPrefix(ev.Binary, named)) {
		return "the reason names the binary " + strconv.Quote(named) + ", the line " + strconv.Quote(ev.Binary)
	}
	return ""
}

// plainBinary reports whether b is what OpenShell prints for an ordinary
// executable: "" (no actor), "-" (unknown, proxy.rs:1822-1825@v0.0.111), or
// an absolute path of letters, digits and . _ - + @ ~ , = % : / without
// "//" (readlink's answer, procfs.rs:127-156@v0.0.111). A space, a bracket,
// a parenthesis, a control or non-ASCII byte is not plain: an injected
// line needs spaces, and a real binary with them is rare enough to read
// by hand.
func plainBinary(b string) bool {
	if b == "" || b == "-" {
		return true
	}
	if b[0] != '/' || strings.Contains(b, "//") || len(b) > injectReach {
		return false
	}
	for i := 0; i < len(b); i++ {
		if !plainByte(b[i]) {
			return false
		}
	}
	return true
}

// plainBytes are the bytes of a plain path.
const plainBytes = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-+@~,=%:/"

// plainByte reports a byte of a plain path.
func plainByte(c byte) bool {
	return strings.IndexByte(plainBytes, c) >= 0
}

// reasonBinary reads the binary a reason names, with whole false when the
// 256-byte cut ended it early (the named text is then a prefix): the Rego
// "binary 'B' not allowed in policy ..." (sandbox-policy.rego:46-62
// @v0.0.111) and the bypass monitor's "BYPASS_DETECT ip:port proto=P
// binary=B action=reject ..." (bypass_monitor/mod.rs:94-107@v0.0.111). The
// reason has the path's line breaks as spaces (shorthand.rs:121-128).
func reasonBinary(r string) (named string, whole bool) {
	if rest, ok := strings.CutPrefix(r, "binary '"); ok {
		return cutNamed(rest, "' not allowed in policy '")
	}
	if strings.HasPrefix(r, "BYPASS_DETECT ") {
		if _, rest, ok := strings.Cut(r, " binary="); ok {
			return cutNamed(rest, " action=reject")
		}
	}
	return "", false
}

// cutNamed returns what precedes end in rest (whole), else rest without
// the cut's "..." (a prefix).
func cutNamed(rest, end string) (string, bool) {
	if named, _, ok := strings.Cut(rest, end); ok {
		return named, true
	}
	return strings.TrimSuffix(rest, "..."), false
}

// matchKey is what a text line and its JSONL record share: every field
// the line shows. An HTTP event without a request shows no destination.
func matchKey(ev *Event) string {
	host, port := ev.Host, ev.Port
	if ev.Class == 4002 && ev.Method == "" {
		host, port = "", 0
	}
	reason := ""
	if ev.Action == "Denied" {
		reason = ev.Reason
	}
	return strings.Join([]string{strconv.Itoa(ev.Class), ev.Action, host, strconv.Itoa(port), ev.Method, ev.Path,
		ev.Binary, strconv.FormatInt(ev.PID, 10), ev.Policy, ev.Engine, reason}, "\x00")
}

// corroborate pairs the text events with the structured ones: per key and
// per input file, in time order, each text event with the earliest unused
// record within matchWindowMS (a greedy matching, which is maximal for
// windows of one width). It reports which events found a record.
func corroborate(events []Event) []bool {
	records := map[string][]int64{}
	texts := map[[2]string][]int{} // by file and key
	for i := range events {
		ev := &events[i]
		switch {
		case ev.Structured():
			records[matchKey(ev)] = append(records[matchKey(ev)], ev.TimeMS)
		case ev.Format != FormatJSONL:
			k := [2]string{ev.File, matchKey(ev)}
			texts[k] = append(texts[k], i)
		}
	}
	found := make([]bool, len(events))
	for k, idx := range texts {
		pair(events, idx, records[k[1]], found)
	}
	return found
}

// pair matches the text events idx (of one key and format) with the
// record times, both sorted by time.
func pair(events []Event, idx []int, times []int64, found []bool) {
	slices.Sort(times)
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(events[a].TimeMS, events[b].TimeMS) })
	j := 0
	for _, i := range idx {
		t := events[i].TimeMS
		for j < len(times) && times[j] < t-matchWindowMS {
			j++
		}
		if j < len(times) && times[j] <= t+matchWindowMS {
			found[i] = true
			j++
		}
	}
}
