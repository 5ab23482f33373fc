package suggest

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
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
		maps.Copy(out, l)
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
		if fi.IsDir() {
			err = out.readDir(p)
		} else {
			err = out.readFile(p)
		}
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// readDir reads a log directory: its log files, in name order, then its
// result.json, if any.
func (l *Logs) readDir(dir string) error {
	names, err := logFiles(dir)
	if err != nil {
		return err
	}
	for _, f := range names {
		if err := l.readFile(f); err != nil {
			return err
		}
	}
	rf := filepath.Join(dir, "result.json")
	if _, err := os.Stat(rf); err != nil {
		return nil
	}
	v, err := ReadResultFile(rf)
	if err != nil {
		return err
	}
	l.Values, l.ResultFile = v, rf
	return nil
}

// logFiles are the files of dir that match logPatterns, sorted; an error
// when there are none.
func logFiles(dir string) ([]string, error) {
	files := map[string]bool{}
	for _, pat := range logPatterns {
		m, err := filepath.Glob(filepath.Join(dir, pat))
		if err != nil {
			return nil, err
		}
		for _, f := range m {
			files[f] = true
		}
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("--logs %s: no log files (%s) in the directory", dir, strings.Join(logPatterns, ", "))
	}
	return slices.Sorted(maps.Keys(files)), nil
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
	for _, k := range slices.Sorted(maps.Keys(r.Placeholders)) {
		if !slices.Contains(known, k) {
			continue
		}
		if err := v.Set(k, r.Placeholders[k]); err != nil {
			return nil, fmt.Errorf("%s: placeholders.%s: %w", path.Base(name), k, err)
		}
	}
	return v, nil
}
