package version

import (
	"runtime/debug"
	"strings"
	"testing"
)

// TestInfo: the build line names the version, module, commit and Go.
func TestInfo(t *testing.T) {
	bi := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/fullsend-ai/agent-sandbox", Version: "v1.2.3"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "0123abc"}, {Key: "vcs.modified", Value: "true"}}}
	b := info(bi, "v1.2.3")
	want := "v1.2.3 (module github.com/fullsend-ai/agent-sandbox, commit 0123abc (modified), go1.26.8)"
	if b.String() != want {
		t.Errorf("%q, want %q", b.String(), want)
	}
	if got := info(nil, "devel").String(); !strings.HasPrefix(got, "devel (go") {
		t.Errorf("no build info: %q", got)
	}
	if Info().GoVersion == "" {
		t.Error("no Go version")
	}
}
