package check

import (
	"os"
	"path"
	"path/filepath"
	"testing"

	"github.com/fullsend-ai/agent-sandbox/internal/fixture"
	"github.com/fullsend-ai/agent-sandbox/openshell/validate"
)

// The third-party inputs these tests read in ../shared/fixtures: OpenShell's
// built-in profiles at a tag, and fullsend-ai/agents' profiles and base
// policy, with the review and code agents' policy tests (its README).
const (
	upstreamProfiles = "from-project/openshell/profile/builtin/"
	agentsFixture    = "from-project/openshell/profile/testdata/agents"
)

// readInputs reads every *.yaml of the fixture directory dir, each named
// dir/<base name>.
func readInputs(t *testing.T, dir string) []validate.Input {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(fixture.Path(t, dir), "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no files in fixture %s: %v", dir, err)
	}
	var ins []validate.Input
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		ins = append(ins, validate.Input{File: path.Join(dir, filepath.Base(f)), Data: b})
	}
	return ins
}

// readAgents returns a reader of the fullsend-ai/agents fixture, by path
// below it (profiles/NAME.yaml, policies/base.yaml).
func readAgents(t *testing.T) func(name string) ([]byte, error) {
	root := fixture.Path(t, agentsFixture)
	return func(name string) ([]byte, error) {
		return os.ReadFile(filepath.Join(root, filepath.FromSlash(name)))
	}
}

// fuzzSeeds returns the *.yaml files of the fixture directories dirs when
// the fixtures are beside the checkout (seeds only: the fuzz target runs
// without them).
func fuzzSeeds(dirs ...string) [][]byte {
	var out [][]byte
	for _, d := range dirs {
		files, _ := filepath.Glob(filepath.Join("..", "..", "..", fixture.Root, filepath.FromSlash(d), "*.yaml"))
		for _, f := range files {
			if b, err := os.ReadFile(f); err == nil {
				out = append(out, b)
			}
		}
	}
	return out
}
