package decide

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// MaxBatchLine is the longest request line DecideLines reads.
const MaxBatchLine = 1 << 20

// BatchResult is one line of DecideLines' output: the request line as read
// and either its decision or why it is not a request.
type BatchResult struct {
	// Line is the 1-based line number in the input.
	Line int `json:"line"`
	// Request is the line, trimmed.
	Request string `json:"request,omitempty"`
	// Verdict is Decision.Verdict(): allow, deny or audit.
	Verdict  string    `json:"verdict,omitempty"`
	Decision *Decision `json:"decision,omitempty"`
	// Error says why the line is not a request (ParseRequest's error).
	Error string `json:"error,omitempty"`
}

// DecideLines is the batch protocol of `policy test --requests`: it reads
// one request a line from r in ParseRequest's grammar (blank lines and
// lines starting with # are skipped), decides each with d, and writes one
// BatchResult a line as JSON to w. A line that does not parse is answered in
// place with its error; bad counts them. The error is a read or write
// failure, or a line longer than MaxBatchLine.
func (d *Decider) DecideLines(r io.Reader, w io.Writer) (bad int, err error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), MaxBatchLine)
	bw := bufio.NewWriterSize(w, 64<<10)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	line := 0
	for sc.Scan() {
		line++
		s := strings.TrimSpace(sc.Text())
		if s == "" || strings.HasPrefix(s, "#") {
			continue
		}
		res := BatchResult{Line: line, Request: s}
		if req, err := ParseRequest(s); err != nil {
			bad++
			res.Error = err.Error()
		} else {
			dec := d.Decide(req)
			res.Verdict, res.Decision = dec.Verdict(), &dec
		}
		if err := enc.Encode(res); err != nil {
			return bad, err
		}
	}
	if err := sc.Err(); err != nil {
		return bad, fmt.Errorf("line %d: %w", line+1, err)
	}
	return bad, bw.Flush()
}
