package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// Sandbox labels and `sandbox list`, as NVIDIA/OpenShell has them at both
// v0.0.83 (e3d26dd) and v0.0.111 (20d2e86):
//
//   - `sandbox create --label KEY=VALUE` (repeatable): crates/openshell-cli/src/main.rs
//     v0.0.83:1324-1326, v0.0.111:1444-1446; split once on '=', else the CLI fails
//     "invalid label format '...', expected key=value" (v0.0.83:2646-2657,
//     v0.0.111:3021-3032). The gateway validates every key and value as a Kubernetes
//     label (crates/openshell-server/src/grpc/sandbox.rs v0.0.83:131-135,
//     v0.0.111:234-238; validation.rs validate_label_key v0.0.83:400,
//     v0.0.111:597, validate_label_value v0.0.83:510, v0.0.111:707).
//   - `sandbox list [--limit N(100)] [--offset N(0)] [--ids | --names] [--selector
//     k1=v1,k2=v2] [-o table|yaml|json]`, --ids/--names conflicting with each
//     other and with -o (main.rs v0.0.83:1363-1386, v0.0.111:1497-1525, which adds
//     --all-workspaces). A selector matches sandboxes carrying every pair
//     (validation.rs validate_label_selector v0.0.83:554, v0.0.111:751;
//     persistence/mod.rs parse_label_selector v0.0.83:554).
//   - `-o json` prints a pretty JSON array (output.rs print_output_collection,
//     v0.0.83/v0.0.111:54-67, "[]" when empty) of sandbox_to_json objects
//     (run.rs v0.0.83:3427: id, name, labels, resource_version, created_at,
//     phase, current_policy_version; v0.0.111:2088 adds workspace and
//     annotations); created_at is "YYYY-MM-DD HH:MM:SS" UTC (run.rs
//     format_epoch_ms, v0.0.83:169). The table prints NAME, CREATED, PHASE
//     with a bold header, or "No sandboxes found." (run.rs v0.0.83:3340-3424,
//     v0.0.111:1959-2086).

// parseLabels reads the --label values of `sandbox create`.
func parseLabels(vals []string) (map[string]string, int) {
	labels := map[string]string{}
	for _, kv := range vals {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return nil, fail(1, "invalid label format '%s', expected key=value", kv)
		}
		if msg := labelKeyError(k); msg != "" {
			return nil, fail(1, "status: InvalidArgument, message: \"%s\"", msg)
		}
		if msg := labelValueError(v); msg != "" {
			return nil, fail(1, "status: InvalidArgument, message: \"%s\"", msg)
		}
		labels[k] = v
	}
	return labels, 0
}

// labelKeyError is validate_label_key: [prefix/]name, the name at most 63
// alphanumerics, '-', '_', '.', starting and ending alphanumeric; the
// prefix a lower-case DNS subdomain.
func labelKeyError(key string) string {
	if key == "" || len(key) > 253 {
		return fmt.Sprintf("invalid label key '%s'", key)
	}
	prefix, name, hasPrefix := strings.Cut(key, "/")
	if !hasPrefix {
		name = key
	}
	if msg := labelValueError(name); msg != "" || name == "" {
		return fmt.Sprintf("label key name segment is invalid: '%s'", key)
	}
	if hasPrefix && !dnsSubdomain(prefix) {
		return fmt.Sprintf("label key prefix must be a DNS subdomain (lowercase alphanumeric, '-', '.'): '%s'", key)
	}
	return ""
}

