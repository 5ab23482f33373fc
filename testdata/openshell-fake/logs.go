package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// The sandbox's logs, the `ocsf_json_enabled` setting and the gateway's log
// stream, as NVIDIA/OpenShell has them at v0.0.83 and v0.0.111:
//
//   - The supervisor writes a shorthand log to a daily rolling file
//     /var/log/openshell.YYYY-MM-DD.log (tracing_appender Rotation::DAILY,
//     filename_prefix "openshell", suffix "log", max_log_files 3):
//     crates/openshell-sandbox/src/main.rs:466-479@v0.0.83,
//     :549-562@v0.0.111. When /var/log cannot be opened it logs to stderr
//     only and writes no file (the comment at main.rs:466-467@v0.0.83,
//     :549-550@v0.0.111): OPENSHELL_FAKE_FAIL=no-log-files.
//   - Line format: "<%Y-%m-%dT%H:%M:%S%.3fZ> OCSF <shorthand>" for OCSF
//     events and "<ts> <LEVEL> <target>: <message>" for other tracing events
//     (crates/openshell-ocsf/src/tracing_layers/shorthand_layer.rs:56-74
//     @v0.0.111; the file layer has with_non_ocsf(true), main.rs:630-632
//     @v0.0.111).
//   - The OCSF JSONL file /var/log/openshell-ocsf.YYYY-MM-DD.log is created
//     eagerly with the same rotation but written only while the
//     `ocsf_json_enabled` flag is set (main.rs:520-535@v0.0.83,
//     :596,603-617@v0.0.111). The sandbox applies the setting from its first
//     settings poll and on every later poll (apply_ocsf_json_setting,
//     crates/openshell-sandbox/src/lib.rs:2398-2416,2646-2657@v0.0.83,
//     :3579-3611,4125-4136@v0.0.111), logging "OCSF JSONL logging toggled"
//     when it changes. The fake applies it at once (no poll delay).
//   - `openshell settings set [NAME] --key K --value V [--global] [--yes]`
//     (main.rs:1791-1811@v0.0.83, :1926-1946@v0.0.111): K must be a
//     registered key (crates/openshell-core/src/settings.rs:110-140 at both
//     tags; ocsf_json_enabled is the Bool at :121-125), a Bool takes
//     true/false/yes/no/1/0/y/n/on/off in any case (settings.rs
//     parse_bool_like:160-166@v0.0.111); --global without --yes fails
//     without a terminal (crates/openshell-cli/src/commands/common.rs
//     :670-679@v0.0.111, run.rs:6215-6224@v0.0.83). A global setting takes
//     the key away from sandbox scope ("will disable sandbox-level management
//     for this key", common.rs:683@v0.0.111), so the effective value is the
//     global one when set.
//   - The gateway stream: the supervisor pushes every tracing event to the
//     gateway (source "sandbox"; OCSF events with level "OCSF", target
//     "ocsf", message = the shorthand without timestamp:
//     crates/openshell-supervisor-process/src/log_push.rs:54-85@v0.0.111),
//     which keeps the last 2000 lines per sandbox
//     (crates/openshell-server/src/tracing_bus.rs:106-107@v0.0.111) and
//     frees them when the sandbox is removed. `openshell logs NAME [-n 200]
//     [--tail] [--since D] [--source gateway|sandbox|all]... [--level L]`
//     (main.rs:467-494@v0.0.83, :510-537@v0.0.111) prints
//     "[secs.mmm] [source:<7] [level:<5] [target] message"
//     (crates/openshell-cli/src/run.rs print_log_line:7552-7582@v0.0.83,
//     :6779-6809@v0.0.111).
//
// OPENSHELL_FAKE_EVENTS names a JSON-lines file of events the fake's
// "proxy" emits during the sandbox's first `sandbox exec` (standing in for
// the agent's requests): {"shorthand": "OCSF body without timestamp",
// "ocsf": {the OCSF JSON object}}. The test author writes both forms from
// OpenShell's formats; the fake only places them.

// registeredSettings are settings.rs REGISTERED_SETTINGS:110-140 at both
// tags: key -> kind ("bool" or the allowed string values).
var registeredSettings = map[string][]string{
	"providers_v2_enabled":           nil,
	"ocsf_json_enabled":              nil,
	"agent_policy_proposals_enabled": nil,
	"proposal_approval_mode":         {"manual", "auto"},
}

// parseBoolLike is settings.rs parse_bool_like:160-166@v0.0.111.
func parseBoolLike(raw string) (bool, bool) {
	switch strings.ToLower(strings.TrimSpace(raw)) {
	case "1", "true", "yes", "y", "on":
		return true, true
	case "0", "false", "no", "n", "off":
		return false, true
	}
	return false, false
}

