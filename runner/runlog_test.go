package runner

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/fullsend-ai/agent-sandbox/ciout/ciouttest"
	"github.com/fullsend-ai/agent-sandbox/denial"
	"github.com/fullsend-ai/agent-sandbox/runner/evidence"
	"github.com/fullsend-ai/agent-sandbox/runner/redact"
)

// TestRunLogEscapesEveryArgument: whatever the verb and the type, no
// argument reaches the log raw, and two arguments cannot make a command
// together.
func TestRunLogEscapesEveryArgument(t *testing.T) {
	for _, ci := range []CIKind{CIGitHub, CIGitLab, CILocal} {
		var out bytes.Buffer
		m := &redact.Masker{}
		m.Add("s3cr3t-value")
		l := newRunLog(ci, m, &out)
		for _, name := range ciouttest.AttackNames() {
			l.Printf("removed %s from downloaded %s", name, "/sandbox/out")
			l.Printf("%s", name)
			l.Printf("%v", errors.New("download: "+name))
			l.Printf("%q %10s %x", name, name, name)
		}
		l.Printf("%s%s", ":", ":error::joined")
		l.Printf("%s%s%s", "#", "#", "[error]joined")
		l.Printf("%d %v %s", 42, []string{"\n::error::in a slice"}, "key s3cr3t-value")
		_ = l.Flush()
		log := out.String()
		if strings.Contains(log, "s3cr3t-value") {
			t.Errorf("%s: secret in the log", ci)
		}
		if strings.Count(log, "\n") != 4*len(ciouttest.AttackNames())+3 {
			t.Errorf("%s: a value broke a line:\n%s", ci, log)
		}
		switch ci {
		case CIGitHub:
			g := &ciouttest.GitHubRunner{}
			g.Feed(log)
			if len(g.Executed) > 0 {
				t.Errorf("executed %q:\n%s", g.Executed, log)
			}
		default:
			if strings.ContainsAny(log, "\x1b\r") {
				t.Errorf("%s: control characters in the log:\n%q", ci, log)
			}
		}
	}
}

func TestSummaryMarkdownInjection(t *testing.T) {
	md := summaryMarkdown(&Result{Agent: "tri`age", ExitCode: 75, Sandbox: "fs-a",
		Error:        "download failed: [click](https://evil.example) <img src=x onerror=alert(1)> | cell\nnext ![i](u) www.evil.example",
		Placeholders: map[string]string{"OWNER": "a|b`c"}, PlaceholderFrom: map[string]string{"OWNER": "--set"}})
	for _, bad := range []string{"[click]", "](", " | cell", "www.evil", "a|b"} {
		if strings.Contains(md, bad) {
			t.Errorf("%q survived in the summary:\n%s", bad, md)
		}
	}
	for _, want := range []string{"### fullsend run ``tri`age``: failed (exit 75)", `\<img src\=x`, "<br>next", "``a\\|b`c``", "fs\\-a", "\\| cell"} {
		if !strings.Contains(md, want) {
			t.Errorf("no %q in the summary:\n%s", want, md)
		}
	}
}

// The summary says how many counted denials the agent could have written
// (issue 33), and says nothing when there are none.
func TestSummaryUntrustedDenials(t *testing.T) {
	for _, n := range []int{0, 2} {
		md := summaryMarkdown(&Result{Agent: "triage", Sandbox: "fs-a",
			Denials:  map[denial.Kind]int{denial.KindL4NoEndpoint: 3},
			Evidence: &evidence.Record{Dir: "/e", Source: evidence.SourceSandboxFiles, UntrustedDenials: n}})
		if got := strings.Contains(md, "| untrusted denials | 2: "); got != (n == 2) {
			t.Errorf("untrusted %d: row shown %v:\n%s", n, got, md)
		}
	}
}
