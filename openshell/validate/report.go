package validate

import (
	"fmt"
	"io"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/fullsend-ai/agent-sandbox/openshell"
)

// FileReport is the validation result of one policy file.
type FileReport struct {
	File        string                 `json:"file"`
	Diagnostics []openshell.Diagnostic `json:"diagnostics"`
}

// Report is the result of validating several policy files against one
// OpenShell release; it is what `fullsend policy validate -o json` prints.
type Report struct {
	OpenShellVersion string       `json:"openshell_version"`
	Files            []FileReport `json:"files"`
	Errors           int          `json:"errors"`
	Warnings         int          `json:"warnings"`
	// Traps counts the warnings that are traps (openshell.Diagnostic.Trap): the
	// policy loads but does not do what it says.
	Traps int `json:"traps"`
}

// NewReport totals the diagnostics of files validated against version.
func NewReport(version string, files []FileReport) *Report {
	r := &Report{OpenShellVersion: version, Files: files}
	for i := range r.Files {
		if r.Files[i].Diagnostics == nil {
			r.Files[i].Diagnostics = []openshell.Diagnostic{}
		}
		for _, d := range r.Files[i].Diagnostics {
			if d.Severity == openshell.SeverityError {
				r.Errors++
			} else {
				r.Warnings++
			}
			if d.Trap {
				r.Traps++
			}
		}
	}
	return r
}

// Failed reports whether the run fails: any error, or any warning when
// strict.
func (r *Report) Failed(strict bool) bool {
	return r.Errors > 0 || (strict && r.Warnings > 0)
}

// WriteText writes the diagnostics grouped per file, one per line as
// `file:line:col: severity[CODE]: path: message (hint)`, followed by a
// summary line.
func (r *Report) WriteText(w io.Writer) error {
	for _, f := range r.Files {
		for _, d := range f.Diagnostics {
			if _, err := fmt.Fprintln(w, d.String()); err != nil {
				return err
			}
		}
	}
	traps := ""
	if r.Traps > 0 {
		traps = fmt.Sprintf(" (%s: loads, but not as written)", plural(r.Traps, "trap"))
	}
	_, err := fmt.Fprintf(w, "%s checked against OpenShell %s: %s, %s%s\n",
		plural(len(r.Files), "file"), r.OpenShellVersion, plural(r.Errors, "error"), plural(r.Warnings, "warning"), traps)
	return err
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// Input is one policy document to validate, named as diagnostics should
// name it.
type Input struct {
	File string
	Data []byte
}

// ValidateAll validates every input against version concurrently (one
// worker per CPU; Validate shares no state) and returns the reports in
// input order.
func All(inputs []Input, version string) []FileReport {
	out := make([]FileReport, len(inputs))
	workers := min(runtime.GOMAXPROCS(0), len(inputs))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= len(inputs) {
					return
				}
				out[i] = FileReport{File: inputs[i].File, Diagnostics: File(inputs[i].File, inputs[i].Data, version)}
			}
		})
	}
	wg.Wait()
	return out
}
