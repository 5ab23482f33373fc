package decide

import (
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// Every problem of an expectation file is reported in one run, each at
// the line of its own key or value, in line order; a YAML syntax error
// names its line as file:line.
func TestParseExpectFileReportsEveryProblem(t *testing.T) {
	for _, tc := range []struct {
		name string
		src  string
		want []string // each problem, file:line: message
	}{
		{"a misspelt key and a bad verdict in one case",
			"agent: a\ntests:\n  - name: n\n    reqest: GET https://x.com/ from /b\n    expect: alow\n",
			[]string{
				`x.policytest.yaml:3: tests[0]: missing request:`,
				`x.policytest.yaml:4: tests[0]: unknown field "reqest": did you mean "request"?`,
				`x.policytest.yaml:5: tests[0]: expect "alow", want allow, deny or audit`,
			}},
		{"problems in two cases",
			"agent: a\ntests:\n  - request: GET https://x.com/\n    expect: allow\n  - request: GET https://x.com/ from /b\n    expect: allow\n    verdict: x\n",
			[]string{
				`x.policytest.yaml:3: tests[0]: bad request`,
				`x.policytest.yaml:7: tests[1]: unknown field "verdict"`,
			}},
		{"a wrong type and a repeated key",
			"agent: a\ntests:\n  - request: [x]\n    expect: allow\n    expect: deny\n",
			[]string{
				`x.policytest.yaml:3: tests[0]: request: want a string, got a list`,
				`x.policytest.yaml:5: tests[0]: field "expect" given twice`,
			}},
		{"a YAML syntax error", "agent: a\ntests:\n  - request: GET https://x.com/ from /b\n    expect allow\n  - x\n",
			[]string{`x.policytest.yaml:4: could not find expected ':'`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseExpectFile("x.policytest.yaml", []byte(tc.src))
			var got []*ExpectFileError
			var many ExpectFileErrors
			var one *ExpectFileError
			switch {
			case errors.As(err, &many):
				got = many
			case errors.As(err, &one):
				got = []*ExpectFileError{one}
			default:
				t.Fatalf("error %v", err)
			}
			var msgs []string
			for _, e := range got {
				msgs = append(msgs, e.File+":"+strconv.Itoa(e.Line)+": "+e.Message)
			}
			if len(msgs) != len(tc.want) {
				t.Fatalf("got %d problems:\n%v\nwant %d:\n%v", len(msgs), msgs, len(tc.want), tc.want)
			}
			for i := range msgs {
				if !strings.HasPrefix(msgs[i], tc.want[i]) {
					t.Errorf("problem %d:\n got  %s\n want %s...", i, msgs[i], tc.want[i])
				}
			}
			if !errors.Is(err, ErrExpectFile) || !slices.IsSortedFunc(got, func(a, b *ExpectFileError) int { return a.Line - b.Line }) {
				t.Errorf("not ErrExpectFile or not in line order: %v", err)
			}
		})
	}
}
