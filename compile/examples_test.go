package compile

import (
	"os"
	"path"
	"path/filepath"
	"testing"

	"github.com/fullsend-ai/agent-sandbox/internal/fixture"
)

// The bundled examples that are partly other projects' files keep only our
// part in testdata/<system> (agents and policy tests we wrote, the compiled
// policies, which are the golden files); the rest is read in
// ../shared/fixtures/from-project/testdata/<system> (internal/fixture).
var (
	// thirdPartyOutputs are the files of an example's compiled bundle that
	// are another project's files passed through unchanged (the provider
	// profiles a bundle carries), or the compiled files of another
	// project's agents that ../shared/fixtures keeps byte for byte: the
	// golden comparison reads them in the fixtures and -update does not
	// write them into the repository (a compile that changes one shows as a
	// diff against the fixture; the changed file is then ours to keep).
	thirdPartyOutputs = map[string][]string{
		"fullsend-agents":    {"prioritize.yaml", "triage-agent.yaml", "provenance.json"},
		"fullsend-providers": {"profiles"},
	}
)

// exampleDir is the project directory of the bundled example system: its
// directory in testdata, or a copy of it with its third-party inputs laid
// over.
func exampleDir(t testing.TB, system string) string {
	t.Helper()
	return fixture.Example(t, filepath.Join("..", "testdata", system), system)
}

// goldenDir is the directory the compiled bundle of system is compared
// with: testdata/<system>/policies, with the bundle's third-party files
// laid over from the fixtures.
func goldenDir(t testing.TB, system string) string {
	t.Helper()
	dir := filepath.Join("..", "testdata", system, "policies")
	if paths, ok := thirdPartyOutputs[system]; ok {
		return fixture.Overlay(t, dir, path.Join("from-project", "testdata", system, "policies"), paths...)
	}
	return dir
}

// writeGolden rewrites testdata/<system>/policies with out, leaving out the
// bundle's third-party files (goldenDir reads them in the fixtures).
func writeGolden(t testing.TB, system string, out *Output) {
	t.Helper()
	dir := filepath.Join("..", "testdata", system, "policies")
	if err := Write(dir, out); err != nil {
		t.Fatal(err)
	}
	for _, p := range thirdPartyOutputs[system] {
		if err := os.RemoveAll(filepath.Join(dir, filepath.FromSlash(p))); err != nil {
			t.Fatal(err)
		}
	}
}
