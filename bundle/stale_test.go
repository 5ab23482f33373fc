package bundle

import (
	"errors"
	"strings"
	"testing"
	"testing/fstest"
)

// staleProject is a compiled bundle whose manifest pins one policy and two
// sources, with the bytes it pins.
func staleProject() fstest.MapFS {
	agent, skill, policy := []byte("agent"), []byte("skill"), []byte("policy")
	m := &Manifest{Schema: ManifestSchema, Agents: map[string]ManifestAgent{"a": {
		Policy: "a.yaml", PolicySHA256: SHA256Hex(policy), Source: "agents/a.md",
		Sources: []SourceFile{{Path: "agents/a.md", SHA256: SHA256Hex(agent)}, {Path: "skills/s/SKILL.md", SHA256: SHA256Hex(skill)}},
	}}}
	data, _ := m.Encode()
	return fstest.MapFS{
		"policies/manifest.json": {Data: data},
		"policies/a.yaml":        {Data: policy},
		"agents/a.md":            {Data: agent},
		"skills/s/SKILL.md":      {Data: skill},
	}
}

// TestFreshness: the manifest's digests decide, for sources and policies.
func TestFreshness(t *testing.T) {
	for name, tc := range map[string]struct {
		edit             func(fstest.MapFS)
		changed, missing string
	}{
		"fresh":          {edit: func(fstest.MapFS) {}},
		"source edited":  {edit: func(f fstest.MapFS) { f["agents/a.md"] = &fstest.MapFile{Data: []byte("edited")} }, changed: "agents/a.md"},
		"skill removed":  {edit: func(f fstest.MapFS) { delete(f, "skills/s/SKILL.md") }, missing: "skills/s/SKILL.md"},
		"policy by hand": {edit: func(f fstest.MapFS) { f["policies/a.yaml"] = &fstest.MapFile{Data: []byte("x")} }, changed: "policies/a.yaml"},
	} {
		t.Run(name, func(t *testing.T) {
			fsys := staleProject()
			tc.edit(fsys)
			s, err := Freshness(fsys, "policies")
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(s.Changed, ","); got != tc.changed {
				t.Errorf("changed %q, want %q", got, tc.changed)
			}
			if got := strings.Join(s.Missing, ","); got != tc.missing {
				t.Errorf("missing %q, want %q", got, tc.missing)
			}
			if s.Stale() != (tc.changed+tc.missing != "") {
				t.Errorf("Stale() = %v", s.Stale())
			}
		})
	}
	if _, err := Freshness(fstest.MapFS{}, "policies"); !errors.Is(err, ErrManifest) {
		t.Errorf("no manifest: %v, want ErrManifest", err)
	}
}

// TestStaleRule: one rule, refused in CI, a warning elsewhere, nothing
// when fresh.
func TestStaleRule(t *testing.T) {
	stale := &Staleness{PoliciesDir: "policies", Changed: []string{"agents/a.md"}}
	if w, err := StaleRule(stale, true, "fullsend policy compile ."); !errors.Is(err, ErrStale) || w != "" ||
		!strings.Contains(err.Error(), "agents/a.md") || !strings.Contains(err.Error(), "fullsend policy compile .") {
		t.Errorf("in CI: %q, %v; want ErrStale naming the file and the command", w, err)
	}
	if w, err := StaleRule(stale, false, "fullsend policy compile ."); err != nil || !strings.HasPrefix(w, "warning: ") || !strings.Contains(w, "agents/a.md") {
		t.Errorf("outside CI: %q, %v; want a warning", w, err)
	}
	if w, err := StaleRule(&Staleness{PoliciesDir: "policies"}, true, "x"); w != "" || err != nil {
		t.Errorf("fresh: %q, %v", w, err)
	}
}

// TestFreshnessElsewhere: a bundle copied away from its sources cannot be
// judged, which SourcesFound says.
func TestFreshnessElsewhere(t *testing.T) {
	fsys := staleProject()
	delete(fsys, "agents/a.md")
	delete(fsys, "skills/s/SKILL.md")
	s, err := Freshness(fsys, "policies")
	if err != nil || s.SourcesFound {
		t.Errorf("SourcesFound = %v (%v), want false", s.SourcesFound, err)
	}
	if s, _ := Freshness(staleProject(), "policies"); !s.SourcesFound {
		t.Error("SourcesFound = false in the project")
	}
}
