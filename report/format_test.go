package report

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/fullsend-ai/agent-sandbox/internal/fixture"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/golden")

// formatReport reads what lint reports for two of its corpus policies (one
// with provenance, so findings point at agent source lines, and a waiver;
// one plain file, whose findings point at policy lines), kept in
// testdata/lint-report.json by lint's TestReportFixtureIsCurrent.
func formatReport(t *testing.T) *Report {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "lint-report.json"))
	if err != nil {
		t.Fatal(err)
	}
	var fixture struct {
		Report
		Rules []Rule `json:"rules"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&fixture); err != nil {
		t.Fatalf("testdata/lint-report.json: %v", err)
	}
	if len(fixture.Findings) == 0 || len(fixture.Rules) == 0 {
		t.Fatal("testdata/lint-report.json has no findings or no rules")
	}
	rep := fixture.Report
	rep.Rules = fixture.Rules
	return &rep
}

func TestFormatsGolden(t *testing.T) {
	rep := formatReport(t)
	for _, format := range Formats() {
		t.Run(format, func(t *testing.T) {
			var buf bytes.Buffer
			if err := rep.Write(&buf, format, WriteOptions{ToolVersion: "v0.0.0-test"}); err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", "golden", "report."+format)
			if *update {
				if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test ./report -run TestFormatsGolden -update)", err)
			}
			if !bytes.Equal(buf.Bytes(), want) {
				t.Errorf("%s output differs from %s:\n%s", format, golden, buf.String())
			}
		})
	}
}

func TestTextColorOnlyWhenAsked(t *testing.T) {
	rep := formatReport(t)
	var plain, color bytes.Buffer
	_ = rep.Write(&plain, "text", WriteOptions{})
	_ = rep.Write(&color, "text", WriteOptions{Color: true})
	if bytes.Contains(plain.Bytes(), []byte("\x1b[")) {
		t.Error("plain text output has ANSI escapes")
	}
	if !bytes.Contains(color.Bytes(), []byte("\x1b[31m")) {
		t.Error("coloured output lacks the deny colour")
	}
}

// TestSARIFValidates validates the SARIF output against the OASIS SARIF
// 2.1.0 JSON schema (read from ../shared/fixtures, see
// report/testdata/README.md), and checks the locations point at
// the agent source line when provenance is known.
func TestSARIFValidates(t *testing.T) {
	var buf bytes.Buffer
	if err := formatReport(t).Write(&buf, "sarif", WriteOptions{ToolVersion: "v1.2.3"}); err != nil {
		t.Fatal(err)
	}
	f := fixture.ReadFile(t, "from-project/report/testdata/sarif-schema-2.1.0.json")
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(f))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource("sarif-schema-2.1.0.json", doc); err != nil {
		t.Fatal(err)
	}
	schema, err := c.Compile("sarif-schema-2.1.0.json")
	if err != nil {
		t.Fatal(err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if err := schema.Validate(inst); err != nil {
		t.Fatalf("SARIF output does not validate: %v", err)
	}
	// A broken log must not validate: the schema check can fail.
	if err := schema.Validate(map[string]any{"version": "2.1.0", "runs": "nope"}); err == nil {
		t.Fatal("schema accepted an invalid log")
	}
	var log struct {
		Runs []struct {
			Results []struct {
				RuleID    string `json:"ruleId"`
				Locations []struct {
					PhysicalLocation struct {
						ArtifactLocation struct{ URI string }    `json:"artifactLocation"`
						Region           struct{ StartLine int } `json:"region"`
					} `json:"physicalLocation"`
				} `json:"locations"`
				Suppressions []any `json:"suppressions"`
			} `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(buf.Bytes(), &log); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, r := range log.Runs[0].Results {
		pl := r.Locations[0].PhysicalLocation
		seen[r.RuleID+" "+pl.ArtifactLocation.URI] = true
		if r.RuleID == "FS012" && (pl.ArtifactLocation.URI != "agents/triage.md" || pl.Region.StartLine != 12) {
			t.Errorf("FS012 points at %s:%d, want the agent source agents/triage.md:12", pl.ArtifactLocation.URI, pl.Region.StartLine)
		}
		if r.RuleID == "FS002" && strings.HasPrefix(pl.ArtifactLocation.URI, "agents/") && len(r.Suppressions) != 1 {
			t.Error("waived FS002 has no suppression")
		}
	}
	if !seen["FS007 policies/tls-skip.yaml"] {
		t.Errorf("FS007 without provenance should point at the policy file; got %v", seen)
	}
}

func TestGitHubAnnotations(t *testing.T) {
	var buf bytes.Buffer
	if err := formatReport(t).Write(&buf, "github", WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`^::(error|warning) file=[^,:]+(,line=\d+)?,title=FS\d{3} [^:]*::.+$`)
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	for _, l := range lines {
		if !re.MatchString(l) {
			t.Errorf("not a workflow command: %q", l)
		}
	}
	if !strings.Contains(buf.String(), "::error file=agents/triage.md,line=12,title=FS012") {
		t.Errorf("FS012 not annotated on the agent line:\n%s", buf.String())
	}
	// FS002 fires on both policies but is waived for agent triage only.
	if n := strings.Count(buf.String(), "title=FS002 "); n != 1 {
		t.Errorf("%d FS002 annotations, want 1 (the waived one must not be annotated)", n)
	}
}

func TestGitLabCodeQuality(t *testing.T) {
	var buf bytes.Buffer
	if err := formatReport(t).Write(&buf, "gitlab", WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	var issues []struct {
		Description string `json:"description"`
		CheckName   string `json:"check_name"`
		Fingerprint string `json:"fingerprint"`
		Severity    string `json:"severity"`
		Location    struct {
			Path  string `json:"path"`
			Lines struct {
				Begin int `json:"begin"`
			} `json:"lines"`
		} `json:"location"`
	}
	dec := json.NewDecoder(&buf)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&issues); err != nil {
		t.Fatal(err)
	}
	if len(issues) == 0 {
		t.Fatal("no issues")
	}
	fps := map[string]bool{}
	for _, i := range issues {
		if i.Description == "" || i.CheckName == "" || i.Location.Path == "" || i.Location.Lines.Begin < 1 {
			t.Errorf("incomplete issue %+v", i)
		}
		switch i.Severity {
		case "info", "minor", "major", "critical", "blocker":
		default:
			t.Errorf("severity %q is not a Code Quality severity", i.Severity)
		}
		if fps[i.Fingerprint] {
			t.Errorf("duplicate fingerprint %s", i.Fingerprint)
		}
		fps[i.Fingerprint] = true
	}
}

func TestWriteUnknownFormat(t *testing.T) {
	if err := (&Report{}).Write(&bytes.Buffer{}, "xml", WriteOptions{}); err == nil {
		t.Fatal("unknown format accepted")
	}
}
