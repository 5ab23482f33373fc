package profile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fullsend-ai/agent-sandbox/internal/fixture"
)

func TestIsProfile(t *testing.T) {
	for _, tc := range []struct {
		doc  string
		want bool
	}{
		{"id: x\nendpoints: []\n", true},
		{"id: x\ndisplay_name: X\n", true},
		{"id: x\ncredentials: []\n", true},
		{"version: 1\nnetwork_policies: {}\n", false},
		{"version: 1\nid: x\nendpoints: []\n", false},
		{"id: x\n", false},
		{"[", false},
		{"- a\n", false},
	} {
		if got := IsProfile([]byte(tc.doc)); got != tc.want {
			t.Errorf("IsProfile(%q) = %v", tc.doc, got)
		}
	}
	files, err := filepath.Glob(filepath.Join(fixture.Path(t, "profiles/openshell"), "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no OpenShell profiles: %v", err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if !IsProfile(data) {
			t.Errorf("%s not recognised", f)
		}
	}
}

func TestProviderRuleName(t *testing.T) {
	// compose.rs:121-126 @ v0.0.111.
	for in, want := range map[string]string{"my-github": "_provider_my_github", "Work GitHub!": "_provider_work_github",
		"...": "_provider_unnamed", "fullsend-vertex-ai": "_provider_fullsend_vertex_ai", "é": "_provider_unnamed"} {
		if got := ProviderRuleName(in); got != want {
			t.Errorf("ProviderRuleName(%q) = %q, want %q", in, got, want)
		}
	}
	if !IsProviderRuleName("_provider_") || IsProviderRuleName("custom_provider_x") {
		t.Error("IsProviderRuleName")
	}
}

// TestCodesDocumented keeps docs/providers.md listing every code.
func TestCodesDocumented(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "providers.md"))
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("codes.go")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range strings.Split(string(src), "\n") {
		i := strings.Index(line, `"OPP`)
		if i < 0 {
			continue
		}
		code := line[i+1 : i+7]
		n++
		if !strings.Contains(string(doc), "| "+code+" |") {
			t.Errorf("code %s is not in the docs/providers.md table", code)
		}
	}
	if n < 15 {
		t.Fatalf("found only %d codes", n)
	}
}