func (f *fake) globalSettingsPath() string { return filepath.Join(f.state, "global-settings.json") }

func (f *fake) globalSettings() map[string]string {
	m := map[string]string{}
	if b, err := os.ReadFile(f.globalSettingsPath()); err == nil {
		_ = json.Unmarshal(b, &m)
	}
	return m
}

// settings implements `openshell settings set`.
func (f *fake) settings(args []string) int {
	if len(args) == 0 || args[0] != "set" {
		return fail(2, "openshell-fake implements only `settings set`")
	}
	if code := f.requireGateway(); code != 0 {
		return code
	}
	fl, code := parseFlags(args[1:], map[string]bool{"--key": true, "--value": true, "--global": false, "--yes": false}, 1)
	if code != 0 {
		return code
	}
	key, value := fl.value("--key"), fl.value("--value")
	if !fl.has("--key") || !fl.has("--value") {
		return fail(2, "the following required arguments were not provided: --key <KEY> --value <VALUE>")
	}
	allowed, ok := registeredSettings[key]
	if !ok {
		return fail(1, "unknown setting key '%s'. Allowed keys: agent_policy_proposals_enabled,ocsf_json_enabled,proposal_approval_mode,providers_v2_enabled", key)
	}
	stored, code := settingValue(key, value, allowed)
	if code != 0 {
		return code
	}
	if fl.has("--global") {
		return f.setGlobalSetting(fl.has("--yes"), key, value, stored)
	}
	if len(fl.pos) != 1 {
		return fail(2, "openshell-fake requires a sandbox name")
	}
	return f.setSandboxSetting(fl.pos[0], key, value, stored)
}

// setSandboxSetting is `settings set NAME`: a key set globally cannot be
// set per sandbox.
func (f *fake) setSandboxSetting(name, key, value, stored string) int {
	s, code := f.load(name)
	if code != 0 {
		return code
	}
	if _, global := f.globalSettings()[key]; global {
		return fail(1, "status: FailedPrecondition, message: \"setting '%s' is managed globally\" (openshell-fake)", key)
	}
	if s.Settings == nil {
		s.Settings = map[string]string{}
	}
	s.Settings[key] = stored
	f.save(s)
	f.applyOCSFSetting(s)
	fmt.Printf("✓ Set sandbox setting %s=%s for %s (revision %d)\n", key, value, s.Name, f.counter("settings-revision"))
	return 0
}

// settingValue checks value against the key's allowed values (nil: a
// bool, stored as "true" or "false") and returns the value to store.
func settingValue(key, value string, allowed []string) (string, int) {
	if allowed == nil {
		b, ok := parseBoolLike(value)
		if !ok {
			return "", fail(1, "invalid bool value '%s' for key '%s'; expected one of: true,false,yes,no,1,0", value, key)
		}
		return strconv.FormatBool(b), 0
	}
	if !contains(allowed, value) {
		return "", fail(1, "invalid value '%s' for key '%s'; expected one of: %s", value, key, strings.Join(allowed, ", "))
	}
	return value, 0
}

// setGlobalSetting is `settings set --global`: it needs --yes.
func (f *fake) setGlobalSetting(yes bool, key, value, stored string) int {
	if !yes {
		return fail(1, "global setting updates require confirmation; pass --yes in non-interactive mode")
	}
	g := f.globalSettings()
	g[key] = stored
	b, _ := json.Marshal(g)
	os.WriteFile(f.globalSettingsPath(), b, 0o600)
	fmt.Printf("✓ Set global setting %s=%s (revision %d)\n", key, value, f.counter("settings-revision"))
	return 0
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// ocsfEnabled is the effective ocsf_json_enabled of a sandbox: the global
// value when one is set, else the sandbox's.
func (f *fake) ocsfEnabled(s *sandbox) bool {
	if v, ok := f.globalSettings()["ocsf_json_enabled"]; ok {
		return v == "true"
	}
	return s.Settings["ocsf_json_enabled"] == "true"
}

// logDate is the rolling appender's file date (UTC).
func logDate(t time.Time) string { return t.UTC().Format("2006-01-02") }

func (f *fake) shorthandFile(s *sandbox, t time.Time) string {
	return filepath.Join(f.root(s.Name), "var", "log", "openshell."+logDate(t)+".log")
}

func (f *fake) jsonlFile(s *sandbox, t time.Time) string {
	return filepath.Join(f.root(s.Name), "var", "log", "openshell-ocsf."+logDate(t)+".log")
}

// startSupervisorLogs is the supervisor starting in a new sandbox: the two
// rolling files are created (unless no-log-files), the first lines logged,
// and the first settings poll applied.
func (f *fake) startSupervisorLogs(s *sandbox) {
	now := time.Now()
	if _, ok := f.fails["no-log-files"]; !ok {
		os.MkdirAll(filepath.Dir(f.shorthandFile(s, now)), 0o755)
		for _, p := range []string{f.shorthandFile(s, now), f.jsonlFile(s, now)} {
			if fh, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
				fh.Close()
			}
		}
	}
	f.tracing(s, "INFO", "openshell_sandbox", "Starting sandbox (openshell-fake supervisor)")
	f.gatewayLine(s, "INFO", "openshell_server", "sandbox "+s.Name+" is Ready (openshell-fake)")
	f.applyOCSFSetting(s)
}

