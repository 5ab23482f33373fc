package openshell

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// CodeVersionUnsupported is the diagnostic code of a target OpenShell
// version outside the supported range. The policy validator
// (openshell/validate, whose codes.go lists the other OSP codes) and the
// provider profile decoder (openshell/profile) both report it.
const CodeVersionUnsupported = "OSP000"

// Severity of a validation finding.
type Severity string

// Severities. An error means OpenShell refuses to load the policy (the
// gateway rejects it, or the supervisor fails validation and quarantines the
// sandbox); everything else is at most a warning. A warning that is a trap
// (Diagnostic.Trap) means OpenShell loads the policy but silently does
// something other than what it says (audit by omission, a rule that matches
// nothing, a destination refused per connection); `policy compile` treats
// traps as errors and `policy validate --strict` fails on every warning.
const (
	SeverityError   Severity = "error"
	SeverityWarning Severity = "warning"
)

// Diagnostic is one validation finding with its position in the policy file.
type Diagnostic struct {
	File     string   `json:"file"`
	Line     int      `json:"line"`
	Column   int      `json:"column"`
	Path     string   `json:"path,omitempty"`
	Severity Severity `json:"severity"`
	Code     string   `json:"code"`
	Message  string   `json:"message"`
	Hint     string   `json:"hint,omitempty"`
	// Trap marks a warning for a policy OpenShell loads but that does not do
	// what it says; compilers must treat it as an error.
	Trap bool `json:"trap,omitempty"`
}

// String renders the diagnostic as `file:line:col: severity[CODE]: message (hint)`.
func (d Diagnostic) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s:%d:%d: %s[%s]: ", d.File, d.Line, d.Column, d.Severity, d.Code)
	if d.Path != "" {
		b.WriteString(d.Path)
		b.WriteString(": ")
	}
	b.WriteString(d.Message)
	if d.Hint != "" {
		b.WriteString(" (")
		b.WriteString(d.Hint)
		b.WriteString(")")
	}
	return b.String()
}

// IsFatal reports whether a compiler must refuse to emit a policy with d:
// an error, or a trap.
func (d Diagnostic) IsFatal() bool { return d.Severity == SeverityError || d.Trap }

// HasErrors reports whether any diagnostic is an error.
func HasErrors(diags []Diagnostic) bool {
	for _, d := range diags {
		if d.Severity == SeverityError {
			return true
		}
	}
	return false
}

// ErrInvalidPolicy is returned by callers that turn error diagnostics into an
// error (see DiagnosticsError).
var ErrInvalidPolicy = errors.New("invalid OpenShell policy")

// DiagnosticsError wraps the error diagnostics of a validation run as one
// error (nil when there are none); it matches ErrInvalidPolicy with errors.Is.
func DiagnosticsError(diags []Diagnostic) error {
	var lines []string
	for _, d := range diags {
		if d.Severity == SeverityError {
			lines = append(lines, d.String())
		}
	}
	if len(lines) == 0 {
		return nil
	}
	return fmt.Errorf("%w:\n%s", ErrInvalidPolicy, strings.Join(lines, "\n"))
}

// SortDiagnostics orders the diagnostics of one file by line, column and
// code, keeping the order of equal ones.
func SortDiagnostics(diags []Diagnostic) {
	slices.SortStableFunc(diags, func(a, b Diagnostic) int {
		return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Column, b.Column), cmp.Compare(a.Code, b.Code))
	})
}
