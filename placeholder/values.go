package placeholder

import (
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

// ParseSet parses KEY=VALUE assignments (the --set flag) into validated
// Values. Later assignments of the same key win, as on a command line.
func ParseSet(assignments []string) (Values, error) {
	v := Values{}
	for _, a := range assignments {
		name, value, ok := strings.Cut(a, "=")
		if !ok || name == "" {
			return nil, fmt.Errorf("--set %q: want KEY=VALUE, for example --set ISSUE_NUMBER=42", a)
		}
		if err := v.Set(strings.TrimSpace(name), value); err != nil {
			return nil, fmt.Errorf("--set %s: %w", name, err)
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