// applyOCSFSetting models apply_ocsf_json_setting: the toggle is logged
// when the effective value changes.
func (f *fake) applyOCSFSetting(s *sandbox) {
	on := f.ocsfEnabled(s)
	if on == s.OCSFJSON {
		return
	}
	s.OCSFJSON = on
	f.save(s)
	f.tracing(s, "INFO", "openshell_sandbox", "OCSF JSONL logging toggled")
}

// tracing is one non-OCSF tracing event of the supervisor: to the
// shorthand file and the gateway stream.
func (f *fake) tracing(s *sandbox, level, target, msg string) {
	now := time.Now()
	f.appendFile(f.shorthandFile(s, now), fmt.Sprintf("%s %s %s: %s\n", stamp(now), level, target, msg))
	f.stream(s, streamLine{MS: now.UnixMilli(), Source: "sandbox", Level: level, Target: target, Message: msg})
}

func (f *fake) gatewayLine(s *sandbox, level, target, msg string) {
	f.stream(s, streamLine{MS: time.Now().UnixMilli(), Source: "gateway", Level: level, Target: target, Message: msg})
}

func stamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// appendFile appends to an existing log file only: when the supervisor
// could not open /var/log there is none (no-log-files).
func (f *fake) appendFile(p, text string) {
	fh, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return
	}
	defer fh.Close()
	fh.WriteString(text)
}

// fixtureEvent is one line of OPENSHELL_FAKE_EVENTS.
type fixtureEvent struct {
	Shorthand string          `json:"shorthand"`
	OCSF      json.RawMessage `json:"ocsf"`
}

// emitEvents writes the fixture's events once per sandbox, at its first
// exec: shorthand file, JSONL file (when enabled), gateway stream.
func (f *fake) emitEvents(s *sandbox) int {
	file := os.Getenv("OPENSHELL_FAKE_EVENTS")
	if file == "" || s.EventsEmitted {
		return 0
	}
	s.EventsEmitted = true
	f.save(s)
	fh, err := os.Open(file)
	if err != nil {
		return fail(1, "openshell-fake: OPENSHELL_FAKE_EVENTS: %v", err)
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var ev fixtureEvent
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil || !strings.HasPrefix(ev.Shorthand, "OCSF ") {
			return fail(1, "openshell-fake: %s:%d: want {\"shorthand\":\"OCSF ...\",\"ocsf\":{...}}", file, n)
		}
		now := time.Now()
		f.appendFile(f.shorthandFile(s, now), stamp(now)+" "+ev.Shorthand+"\n")
		if len(ev.OCSF) > 0 && f.ocsfEnabled(s) {
			f.appendFile(f.jsonlFile(s, now), stampOCSF(ev.OCSF, now)+"\n")
		}
		f.stream(s, streamLine{MS: now.UnixMilli(), Source: "sandbox", Level: "OCSF", Target: "ocsf",
			Message: strings.TrimPrefix(ev.Shorthand, "OCSF ")})
	}
	return 0
}

// stampOCSF renders a fixture's OCSF event as one JSONL line whose "time"
// is the emission time in milliseconds, as OpenShell stamps every event
// when it is built (BaseEventData::new, time:
// chrono::Utc::now().timestamp_millis(), crates/openshell-ocsf/src/events/
// base_event.rs:156@v0.0.111; the field at :40-41, serialized at :94). A
// fixture's own "time" is replaced, so the JSONL line and the shorthand
// line of one event carry the same instant.
func stampOCSF(raw json.RawMessage, now time.Time) string {
	var ev map[string]json.RawMessage
	if err := json.Unmarshal(raw, &ev); err != nil {
		return string(raw)
	}
	ev["time"] = json.RawMessage(strconv.FormatInt(now.UnixMilli(), 10))
	b, err := json.Marshal(ev)
	if err != nil {
		return string(raw)
	}
	return string(b)
}

