package stage

import (
	"os"
	"path/filepath"
	"testing"
)

// mapEnv is a getenv over a fixed map.
func mapEnv(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

// noEnv is a getenv with nothing set.
func noEnv(string) (string, bool) { return "", false }

// checkout writes a workspace named repo: files by slash path.
func checkout(t *testing.T, files map[string]string) string {
	t.Helper()
	ws := filepath.Join(t.TempDir(), "repo")
	for name, content := range files {
		p := filepath.Join(ws, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return ws
}
