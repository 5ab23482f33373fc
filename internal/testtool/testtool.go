package testtool

import (
	"go/build"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Required reports whether a missing tool must fail the test.
func Required() bool { return os.Getenv("FULLSEND_INTEGRATION") == "1" }

// Find returns the path of the named tool: on PATH, else in GOPATH/bin,
// where the .ci/install.d scripts `go install` it. install names the script
// that provides it, for the message.
func Find(t testing.TB, name, install string) string {
	t.Helper()
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	if p := filepath.Join(build.Default.GOPATH, "bin", name); isExecutable(p) {
		return p
	}
	if Required() {
		t.Fatalf("%s not found (install it with %s)", name, install)
	}
	t.Skipf("%s not installed; run %s (or set FULLSEND_INTEGRATION=1 to require it)", name, install)
	return ""
}

func isExecutable(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir() && st.Mode()&0o111 != 0
}