// streamLine is one SandboxLogLine the gateway keeps.
type streamLine struct {
	MS      int64  `json:"ms"`
	Source  string `json:"source"`
	Level   string `json:"level"`
	Target  string `json:"target"`
	Message string `json:"message"`
}

// tailCap is tracing_bus.rs DEFAULT_TAIL:106-107@v0.0.111.
const tailCap = 2000

func (f *fake) streamPath(name string) string {
	return filepath.Join(f.state, "sandboxes", name+".stream")
}

func (f *fake) stream(s *sandbox, l streamLine) {
	lines := f.readStream(s.Name)
	lines = append(lines, l)
	if len(lines) > tailCap {
		lines = lines[len(lines)-tailCap:]
	}
	var b strings.Builder
	for _, l := range lines {
		j, _ := json.Marshal(l)
		b.Write(j)
		b.WriteByte('\n')
	}
	os.WriteFile(f.streamPath(s.Name), []byte(b.String()), 0o600)
}

func (f *fake) readStream(name string) []streamLine {
	b, err := os.ReadFile(f.streamPath(name))
	if err != nil {
		return nil
	}
	var out []streamLine
	for _, line := range strings.Split(string(b), "\n") {
		var l streamLine
		if json.Unmarshal([]byte(line), &l) == nil {
			out = append(out, l)
		}
	}
	return out
}

// logs implements `openshell logs` (see the sources above): the last -n
// lines (default 200) of the gateway's tail, filtered by --source (default
// all), printed as print_log_line does.
func (f *fake) logs(args []string) int {
	fl, code := parseFlags(args, map[string]bool{"-n": true, "--tail": false, "--since": true, "--source": true, "--level": true}, 1)
	if code != 0 {
		return code
	}
	if code := f.requireGateway(); code != 0 {
		return code
	}
	if len(fl.pos) != 1 {
		return fail(2, "a sandbox name is required")
	}
	if _, code := f.load(fl.pos[0]); code != 0 {
		return code
	}
	n := 200
	if v := fl.value("-n"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 0 {
			return fail(2, "invalid value '%s' for '-n <N>': invalid digit found in string", v)
		}
	}
	for _, l := range tail(f.readStream(fl.pos[0]), fl.vals["--source"], n) {
		fmt.Printf("[%d.%03d] [%-7s] [%-5s] [%s] %s\n", l.MS/1000, l.MS%1000, l.Source, l.Level, l.Target, l.Message)
	}
	return 0
}

// tail is the last n lines from the given sources (none: all).
func tail(lines []streamLine, sources []string, n int) []streamLine {
	if len(sources) == 0 {
		sources = []string{"all"}
	}
	var keep []streamLine
	for _, l := range lines {
		if contains(sources, "all") || contains(sources, l.Source) {
			keep = append(keep, l)
		}
	}
	if len(keep) > n {
		keep = keep[len(keep)-n:]
	}
	return keep
}

// downloadAllowed is the CLI's workspace boundary on `sandbox download`:
// at v0.0.83 the path must be absolute and lie under /sandbox, lexically
// and after realpath (crates/openshell-cli/src/ssh.rs:865-912@v0.0.83);
// at v0.0.111 a relative path is taken from the workspace root (`pwd -P`,
// /sandbox for the sandbox user) and the cleaned and resolved path must lie
// under it (ssh.rs:876-938@v0.0.111). So neither tag downloads /var/log.
func (f *fake) downloadAllowed(name, p string) int {
	const root = "/sandbox"
	if p == "" {
		return fail(1, "sandbox source path is empty")
	}
	if !strings.HasPrefix(p, "/") {
		if !f.atLeast(0, 0, 111) {
			return fail(1, "sandbox source path must be absolute (got '%s')", p)
		}
		p = root + "/" + p
	}
	clean := filepath.Clean(p)
	if clean != root && !strings.HasPrefix(clean, root+"/") {
		return fail(1, "sandbox source path '%s' is outside the sandbox workspace (%s)", p, root)
	}
	local, err := f.mapPath(name, clean)
	if err != nil {
		return fail(1, "%v", err)
	}
	resolved, err := filepath.EvalSymlinks(local)
	if err != nil {
		return 0 // missing: the caller reports it
	}
	sbRoot, _ := filepath.EvalSymlinks(filepath.Join(f.root(name), "sandbox"))
	if resolved != sbRoot && !strings.HasPrefix(resolved, sbRoot+"/") {
		return fail(1, "sandbox source path '%s' resolves outside the sandbox workspace (%s)", p, root)
	}
	return 0
}
