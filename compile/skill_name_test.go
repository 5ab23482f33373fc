package compile

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/fullsend-ai/agent-sandbox/agentdef"
)

// TestSkillDisplayName: Claude Code loads a skill whose name is a display
// name and names it after its directory (loadSkillsFromSkillsDir,
// src/skills/loadSkillsDir.ts: skillName = entry.name); so does fullsend,
// with a warning. The fixtures are real (realWorldDir, sources in its
// README):
// anthropics/claude-code's own plugin-dev skill `name: Plugin Settings`,
// and yushaw/agentGraph's `name: PDF Processing`. An agent preloads the
// skill by its directory.
func TestSkillDisplayName(t *testing.T) {
	for _, tc := range []struct {
		fixture, file, display, dir string
	}{
		{"cc-plugin-dev-plugin-settings", "skills/plugin-settings/SKILL.md", "Plugin Settings", "plugin-settings"},
		{"agentgraph-pdf", "skills/pdf/SKILL.md", "PDF Processing", "pdf"},
	} {
		t.Run(tc.fixture, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(realWorldDir(t, tc.fixture), filepath.FromSlash(tc.file)))
			if err != nil {
				t.Fatal(err)
			}
			fsys := fstest.MapFS{
				tc.file:       {Data: data},
				"agents/a.md": {Data: []byte("---\nname: a\ndescription: d\ntools: Read, Skill\nskills: [" + tc.dir + "]\n---\nbody\n")},
			}
			proj, err := agentdef.Load(fsys)
			if err != nil {
				t.Fatal(err)
			}
			s := proj.Skills[tc.dir]
			if s == nil {
				t.Fatalf("no skill %q; skills: %v", tc.dir, slices.Sorted(maps.Keys(proj.Skills)))
			}
			if _, ok := proj.Skills[tc.display]; ok {
				t.Errorf("skill also known by its display name %q", tc.display)
			}
			var named []string
			for _, w := range proj.Warnings {
				if w.Field == "name" {
					named = append(named, w.Message)
				}
			}
			if len(named) != 1 || !strings.Contains(named[0], `is named "`+tc.dir+`" after its directory`) || !strings.Contains(named[0], tc.display) {
				t.Errorf("name warnings %q, want one naming %q after its directory", named, tc.dir)
			}
			out, err := Compile(context.Background(), proj, fsys, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if got := out.Agents["a"].Skills; !slices.Equal(got, []string{tc.dir}) {
				t.Errorf("agent skills %v, want [%s]", got, tc.dir)
			}
		})
	}
}
