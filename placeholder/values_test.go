package placeholder

import (
	"errors"
	"strings"
	"testing"
)

func TestParseSetErrors(t *testing.T) {
	tests := []struct {
		in         string
		want, name string
		sentinel   error
	}{
		{"OWNER", `"OWNER": want KEY=VALUE, for example ISSUE_NUMBER=42`, "", ErrNotAssignment},
		{"=x", `"=x": want KEY=VALUE, for example ISSUE_NUMBER=42`, "", ErrNotAssignment},
		{"OWNER=*", "OWNER: invalid placeholder value for {{OWNER}}", "OWNER", ErrInvalidValue},
		{" ISSUE_NUMBER=0", " ISSUE_NUMBER: invalid placeholder value for {{ISSUE_NUMBER}}", " ISSUE_NUMBER", ErrInvalidValue},
	}
	for _, tc := range tests {
		_, err := ParseSet([]string{"REPO_NAME=w", tc.in})
		var ae *AssignmentError
		if !errors.As(err, &ae) || ae.Assignment != tc.in || ae.Name != tc.name || !errors.Is(err, tc.sentinel) {
			t.Errorf("%q: %#v, want an *AssignmentError for %q wrapping %v", tc.in, err, tc.name, tc.sentinel)
			continue
		}
		if msg := err.Error(); !strings.HasPrefix(msg, tc.want) || strings.Contains(msg, "--") {
			t.Errorf("%q: %q, want it to start with %q and name no flag", tc.in, msg, tc.want)
		}
	}
	v, err := ParseSet([]string{"OWNER=a", " OWNER=b", "ISSUE_NUMBER=42"})
	if err != nil || v["OWNER"] != "b" || v["ISSUE_NUMBER"] != "42" {
		t.Errorf("ParseSet: %v %v", v, err)
	}
}
