package runner

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The exit-code table of docs/runner.md is ExitCodes(), row for row, and
// every code ExitCode returns has a row.
func TestExitCodesDocumented(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "docs", "runner.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(data), "## Exit codes\n\n| code | meaning |\n|---|---|\n")
	if !ok {
		t.Fatal("docs/runner.md has no exit-code table")
	}
	var doc []ExitCodeDoc
	for _, l := range strings.Split(after, "\n") {
		if !strings.HasPrefix(l, "| ") {
			break
		}
		code, meaning, _ := strings.Cut(strings.TrimSuffix(strings.TrimPrefix(l, "| "), " |"), " | ")
		doc = append(doc, ExitCodeDoc{code, meaning})
	}
	if !slices.Equal(doc, ExitCodes()) {
		t.Errorf("docs/runner.md's table:\n%v\nExitCodes():\n%v", doc, ExitCodes())
	}
	var codes []string
	for _, e := range ExitCodes() {
		codes = append(codes, e.Code)
	}
	for _, c := range []string{"69", "75", "78", "124", "130"} {
		if !slices.Contains(codes, c) {
			t.Errorf("no row for %s", c)
		}
	}
}
