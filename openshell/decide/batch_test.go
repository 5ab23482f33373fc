package decide

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/fullsend-ai/agent-sandbox/openshell"
)

const batchPolicy = `version: 1
network_policies:
  gh:
    name: gh
    endpoints:
      - {host: api.github.com, port: 443, protocol: rest, enforcement: enforce, access: read-only}
    binaries:
      - path: /usr/bin/gh
`

func batchDecider(t testing.TB) *Decider {
	t.Helper()
	p, err := openshell.Unmarshal([]byte(batchPolicy))
	if err != nil {
		t.Fatal(err)
	}
	d, err := New(p, "v0.0.111")
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestDecideLines(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    []string // per output line: verdict, or "error"
		lines   []int
		bad     int
		wantErr bool
	}{
		{name: "empty"},
		{name: "comments and blanks", in: "# a\n\n   \n\t# b\n"},
		{name: "allow and deny", in: "GET https://api.github.com/repos/o/r from /usr/bin/gh\nPOST https://api.github.com/repos/o/r from /usr/bin/gh",
			want: []string{"allow", "deny"}, lines: []int{1, 2}},
		{name: "bad line answered in place", in: "# c\nGET nope\nGET https://api.github.com/ from /usr/bin/curl\n",
			want: []string{"error", "deny"}, lines: []int{2, 3}, bad: 1},
		{name: "CRLF", in: "GET https://api.github.com/x from /usr/bin/gh\r\n", want: []string{"allow"}, lines: []int{1}},
		{name: "line too long", in: "GET https://api.github.com/" + strings.Repeat("a", MaxBatchLine) + " from /usr/bin/gh\n", wantErr: true},
	}
	d := batchDecider(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			bad, err := d.DecideLines(strings.NewReader(tt.in), &out)
			if (err != nil) != tt.wantErr || bad != tt.bad {
				t.Fatalf("bad %d, err %v; want %d, error %v", bad, err, tt.bad, tt.wantErr)
			}
			if tt.wantErr {
				return
			}
			got := decodeBatch(t, out.Bytes())
			if len(got) != len(tt.want) {
				t.Fatalf("%d results, want %d:\n%s", len(got), len(tt.want), out.String())
			}
			for i, r := range got {
				verdict := r.Verdict
				if r.Error != "" {
					verdict = "error"
				}
				if verdict != tt.want[i] || r.Line != tt.lines[i] {
					t.Errorf("result %d: %s at line %d, want %s at line %d", i, verdict, r.Line, tt.want[i], tt.lines[i])
				}
			}
		})
	}
}

// failWriter fails every write.
type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestDecideLinesWriteError(t *testing.T) {
	if _, err := batchDecider(t).DecideLines(strings.NewReader("GET https://api.github.com/ from /usr/bin/gh\n"), failWriter{}); err == nil {
		t.Fatal("a failed write is not reported")
	}
}

func decodeBatch(t testing.TB, out []byte) []BatchResult {
	t.Helper()
	var res []BatchResult
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 4*MaxBatchLine)
	for sc.Scan() {
		var r BatchResult
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("output line %q is not JSON: %v", sc.Text(), err)
		}
		res = append(res, r)
	}
	return res
}

// FuzzDecideLines: whatever the input, every request line gets exactly one
// JSON line, in order, with either a verdict or an error.
func FuzzDecideLines(f *testing.F) {
	f.Add("GET https://api.github.com/repos/o/r from /usr/bin/gh\n# c\nGET nope\n")
	f.Add("\r\n\x00\n#\nCONNECT [::1]:22 from /usr/bin/ssh")
	d := batchDecider(f)
	f.Fuzz(func(t *testing.T, in string) {
		var out bytes.Buffer
		bad, err := d.DecideLines(strings.NewReader(in), &out)
		if err != nil {
			return // a line over MaxBatchLine
		}
		want, errs := 0, 0
		for _, l := range strings.Split(in, "\n") {
			if s := strings.TrimSpace(strings.TrimSuffix(l, "\r")); s != "" && !strings.HasPrefix(s, "#") {
				want++
			}
		}
		last := 0
		got := decodeBatch(t, out.Bytes())
		for _, r := range got {
			if (r.Error == "") == (r.Verdict == "") || r.Line <= last {
				t.Fatalf("result %+v after line %d", r, last)
			}
			if r.Error != "" {
				errs++
			}
			last = r.Line
		}
		if len(got) != want || errs != bad {
			t.Fatalf("%d results (%d errors) for %d request lines (bad %d)", len(got), errs, want, bad)
		}
	})
}
