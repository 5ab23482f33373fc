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

// Logs are the events and the placeholder values read from --logs paths,
// run by run.
type Logs struct {
	Events []denial.Event
	Inputs []denial.InputStats
	// Runs are the runs the events come from, in the order read: the log
	// files given by themselves are one run, a run's directory another, and
	// each subdirectory of a directory of runs one more.
	Runs []RunLog
	// Values are the placeholders of the runs' result.json files: those on
	// which every run that has one agrees.
	Values placeholder.Values
	// ResultFile is the result.json read, if exactly one was.
	ResultFile string
	// Warnings say what the runs disagree on.
	Warnings []string
}

// RunLog is one run's evidence: its log files, read and assessed together
// (denial.Assess), and its result.json's placeholders.
type RunLog struct {
	Name   string
	Files  []string
	Values placeholder.Values
	// ResultFile is the run's result.json, "" when it has none.
	ResultFile string
	// Suspect counts the run's events the agent could have written.
	Suspect int
}

// RunOf maps each log file read to the name of its run.
func (l *Logs) RunOf() map[string]string {
	out := map[string]string{}
	for _, r := range l.Runs {
		for _, f := range r.Files {
			out[f] = r.Name
		}
	}
	return out
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

// ReadLogs reads each path: a log file in any format, or a directory. A
// directory holding log files (logPatterns) is one run's, with its
// result.json; each of its subdirectories holding log files is a run too,
// so a directory of runs (the runner's evidence artifact, one directory a
// sandbox) reads as its runs. The files given by themselves are read as one
// run. Each run's events are assessed together (denial.Assess): trust is a
// property of one run's evidence. Files are read in a fixed order so the
// output does not depend on the directory's.
func ReadLogs(paths []string) (*Logs, error) {
	out := &Logs{}
	var loose []string
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("--logs: %w", err)
		}
		if !fi.IsDir() {
			loose = append(loose, p)
			continue
		}
		runs, err := runDirs(p)
		if err != nil {
			return nil, err
		}
		for _, r := range runs {
			if err := out.readRun(r); err != nil {
				return nil, err
			}
		}
	}
	if len(loose) > 0 {
		if err := out.readRun(RunLog{Name: strings.Join(loose, ","), Files: loose}); err != nil {
			return nil, err
		}
	}
	out.agree()
	return out, nil
}

// runDirs are the runs of a --logs directory: the directory itself when it
// holds log files, and each subdirectory that does, in name order; an error
// when none does.
func runDirs(dir string) ([]RunLog, error) {
	var runs []RunLog
	if r, ok, err := runIn(dir); err != nil || ok {
		if err != nil {
			return nil, err
		}
		runs = append(runs, r)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("--logs: %w", err)
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue // a link to a directory is not followed
		}
		r, ok, err := runIn(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		if ok {
			runs = append(runs, r)
		}
	}
	if len(runs) == 0 {
		return nil, fmt.Errorf("--logs %s: no log files (%s) in the directory or its subdirectories", dir, strings.Join(logPatterns, ", "))
	}
	return runs, nil
}

// runIn is the run whose log files are in dir: its files and its
// result.json's placeholders; false when dir holds no log file.
func runIn(dir string) (RunLog, bool, error) {
	files, err := logFiles(dir)
	if err != nil || len(files) == 0 {
		return RunLog{}, false, err
	}
	r := RunLog{Name: dir, Files: files}
	rf := filepath.Join(dir, "result.json")
	if _, err := os.Stat(rf); err != nil {
		return r, true, nil
	}
	if r.Values, err = ReadResultFile(rf); err != nil {
		return RunLog{}, false, err
	}
	r.ResultFile = rf
	return r, true, nil
}

// logFiles are the regular files of dir that match logPatterns, sorted.
func logFiles(dir string) ([]string, error) {
	files := map[string]bool{}
	for _, pat := range logPatterns {
		m, err := filepath.Glob(filepath.Join(dir, pat))
		if err != nil {
			return nil, err
		}
		for _, f := range m {
			if fi, err := os.Lstat(f); err == nil && fi.Mode().IsRegular() {
				files[f] = true
			}
		}
	}
	return slices.Sorted(maps.Keys(files)), nil
}

// readRun reads the files of one run and assesses their events together.
func (l *Logs) readRun(r RunLog) error {
	var events []denial.Event
	for _, name := range r.Files {
		ev, st, err := readFile(name)
		if err != nil {
			return err
		}
		events = append(events, ev...)
		l.Inputs = append(l.Inputs, st)
	}
	r.Suspect = denial.Assess(events)
	l.Events = append(l.Events, events...)
	l.Runs = append(l.Runs, r)
	return nil
}

// agree sets the placeholder values every run's result.json agrees on,
// warning of each one the runs disagree on (it stays concrete).
func (l *Logs) agree() {
	var withValues []RunLog
	for _, r := range l.Runs {
		if r.ResultFile != "" {
			withValues = append(withValues, r)
		}
	}
	if len(withValues) == 0 {
		return
	}
	if len(withValues) == 1 {
		l.ResultFile = withValues[0].ResultFile
	}
	l.Values = placeholder.Values{}
	keys := map[string]bool{}
	for _, r := range withValues {
		for k := range r.Values {
			keys[k] = true
		}
	}
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		v := withValues[0].Values[k]
		if slices.ContainsFunc(withValues[1:], func(r RunLog) bool { return r.Values[k] != v }) {
			l.Warnings = append(l.Warnings, fmt.Sprintf("the runs' result.json files disagree on %s: it is not put back into paths (give --set %s=VALUE to choose one)", k, k))
			continue
		}
		l.Values[k] = v
	}
}

// readFile reads one log file.
func readFile(name string) ([]denial.Event, denial.InputStats, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, denial.InputStats{}, fmt.Errorf("--logs: %w", err)
	}
	defer f.Close()
	return denial.ReadLog(name, f)
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
