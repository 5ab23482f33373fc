package validate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fullsend-ai/agent-sandbox/internal/fixture"
	"github.com/fullsend-ai/agent-sandbox/openshell"
	"gopkg.in/yaml.v3"
)

// upstreamLoadCase is one policy OpenShell's own tests or repository load (or
// refuse), transcribed from OpenShell at Tag. The cases transcribe another
// project's tests and files, so they are read in
// ../shared/fixtures/from-project/openshell/validate/testdata/upstream-load
// (internal/fixture); its README gives the format and how they were mined.
type upstreamLoadCase struct {
	Name   string `yaml:"name"`
	Tag    string `yaml:"tag"`
	Cite   string `yaml:"cite"`
	Expect string `yaml:"expect"` // ok | refused | skip
	Source string `yaml:"source"`
	Reason string `yaml:"reason"`
	Policy string `yaml:"policy"`
}

// upstreamLoadOverride corrects a mined verdict: the real load path's answer
// where the unit test feeds a shape a real load never produces, or a skip.
type upstreamLoadOverride struct {
	Name   string `yaml:"name"`
	Tag    string `yaml:"tag"` // "" = every tag
	Expect string `yaml:"expect"`
	Reason string `yaml:"reason"`
}

func loadUpstreamCases(t *testing.T) []upstreamLoadCase {
	t.Helper()
	dir := fixture.Path(t, "from-project/openshell/validate/testdata/upstream-load")
	files, err := filepath.Glob(filepath.Join(dir, "cases-*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no upstream-load cases in %s: %v", dir, err)
	}
	var all []upstreamLoadCase
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var cs []upstreamLoadCase
		if err := yaml.Unmarshal(data, &cs); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		all = append(all, cs...)
	}
	data, err := os.ReadFile(filepath.Join(dir, "overrides.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var ovs []upstreamLoadOverride
	if err := yaml.Unmarshal(data, &ovs); err != nil {
		t.Fatalf("overrides.yaml: %v", err)
	}
	used := make([]bool, len(ovs))
	for i := range all {
		for j, o := range ovs {
			if o.Name == all[i].Name && (o.Tag == "" || o.Tag == all[i].Tag) {
				all[i].Expect, all[i].Reason = o.Expect, o.Reason
				used[j] = true
			}
		}
	}
	for j, o := range ovs {
		if !used[j] {
			t.Errorf("overrides.yaml: override %q (%s) matches no case", o.Name, o.Tag)
		}
	}
	return all
}

// TestUpstreamLoad replays OpenShell's own load and validation test inputs
// (and the policies in its repository) at v0.0.83 and v0.0.111: a case
// OpenShell refuses must give at least one error diagnostic, a case it loads
// none (warnings do not count).
func TestUpstreamLoad(t *testing.T) {
	cases := loadUpstreamCases(t)
	counts := map[string]int{}
	for _, c := range cases {
		t.Run(c.Tag+"/"+c.Name, func(t *testing.T) {
			switch c.Expect {
			case "skip":
				if c.Reason == "" {
					t.Fatalf("skip without a reason (%s)", c.Cite)
				}
				t.Skipf("%s: %s", c.Cite, c.Reason)
			case "ok", "refused":
			default:
				t.Fatalf("expect %q: want ok, refused or skip (%s)", c.Expect, c.Cite)
			}
			counts[c.Tag]++
			diags := File(c.Name+".yaml", []byte(c.Policy), c.Tag)
			refused := openshell.HasErrors(diags)
			if refused != (c.Expect == "refused") {
				var b strings.Builder
				for _, d := range diags {
					if d.Severity == openshell.SeverityError || refused != (c.Expect == "refused") && d.Trap {
						b.WriteString("\n  " + d.String())
					}
				}
				t.Errorf("%s: OpenShell %s says %s, Validate refused=%v%s\npolicy:\n%s", c.Cite, c.Tag, c.Expect, refused, b.String(), c.Policy)
			}
		})
	}
	t.Logf("replayed per tag: %v", counts)
}
