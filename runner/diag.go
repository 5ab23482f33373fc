package runner

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/fullsend-ai/agent-sandbox/ciout"
	"github.com/fullsend-ai/agent-sandbox/denial"
	"github.com/fullsend-ai/agent-sandbox/runner/evidence"
)

// finish reports the outcome: an annotation on failure, the job summary,
// and the diagnostic bundle when the run failed.
func (x *run) finish(err error) {
	res := x.res
	if err != nil {
		title := "fullsend run " + res.Agent
		x.rep.Annotate("error", title, fmt.Sprintf("exit %d: %s", res.ExitCode, res.Error))
		if x.r.opts.DiagDir != "" {
			if dir, derr := x.writeBundle(); derr != nil {
				x.logf("writing diagnostic bundle: %v", derr)
			} else {
				res.DiagDir = dir
				x.logf("diagnostic bundle: %s", dir)
			}
		}
	}
	if n := evidence.DenialTotal(res.Denials); n > 0 && err == nil {
		// A run that succeeded after being denied leaves no other trace.
		where := "run"
		if res.CI != CILocal {
			where = "download the run's evidence artifact and run"
		}
		x.rep.Annotate("warning", "fullsend run "+res.Agent+": requests denied",
			fmt.Sprintf("%d requests were denied (%s); %s `%s`", n, evidence.DenialSummary(res.Denials), where, res.Evidence.Suggest))
	}
	x.writeEvidenceResult()
	if serr := x.rep.Summary(summaryMarkdown(res)); serr != nil {
		x.logf("%v", serr)
	}
	_ = x.log.Flush()
}

// writeBundle writes what a maintainer needs to diagnose a failed run: the
// result, every openshell call (argv, env names, exit, stderr tail; secrets
// masked), the resolved policy, the gateway's own log (the sandbox's logs
// are the run's evidence, collectEvidence).
func (x *run) writeBundle() (string, error) {
	name := x.res.Sandbox
	if name == "" {
		name = "fs-" + sanitizeFileName(x.res.Agent)
	}
	dir := filepath.Join(x.r.opts.DiagDir, name)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	write := func(file string, data []byte) error {
		return os.WriteFile(filepath.Join(dir, file), data, 0o600)
	}
	res := *x.res
	res.Calls = nil
	b, _ := json.MarshalIndent(res, "", "  ")
	if err := write("result.json", append(b, '\n')); err != nil {
		return "", err
	}
	var calls strings.Builder
	for _, c := range x.d.Calls() {
		line, _ := json.Marshal(c)
		calls.Write(line)
		calls.WriteByte('\n')
	}
	if err := write("calls.jsonl", []byte(calls.String())); err != nil {
		return "", err
	}
	if x.policy != nil {
		if err := write("policy.yaml", x.policy); err != nil {
			return "", err
		}
	}
	for _, f := range []struct{ src, dst string }{
		{x.gatewayLog, "gateway.log"},
	} {
		if f.src == "" {
			continue
		}
		if data, err := os.ReadFile(f.src); err == nil {
			if err := write(f.dst, []byte(x.mask.String(string(data)))); err != nil {
				return "", err
			}
		}
	}
	return dir, nil
}

func sanitizeFileName(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' {
			return r
		}
		return '-'
	}, strings.ToLower(s))
}

// summaryMarkdown renders the job summary table. Every value is rendered
// literally (ciout.MarkdownText, ciout.MarkdownCode): an error message quotes openshell and the
// sandbox, and must not add links, images or HTML to the summary.
func summaryMarkdown(res *Result) string {
	var b strings.Builder
	status := "succeeded"
	if res.ExitCode != 0 {
		status = fmt.Sprintf("failed (exit %d)", res.ExitCode)
	}
	fmt.Fprintf(&b, "### fullsend run %s: %s\n\n", ciout.MarkdownCode(res.Agent), status)
	b.WriteString("| | |\n|---|---|\n")
	row := func(k, v string) {
		if v != "" {
			fmt.Fprintf(&b, "| %s | %s |\n", k, v)
		}
	}
	row("sandbox", ciout.MarkdownText(res.Sandbox))
	row("sandbox deleted", fmt.Sprint(res.Deleted))
	row("openshell", ciout.MarkdownText(res.OpenShellVersion))
	row("manifest sha256", ciout.MarkdownCode(res.ManifestSHA256))
	row("policy sha256", ciout.MarkdownCode(res.PolicySHA256))
	row("resolved policy sha256", ciout.MarkdownCode(res.ResolvedSHA256))
	keys := make([]string, 0, len(res.Placeholders))
	for k := range res.Placeholders {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		row(ciout.MarkdownText("{{"+k+"}}"), ciout.MarkdownCode(res.Placeholders[k])+" from "+ciout.MarkdownText(res.PlaceholderFrom[k]))
	}
	row("duration", res.Duration.Round(time.Millisecond).String())
	row("error", ciout.MarkdownText(res.Error))
	row("diagnostic bundle", ciout.MarkdownCode(res.DiagDir))
	if ev := res.Evidence; ev != nil {
		row("evidence", ciout.MarkdownCode(ev.Dir)+" from "+ciout.MarkdownText(ev.Source))
		if n := evidence.DenialTotal(res.Denials); n > 0 {
			row("denied requests", fmt.Sprintf("%d: %s", n, ciout.MarkdownText(evidence.DenialSummary(res.Denials))))
			row("next step", ciout.MarkdownCode(ev.Suggest))
		} else if res.Denials[denial.KindAudit] > 0 {
			row("audit would-deny", ciout.MarkdownText(evidence.DenialSummary(res.Denials)))
		} else if ev.Source != evidence.SourceNone {
			row("denied requests", "0")
		}
	}
	b.WriteString("\n")
	if len(res.Steps) > 0 {
		b.WriteString("| step | ms |\n|---|---:|\n")
		for _, s := range res.Steps {
			mark := ""
			if s.Failed {
				mark = " (failed)"
			}
			fmt.Fprintf(&b, "| %s%s | %.0f |\n", ciout.MarkdownText(s.Name), mark, s.MS)
		}
		b.WriteString("\n")
	}
	return b.String()
}
