package suggest

import (
	"fmt"
	"slices"
	"strings"
)

// generalize (Options.Generalize: only when the user asks, since the agent
// chooses what it is denied) turns the last path segment of rules into "*"
// where OpenShell's own mapper would (generalise_path/looks_like_id,
// crates/openshell-sandbox/src/mechanistic_mapper.rs:380-420@v0.0.111) or
// where three or more values were seen under one prefix and method; never
// in the first two segments, never "**", never a placeholder segment.
func (p *planner) generalize() {
	for k, list := range p.ruleGroups() {
		if len(list) < 3 && !lastSegmentsAreIDs(list) {
			continue
		}
		p.mergeRules(k, list)
	}
}

// ruleGroup is the key of rules generalize may merge: their file,
// endpoint, method and the path before the last segment.
type ruleGroup struct{ file, yp, method, prefix string }

// ruleGroups groups the add-rule suggestions whose path has three
// segments or more and whose last segment is not a placeholder.
func (p *planner) ruleGroups() map[ruleGroup][]*Suggestion {
	groups := map[ruleGroup][]*Suggestion{}
	for _, s := range p.sugs {
		if s.Change != "add-rule" {
			continue
		}
		m, pth, _ := strings.Cut(s.Value, " ")
		i := strings.LastIndexByte(pth, '/')
		if strings.Count(pth, "/") < 3 || strings.Contains(pth[i:], "{{") {
			continue
		}
		k := ruleGroup{s.File, s.YAMLPath, m, pth[:i]}
		groups[k] = append(groups[k], s)
	}
	return groups
}

// lastSegmentsAreIDs reports whether every rule's last path segment looks
// like an id.
func lastSegmentsAreIDs(list []*Suggestion) bool {
	for _, s := range list {
		_, pth, _ := strings.Cut(s.Value, " ")
		if !looksLikeID(pth[strings.LastIndexByte(pth, '/')+1:]) {
			return false
		}
	}
	return true
}

// mergeRules makes the group's first rule end in "*" and folds the
// others' denials and requests into it.
func (p *planner) mergeRules(k ruleGroup, list []*Suggestion) {
	keep := list[0]
	keep.Value = k.method + " " + k.prefix + "/*"
	keep.Widened = true
	keep.addNote(fmt.Sprintf("the last segment became * (%d values seen; ids by OpenShell's looks_like_id): it allows %s %s/<any value>, values never denied included", len(list), k.method, k.prefix))
	for _, s := range list[1:] {
		keep.denials = append(keep.denials, s.denials...)
		keep.requests = append(keep.requests, s.requests...)
		p.sugs = slices.DeleteFunc(p.sugs, func(x *Suggestion) bool { return x == s })
	}
}

// looksLikeID is mechanistic_mapper.rs looks_like_id@v0.0.111: all digits
// and at least 2 long; 24+ hex digits with a '-'; 16+ hex digits only.
func looksLikeID(seg string) bool {
	hex := hexDigits(seg)
	return len(seg) >= 2 && strings.Trim(seg, "0123456789") == "" ||
		hex >= 24 && strings.Contains(seg, "-") ||
		hex >= 16 && hex == len(seg)
}

// hexDigits counts the hex digits in seg.
func hexDigits(seg string) int {
	n := 0
	for i := 0; i < len(seg); i++ {
		if strings.IndexByte("0123456789abcdefABCDEF", seg[i]) >= 0 {
			n++
		}
	}
	return n
}
