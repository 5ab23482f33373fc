package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

func main() {
	os.Exit(run(os.Args))
}

type fake struct {
	state   string
	version [3]int
	fails   map[string]string
}

func run(argv []string) int {
	state := os.Getenv("OPENSHELL_FAKE_STATE")
	if state == "" {
		fmt.Fprintln(os.Stderr, "openshell-fake: OPENSHELL_FAKE_STATE is not set")
		return 2
	}
	f := &fake{state: state, fails: map[string]string{}}
	v := os.Getenv("OPENSHELL_FAKE_VERSION")
	if v == "" {
		v = "0.0.111"
	}
	if _, err := fmt.Sscanf(v, "%d.%d.%d", &f.version[0], &f.version[1], &f.version[2]); err != nil {
		fmt.Fprintf(os.Stderr, "openshell-fake: bad OPENSHELL_FAKE_VERSION %q\n", v)
		return 2
	}
	for _, item := range strings.Split(os.Getenv("OPENSHELL_FAKE_FAIL"), ",") {
		if item = strings.TrimSpace(item); item != "" {
			k, val, _ := strings.Cut(item, "=")
			f.fails[k] = val
		}
	}
	if err := os.MkdirAll(filepath.Join(state, "sandboxes"), 0o700); err != nil {
		fmt.Fprintln(os.Stderr, "openshell-fake:", err)
		return 2
	}
	f.record(argv)
	switch filepath.Base(argv[0]) {
	case "openshell-gateway":
		return f.gateway(argv[1:])
	case "podman":
		return f.podman(argv[1:])
	case "ssh":
		return sshStub()
	}
	return f.dispatch(argv[1:])
}

// record appends the call to the JSON-lines log: argv and env NAMES only.
func (f *fake) record(argv []string) {
	logPath := os.Getenv("OPENSHELL_FAKE_LOG")
	if logPath == "" {
		logPath = filepath.Join(f.state, "calls.jsonl")
	}
	names := []string{}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		names = append(names, k)
	}
	sort.Strings(names)
	line, _ := json.Marshal(map[string]any{"argv": append([]string{filepath.Base(argv[0])}, argv[1:]...), "env": names})
	fh, err := os.OpenFile(logPath, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return
	}
	defer fh.Close()
	fh.Write(append(line, '\n'))
}

func (f *fake) atLeast(a, b, c int) bool {
	v := f.version
	return v[0] > a || v[0] == a && (v[1] > b || v[1] == b && v[2] >= c)
}

func (f *fake) versionString() string {
	return fmt.Sprintf("%d.%d.%d", f.version[0], f.version[1], f.version[2])
}

// fail prints a clap/miette-like error and returns the exit code.
func fail(code int, format string, args ...any) int {
	fmt.Fprintf(os.Stderr, "error: "+format+"\n", args...)
	return code
}

// dispatch runs an `openshell` command line (without the program name).
func (f *fake) dispatch(args []string) int {
	if len(args) == 0 {
		return fail(2, "a subcommand is required")
	}
	switch args[0] {
	case "--version", "-V":
		fmt.Printf("openshell %s\n", f.versionString())
		return 0
	case "status":
		return f.status(args[1:])
	case "sandbox":
		return f.sandboxCmd(args[1:])
	case "policy":
		return f.policyCmd(args[1:])
	case "provider":
		return f.providerCmd(args[1:])
	case "gateway":
		return f.gatewayCmd(args[1:])
	case "logs":
		return f.logs(args[1:])
	case "settings":
		return f.settings(args[1:])
	}
	return fail(2, "unrecognized subcommand '%s'", args[0])
}

// sandboxCmd runs `openshell sandbox <subcommand> ...`; args starts at the
// subcommand.
func (f *fake) sandboxCmd(args []string) int {
	if len(args) < 1 {
		return fail(2, "'openshell sandbox' requires a subcommand")
	}
	if code := f.requireGateway(); code != 0 {
		return code
	}
	switch args[0] {
	case "create":
		return f.create(args[1:])
	case "get":
		return f.get(args[1:])
	case "exec":
		return f.exec(args[1:])
	case "upload":
		return f.upload(args[1:])
	case "download":
		return f.download(args[1:])
	case "delete":
		return f.delete(args[1:])
	case "list":
		return f.list(args[1:])
	case "provider":
		return f.sandboxProvider(args[1:])
	}
	return fail(2, "unrecognized subcommand '%s'", args[0])
}

// policyCmd runs `openshell policy set|get ...`; args starts at the
// subcommand.
func (f *fake) policyCmd(args []string) int {
	if len(args) < 1 || args[0] != "set" && args[0] != "get" {
		return fail(2, "openshell-fake implements only `policy set` and `policy get`")
	}
	if code := f.requireGateway(); code != 0 {
		return code
	}
	if args[0] == "get" {
		return f.policyGet(args[1:])
	}
	return f.policySet(args[1:])
}

// providerCmd runs `openshell provider ...`: the profile commands, else
// the provider CRUD; args starts at the subcommand.
func (f *fake) providerCmd(args []string) int {
	if code := f.requireGateway(); code != 0 {
		return code
	}
	if len(args) > 0 && (args[0] == "profile" || args[0] == "list-profiles") {
		return f.profileCmd(args)
	}
	return f.provider(args)
}

// flags is a parsed command line: flag values (repeatable) and positionals.
type flags struct {
	vals  map[string][]string
	pos   []string
	after []string // after "--"
	dash  bool
}

func (fl flags) value(names ...string) string {
	for _, n := range names {
		if v := fl.vals[n]; len(v) > 0 {
			return v[len(v)-1]
		}
	}
	return ""
}

func (fl flags) has(names ...string) bool {
	for _, n := range names {
		if _, ok := fl.vals[n]; ok {
			return true
		}
	}
	return false
}

// parseFlags parses args strictly: spec maps each allowed flag to whether it
// takes a value; anything else is a usage error (exit 2), as with clap.
func parseFlags(args []string, spec map[string]bool, maxPos int) (flags, int) {
	fl := flags{vals: map[string][]string{}}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			fl.dash = true
			fl.after = args[i+1:]
			break
		}
		if strings.HasPrefix(a, "-") && len(a) > 1 {
			name, val, hasVal := strings.Cut(a, "=")
			takes, ok := spec[name]
			if !ok {
				return fl, fail(2, "unexpected argument '%s' found", name)
			}
			if takes && !hasVal {
				if i+1 >= len(args) {
					return fl, fail(2, "a value is required for '%s <VALUE>' but none was supplied", name)
				}
				i++
				val = args[i]
			} else if !takes && hasVal {
				return fl, fail(2, "unexpected value '%s' for '%s' found", val, name)
			}
			fl.vals[name] = append(fl.vals[name], val)
			continue
		}
		fl.pos = append(fl.pos, a)
	}
	if len(fl.pos) > maxPos {
		return fl, fail(2, "unexpected argument '%s' found", fl.pos[maxPos])
	}
	return fl, 0
}
