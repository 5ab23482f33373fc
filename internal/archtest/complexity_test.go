package archtest

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fzipp/gocyclo"
)

// Complexity ceilings of the production code (every .go file but tests,
// testdata and hidden directories: what `gocyclo -avg -ignore _test.go .`
// measures from the module root). Issue 22 set them after a review against
// ko (3.78), conftest (4.17) and go-containerregistry's pkg/v1 (3.13).
const (
	maxAverageComplexity  = 4.5
	maxFunctionComplexity = 30
)

// TestComplexity keeps the average cyclomatic complexity of the production
// code under maxAverageComplexity and every function at or under
// maxFunctionComplexity, so that a function that grows past them is split
// along its seams in the change that grows it.
func TestComplexity(t *testing.T) {
	stats := productionComplexity(t, filepath.Join("..", ".."))
	if len(stats) == 0 {
		t.Fatal("no functions found: is the module root ../..?")
	}
	if avg := stats.AverageComplexity(); avg >= maxAverageComplexity {
		t.Errorf("average cyclomatic complexity %.2f over %d functions, want under %.1f; the most complex:\n%s",
			avg, len(stats), maxAverageComplexity, top(stats, 10))
	}
	for _, s := range stats.SortAndFilter(-1, maxFunctionComplexity) {
		t.Errorf("%s: %s has cyclomatic complexity %d, want at most %d: split it along its cases",
			s.Pos, s.FuncName, s.Complexity, maxFunctionComplexity)
	}
	t.Logf("average cyclomatic complexity %.2f over %d functions; the most complex:\n%s",
		stats.AverageComplexity(), len(stats), top(stats, 3))
}

// productionComplexity measures every function declared in a non-test Go
// file under root, skipping testdata and hidden directories as gocyclo does.
func productionComplexity(t *testing.T, root string) gocyclo.Stats {
	t.Helper()
	var stats gocyclo.Stats
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != root && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") || strings.HasPrefix(d.Name(), "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		stats = gocyclo.AnalyzeASTFile(f, fset, stats)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return stats
}

// top renders the n most complex functions, one per line.
func top(stats gocyclo.Stats, n int) string {
	var b strings.Builder
	for _, s := range stats.SortAndFilter(n, -1) {
		b.WriteString("  " + s.String() + "\n")
	}
	return b.String()
}
