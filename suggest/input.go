package suggest

import (
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/fullsend-ai/agent-sandbox/denial"
	"github.com/fullsend-ai/agent-sandbox/placeholder"
)

// Logs are the events and the placeholder values read from --logs paths.
type Logs struct {
	Events []denial.Event
	Inputs []denial.InputStats
	// Values are the placeholders of the run's result.json, when a log
	// directory held one.
	Values placeholder.Values
	// ResultFile is the result.json read, if any.
	ResultFile string
}

// EventCount is the number of OCSF network and HTTP events the inputs held.
func (l *Logs) EventCount() int {
	n := 0
	for _, in := range l.Inputs {
		n += in.Events
	}
	return n
}

// MergeValues merges placeholder values, a later layer's value winning over
// an earlier one's (logs, then a run's result.json, then --set). The result
// is a new map, never nil.
func MergeValues(layers ...placeholder.Values) placeholder.Values {
	out := placeholder.Values{}
	for _, l := range layers {
		for k, v := range l {
			out[k] = v
		}
	}
	return out
}

// logPatterns are the files ReadLogs reads from a log directory: the
// sandbox's shorthand and OCSF JSONL files as `sandbox download` of
// /var/log keeps their names (prefixes "openshell" and "openshell-ocsf",
// crates/openshell-sandbox/src/main.rs:552-557,596-617@v0.0.111,
// :471,525@v0.0.83), and the runner's sandbox.log and gateway.log
// (`openshell logs` output).
var logPatterns = []string{"sandbox*.log", "gateway*.log", "openshell*.log", "openshell-ocsf*.log", "*.jsonl"}

// ReadLogs reads each path: a log file in any format, or a directory
// whose log files (logPatterns) and result.json are read. Files are read in
// a fixed order so the output does not depend on the directory's.
func ReadLogs(paths []string) (*Logs, error) {
	out := &Logs{}
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("--logs: %w", err)
		}
		if !fi.IsDir() {
			if err := out.readFile(p); err != nil {
				return nil, err
			}
			continue
		}
		files := map[string]bool{}
		for _, pat := range logPatterns {
			m, err := filepath.Glob(filepath.Join(p, pat))
			if err != nil {
				return nil, err
			}
			for _, f := range m {
				files[f] = true
			}
		}
		if len(files) == 0 {
			return nil, fmt.Errorf("--logs %s: no log files (%s) in the directory", p, strings.Join(logPatterns, ", "))
		}
		names := make([]string, 0, len(files))
		for f := range files {
			names = append(names, f)
		}
		sort.Strings(names)
		for _, f := range names {
			if err := out.readFile(f); err != nil {
				return nil, err
			}
		}
		rf := filepath.Join(p, "result.json")
		if _, err := os.Stat(rf); err == nil {
			v, err := ReadResultFile(rf)
			if err != nil {
				return nil, err
			}
			out.Values, out.ResultFile = v, rf
		}
	}
	return out, nil
}

func (l *Logs) readFile(name string) error {
	f, err := os.Open(name)
	if err != nil {
		return fmt.Errorf("--logs: %w", err)
	}
	defer f.Close()
	ev, st, err := denial.ReadLog(name, f)
	if err != nil {
		return err
	}
	l.Events = append(l.Events, ev...)
	l.Inputs = append(l.Inputs, st)
	return nil
}

// ReadResultFile reads the placeholders map of a run's result.json
// (runner.Result.Placeholders, runner/runner.go:173): the values the job
// resolved, which suggest turns back into {{NAME}}. Every value is
// validated as its placeholder's; unknown names are skipped.
func ReadResultFile(name string) (placeholder.Values, error) {
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	var r struct {
		Placeholders map[string]string `json:"placeholders"`
	}
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("%s: %w (want a fullsend run result.json)", name, err)
	}
	v := placeholder.Values{}
	known := placeholder.Names()
	keys := make([]string, 0, len(r.Placeholders))
	for k := range r.Placeholders {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !slices.Contains(known, k) {
			continue
		}
		if err := v.Set(k, r.Placeholders[k]); err != nil {
			return nil, fmt.Errorf("%s: placeholders.%s: %w", path.Base(name), k, err)
		}
	}
	return v, nil
}