// dnsSubdomain is the label key prefix rule: lower-case alphanumerics, '-'
// and '.', not starting or ending with '-' or '.', no "..".
func dnsSubdomain(s string) bool {
	if s == "" || len(s) > 253 || strings.Contains(s, "..") || strings.Trim(s, "-.") != s {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

// labelValueError is validate_label_value.
func labelValueError(v string) string {
	if v == "" {
		return ""
	}
	if len(v) > 63 {
		return fmt.Sprintf("label value exceeds 63 characters: '%s'", v)
	}
	alnum := func(c rune) bool { return unicode.IsLetter(c) || unicode.IsDigit(c) }
	for _, c := range v {
		if !alnum(c) && c != '-' && c != '_' && c != '.' {
			return fmt.Sprintf("label value contains invalid characters (must be alphanumeric, '-', '_', or '.'): '%s'", v)
		}
	}
	r := []rune(v)
	if !alnum(r[0]) || !alnum(r[len(r)-1]) {
		return fmt.Sprintf("label value must start and end with an alphanumeric character: '%s'", v)
	}
	return ""
}

// parseSelector is validate_label_selector: "k1=v1,k2=v2", pairs trimmed,
// empty pairs skipped.
func parseSelector(sel string) (map[string]string, int) {
	want := map[string]string{}
	for _, pair := range strings.Split(sel, ",") {
		if pair = strings.TrimSpace(pair); pair == "" {
			continue
		}
		k, v, ok := strings.Cut(pair, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok || k == "" {
			return nil, fail(1, "status: InvalidArgument, message: \"invalid label selector: expected 'key=value', got '%s'\"", pair)
		}
		if msg := labelKeyError(k) + labelValueError(v); msg != "" {
			return nil, fail(1, "status: InvalidArgument, message: \"%s\"", msg)
		}
		want[k] = v
	}
	return want, 0
}

func (f *fake) list(args []string) int {
	spec := map[string]bool{"--limit": true, "--offset": true, "--ids": false, "--names": false,
		"--selector": true, "-o": true, "--output": true}
	if f.atLeast(0, 0, 111) {
		spec["--all-workspaces"] = false
	}
	fl, code := parseFlags(args, spec, 0)
	if code != 0 {
		return code
	}
	out, code := listFormat(fl)
	if code != 0 {
		return code
	}
	limit, offset := intFlag(fl, "--limit", 100), intFlag(fl, "--offset", 0)
	want, code := parseSelector(fl.value("--selector"))
	if code != 0 {
		return code
	}
	sbs := f.matching(want)
	sbs = sbs[min(offset, len(sbs)):]
	sbs = sbs[:min(limit, len(sbs))]
	switch {
	case out == "json":
		return f.printListJSON(sbs)
	case out == "ids":
		for _, s := range sbs {
			fmt.Println("fake-" + s.Name)
		}
		return 0
	case out == "names":
		for _, s := range sbs {
			fmt.Println(s.Name)
		}
		return 0
	}
	printTable(sbs)
	return 0
}

// printTable prints NAME, CREATED and PHASE, or "No sandboxes found.".
func printTable(sbs []*sandbox) {
	if len(sbs) == 0 {
		fmt.Println("No sandboxes found.")
		return
	}
	width := 4
	for _, s := range sbs {
		width = max(width, len(s.Name))
	}
	fmt.Printf("\x1b[1mNAME\x1b[0m%s  \x1b[1mCREATED\x1b[0m%s  \x1b[1mPHASE\x1b[0m\n", strings.Repeat(" ", width-4), strings.Repeat(" ", 12))
	for _, s := range sbs {
		fmt.Printf("%-*s  %-19s  %s\n", width, s.Name, created(s), s.Phase)
	}
}

// listFormat is what `sandbox list` prints: table, json, ids or names
// (--ids and --names conflict with each other and with -o, as with clap).
func listFormat(fl flags) (string, int) {
	ids, names, out := fl.has("--ids"), fl.has("--names"), fl.value("-o", "--output")
	switch {
	case ids && names:
		return "", fail(2, "the argument '--ids' cannot be used with '--names'")
	case (ids || names) && fl.has("-o", "--output"):
		return "", fail(2, "the argument '--output <OUTPUT>' cannot be used with '--ids' or '--names'")
	case ids:
		return "ids", 0
	case names:
		return "names", 0
	case out == "":
		return "table", 0
	case out != "table" && out != "json":
		return "", fail(2, "openshell-fake: -o %s is not implemented (table, json)", out)
	}
	return out, 0
}

func intFlag(fl flags, name string, def int) int {
	if n, err := strconv.Atoi(fl.value(name)); err == nil {
		return n
	}
	return def
}

// matching returns the sandboxes carrying every label of want, by name.
func (f *fake) matching(want map[string]string) []*sandbox {
	files, _ := filepath.Glob(filepath.Join(f.state, "sandboxes", "*.json"))
	var out []*sandbox
	for _, p := range files {
		s, code := f.load(strings.TrimSuffix(filepath.Base(p), ".json"))
		if code != 0 {
			continue
		}
		ok := true
		for k, v := range want {
			if got, has := s.Labels[k]; !has || got != v {
				ok = false
			}
		}
		if ok {
			out = append(out, s)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// sandboxJSON is sandbox_to_json of the fake's version.
func (f *fake) sandboxJSON(s *sandbox) map[string]any {
	labels := s.Labels
	if labels == nil {
		labels = map[string]string{}
	}
	m := map[string]any{"id": "fake-" + s.Name, "name": s.Name, "labels": labels, "resource_version": 1,
		"created_at": created(s), "phase": s.Phase, "current_policy_version": len(s.Revisions)}
	if f.atLeast(0, 0, 111) {
		m["workspace"], m["annotations"] = "default", map[string]string{}
	}
	return m
}

func (f *fake) printListJSON(sbs []*sandbox) int {
	items := make([]map[string]any, 0, len(sbs))
	for _, s := range sbs {
		items = append(items, f.sandboxJSON(s))
	}
	b, _ := json.MarshalIndent(items, "", "  ")
	fmt.Println(string(b))
	return 0
}

func created(s *sandbox) string {
	if s.CreatedMS == 0 {
		return "-"
	}
	return time.UnixMilli(s.CreatedMS).UTC().Format("2006-01-02 15:04:05")
}
