package compile

import (
	"fmt"
	"strings"

	"github.com/fullsend-ai/agent-sandbox/agentdef"
)

// Failure is the error of a failed compile: every diagnostic of the run,
// warnings included, so that a caller (`policy compile -o json`) can
// report all of them. errors.Is(err, ErrCompile) holds, and errors.As to
// Diagnostics yields the error-severity ones, as before.
type Failure struct {
	// Diagnostics holds every diagnostic, errors and warnings, sorted by
	// position.
	Diagnostics agentdef.Diagnostics
	// Agents lists the agents that compiled despite the failure elsewhere.
	Agents []string
}

// Error lists the error-severity diagnostics, one per line.
func (f *Failure) Error() string {
	return fmt.Sprintf("%v:\n%v", ErrCompile, f.Diagnostics.Errors())
}

// Unwrap lets errors.Is match ErrCompile and errors.As reach the error
// diagnostics.
func (f *Failure) Unwrap() []error { return []error{ErrCompile, f.Diagnostics.Errors()} }

// Summary counts the errors and warnings, e.g. "2 errors, 1 warning".
func (f *Failure) Summary() string {
	e := len(f.Diagnostics.Errors())
	w := len(f.Diagnostics) - e
	return plural(e, "error") + ", " + plural(w, "warning")
}

func plural(n int, what string) string {
	s := fmt.Sprintf("%d %s", n, what)
	if n != 1 {
		s += "s"
	}
	return s
}

// files lists the distinct files the diagnostics point at, in order.
func (f *Failure) files() []string {
	var out []string
	seen := map[string]bool{}
	for _, d := range f.Diagnostics {
		if d.Pos.File != "" && !seen[d.Pos.File] {
			seen[d.Pos.File] = true
			out = append(out, d.Pos.File)
		}
	}
	return out
}

// String is a one-line summary naming the files with problems.
func (f *Failure) String() string {
	return f.Summary() + " in " + strings.Join(f.files(), ", ")
}
