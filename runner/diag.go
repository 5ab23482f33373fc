package runner

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
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
		x.reportFailure()
	}
	if n := evidence.DenialTotal(res.Denials); n > 0 && err == nil {
		x.warnDenied(n)
	}
	x.writeEvidenceResult()
	if serr := x.rep.Summary(summaryMarkdown(res)); serr != nil {
		x.logf("%v", serr)
	}
	_ = x.log.Flush()
}

// reportFailure annotates the failure and writes the diagnostic bundle,
// when there is a directory for it.
func (x *run) reportFailure() {
	res := x.res
	x.rep.Annotate("error", "fullsend run "+res.Agent, fmt.Sprintf("exit %d: %s", res.ExitCode, res.Error))
	if x.r.opts.DiagDir == "" {
		return
	}
	dir, err := x.writeBundle()
	if err != nil {
		x.logf("writing diagnostic bundle: %v", err)
		return
	}
	res.DiagDir = dir
	x.logf("diagnostic bundle: %s", dir)
}

// warnDenied annotates a run that succeeded after n of its requests were
// denied: it leaves no other trace.
func (x *run) warnDenied(n int) {
	res := x.res
	where := "run"
	if res.CI != CILocal {
		where = "download the run's evidence artifact and run"
	}
	x.rep.Annotate("warning", "fullsend run "+res.Agent+": requests denied",
		fmt.Sprintf("%d requests were denied (%s); %s `%s`", n, evidence.DenialSummary(res.Denials), where, res.Evidence.Suggest))
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
	for _, f := range x.bundleFiles() {
		if err := os.WriteFile(filepath.Join(dir, f.name), f.data, 0o600); err != nil {
			return "", err
		}
	}
	return dir, nil
}

// bundleFile is one file of the diagnostic bundle.
type bundleFile struct {
	name string
	data []byte
}

// bundleFiles are the files of the diagnostic bundle, in the order they
// are written: the result, the calls, the resolved policy (once there is
// one) and the gateway's log, masked (when the run started the gateway and
// the log can be read).
func (x *run) bundleFiles() []bundleFile {
	res := *x.res
	res.Calls = nil
	b, _ := json.MarshalIndent(res, "", "  ")
	var calls strings.Builder
	for _, c := range x.d.Calls() {
		line, _ := json.Marshal(c)
		calls.Write(line)
		calls.WriteByte('\n')
	}
	files := []bundleFile{{"result.json", append(b, '\n')}, {"calls.jsonl", []byte(calls.String())}}
	if x.policy != nil {
		files = append(files, bundleFile{"policy.yaml", x.policy})
	}
	if x.gatewayLog == "" {
		return files
	}
	if data, err := os.ReadFile(x.gatewayLog); err == nil {
		files = append(files, bundleFile{"gateway.log", []byte(x.mask.String(string(data)))})
	}
	return files
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
	var b summaryTable
	status := "succeeded"
	if res.ExitCode != 0 {
		status = fmt.Sprintf("failed (exit %d)", res.ExitCode)
	}
	fmt.Fprintf(&b, "### fullsend run %s: %s\n\n", ciout.MarkdownCode(res.Agent), status)
	b.WriteString("| | |\n|---|---|\n")
	b.row("sandbox", ciout.MarkdownText(res.Sandbox))
	b.row("sandbox deleted", fmt.Sprint(res.Deleted))
	b.row("openshell", ciout.MarkdownText(res.OpenShellVersion))
	b.row("manifest sha256", ciout.MarkdownCode(res.ManifestSHA256))
	b.row("policy sha256", ciout.MarkdownCode(res.PolicySHA256))
	b.row("resolved policy sha256", ciout.MarkdownCode(res.ResolvedSHA256))
	for _, k := range slices.Sorted(maps.Keys(res.Placeholders)) {
		b.row(ciout.MarkdownText("{{"+k+"}}"), ciout.MarkdownCode(res.Placeholders[k])+" from "+ciout.MarkdownText(res.PlaceholderFrom[k]))
	}
	b.row("duration", res.Duration.Round(time.Millisecond).String())
	b.row("error", ciout.MarkdownText(res.Error))
	b.row("diagnostic bundle", ciout.MarkdownCode(res.DiagDir))
	if res.Evidence != nil {
		b.evidenceRows(res)
	}
	b.WriteString("\n")
	if len(res.Steps) > 0 {
		b.steps(res.Steps)
	}
	return b.String()
}

// summaryTable is the job summary being written.
type summaryTable struct{ strings.Builder }

// row writes a row of the run's table, unless v is empty.
func (b *summaryTable) row(k, v string) {
	if v != "" {
		fmt.Fprintf(b, "| %s | %s |\n", k, v)
	}
}

// evidenceRows writes where the run's evidence is and what it counted.
func (b *summaryTable) evidenceRows(res *Result) {
	ev := res.Evidence
	b.row("evidence", ciout.MarkdownCode(ev.Dir)+" from "+ciout.MarkdownText(ev.Source))
	if n := evidence.DenialTotal(res.Denials); n > 0 {
		b.row("denied requests", fmt.Sprintf("%d: %s", n, ciout.MarkdownText(evidence.DenialSummary(res.Denials))))
		if ev.UntrustedDenials > 0 {
			b.row("untrusted denials", fmt.Sprintf("%d: lines the agent could have written into the log; never suggested (docs/threat-model.md)", ev.UntrustedDenials))
		}
		b.row("next step", ciout.MarkdownCode(ev.Suggest))
	} else if res.Denials[denial.KindAudit] > 0 {
		b.row("audit would-deny", ciout.MarkdownText(evidence.DenialSummary(res.Denials)))
	} else if ev.Source != evidence.SourceNone {
		b.row("denied requests", "0")
	}
}

// steps writes the table of the run's steps and their durations.
func (b *summaryTable) steps(steps []StepTiming) {
	b.WriteString("| step | ms |\n|---|---:|\n")
	for _, s := range steps {
		mark := ""
		if s.Failed {
			mark = " (failed)"
		}
		fmt.Fprintf(b, "| %s%s | %.0f |\n", ciout.MarkdownText(s.Name), mark, s.MS)
	}
	b.WriteString("\n")
}
