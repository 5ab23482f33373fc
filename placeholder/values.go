package placeholder

import (
	"errors"
	"fmt"
	"strings"
)

// Values holds validated placeholder values by name.
type Values map[string]string

// Set validates value for name and stores it.
func (v Values) Set(name, value string) error {
	if err := Validate(name, value); err != nil {
		return err
	}
	v[name] = value
	return nil
}

// ErrNotAssignment reports an assignment that is not KEY=VALUE.
var ErrNotAssignment = errors.New("want KEY=VALUE")

// AssignmentError is an assignment ParseSet refused. Its message names no
// command-line flag; a CLI prefixes its own.
type AssignmentError struct {
	// Assignment is the text as given.
	Assignment string
	// Name is the key as given (before trimming); empty with
	// ErrNotAssignment.
	Name string
	// Err is ErrNotAssignment or why the value is invalid for Name.
	Err error
}

func (e *AssignmentError) Error() string {
	if errors.Is(e.Err, ErrNotAssignment) {
		return fmt.Sprintf("%q: %v, for example ISSUE_NUMBER=42", e.Assignment, e.Err)
	}
	return fmt.Sprintf("%s: %v", e.Name, e.Err)
}

func (e *AssignmentError) Unwrap() error { return e.Err }

// ParseSet parses KEY=VALUE assignments (a CLI's --set flag) into validated
// Values. Later assignments of the same key win, as on a command line. A
// refused assignment is an *AssignmentError.
func ParseSet(assignments []string) (Values, error) {
	v := Values{}
	for _, a := range assignments {
		name, value, ok := strings.Cut(a, "=")
		if !ok || name == "" {
			return nil, &AssignmentError{Assignment: a, Err: ErrNotAssignment}
		}
		if err := v.Set(strings.TrimSpace(name), value); err != nil {
			return nil, &AssignmentError{Assignment: a, Name: name, Err: err}
		}
	}
	return v, nil
}

// Merge returns a copy of v overridden by each of over in turn.
func (v Values) Merge(over ...Values) Values {
	out := Values{}
	for k, x := range v {
		out[k] = x
	}
	for _, o := range over {
		for k, x := range o {
			out[k] = x
		}
	}
	return out
}
