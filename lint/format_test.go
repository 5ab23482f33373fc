package lint

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/fullsend-ai/agent-sandbox/bundle"
	"github.com/fullsend-ai/agent-sandbox/report"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/golden")

// formatReport lints two corpus policies: one with provenance (findings point
// at agent source lines) and a waiver, one plain file with raw bytes (findings
// point at policy lines).
func formatReport(t *testing.T) *report.Report {
	t.Helper()
	e, err := New(context.Background(), Options{Waivers: []Waiver{
		{ID: "FS002", Agent: "triage", Path: "network_policies.model", Reason: "Vertex AI serves from regional hosts"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	withProv, _ := corpusInput(t, "testdata/bad/access-full.yaml")
	withProv.Name, withProv.File = "triage", "policies/triage.yaml"
	withProv.Context = Context{Agent: "triage", Tier: "network", Provenance: map[string][]bundle.Source{
		"network_policies.model":              {{File: "agents/triage.md", Line: 4, Reason: "runtime baseline claude/vertex"}},
		"network_policies.model.endpoints[0]": {{File: "agents/triage.md", Line: 12, Column: 5, Reason: "sandbox: endpoint"}},
		"network_policies.forge":              {{File: "skills/forge/SKILL.md", Line: 3, Reason: "tool Bash(gh issue view:*)"}},
	}}
	raw, err := os.ReadFile("testdata/bad/tls-skip.yaml")
	if err != nil {
		t.Fatal(err)
	}
	plain, _ := corpusInput(t, "testdata/bad/tls-skip.yaml")
	plain.File, plain.Raw = "policies/tls-skip.yaml", raw
	rep, err := e.Lint(context.Background(), []Input{withProv, plain})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func TestFormatsGolden(t *testing.T) {
	rep := formatReport(t)
	for _, format := range report.Formats() {
		t.Run(format, func(t *testing.T) {
			var buf bytes.Buffer
			if err := rep.Write(&buf, format, report.WriteOptions{ToolVersion: "v0.0.0-test"}); err != nil {
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
				t.Fatalf("%v (run go test ./lint -run TestFormatsGolden -update)", err)
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
	_ = rep.Write(&plain, "text", report.WriteOptions{})
	_ = rep.Write(&color, "text", report.WriteOptions{Color: true})
	if bytes.Contains(plain.Bytes(), []byte("\x1b[")) {
		t.Error("plain text output has ANSI escapes")
	}
	if !bytes.Contains(color.Bytes(), []byte("\x1b[31m")) {
		t.Error("coloured output lacks the deny colour")
	}
}

// TestSARIFValidates validates the SARIF output against the OASIS SARIF
// 2.1.0 JSON schema shipped in testdata, and checks the locations point at
// the agent source line when provenance is known.
func TestSARIFValidates(t *testing.T) {
	var buf bytes.Buffer
	if err := formatReport(t).Write(&buf, "sarif", report.WriteOptions{ToolVersion: "v1.2.3"}); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open("testdata/sarif-schema-2.1.0.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
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
	if err := formatReport(t).Write(&buf, "github", report.WriteOptions{}); err != nil {
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
	if err := formatReport(t).Write(&buf, "gitlab", report.WriteOptions{}); err != nil {
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
	if err := (&report.Report{}).Write(&bytes.Buffer{}, "xml", report.WriteOptions{}); err == nil {
		t.Fatal("unknown format accepted")
	}
}
