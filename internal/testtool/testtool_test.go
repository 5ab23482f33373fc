package testtool

import (
	"os"
	"path/filepath"
	"testing"
)

func TestFindOnPath(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "fullsend-testtool-probe")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir)
	if got := Find(t, "fullsend-testtool-probe", "nothing"); got != bin {
		t.Fatalf("Find = %q, want %q", got, bin)
	}
}

func TestFindMissingSkips(t *testing.T) {
	t.Setenv("FULLSEND_INTEGRATION", "")
	t.Setenv("PATH", t.TempDir())
	ran := false
	t.Run("missing", func(t *testing.T) {
		defer func() { ran = true }()
		Find(t, "fullsend-no-such-tool", "nothing")
		t.Error("Find returned for a missing tool")
	})
	if !ran {
		t.Fatal("subtest did not run")
	}
}
