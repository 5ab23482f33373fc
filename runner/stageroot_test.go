package runner

import (
	"testing"

	"github.com/fullsend-ai/agent-sandbox/openshell"
)

// TestStageRoot: uploads run as the sandbox user under Landlock
// (crates/openshell-supervisor-process/src/sandbox/linux/landlock.rs:135-143
// @ v0.0.111), so the runner stages where the policy lets that user write.
func TestStageRoot(t *testing.T) {
	tests := []struct {
		name        string
		fs          *openshell.FilesystemPolicy
		root, files string
	}{
		{"read-only tier keeps /sandbox read-only", &openshell.FilesystemPolicy{
			ReadOnly: []string{"/sandbox", "/usr"}, ReadWrite: []string{"/sandbox/.claude", "/tmp"}},
			"/tmp", "/tmp/.fullsend"},
		{"include_workdir makes /sandbox writable", &openshell.FilesystemPolicy{
			IncludeWorkdir: true, ReadWrite: []string{"/tmp"}}, "/sandbox", "/sandbox/.fullsend"},
		{"read_write /sandbox", &openshell.FilesystemPolicy{ReadWrite: []string{"/sandbox"}}, "/sandbox", "/sandbox/.fullsend"},
		{"no filesystem policy", nil, "/tmp", "/tmp/.fullsend"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x := &run{req: Request{Workspace: "/home/runner/work/widgets"}}
			x.root = chooseStageRoot(&openshell.Policy{FilesystemPolicy: tt.fs})
			if got := x.stageRoot(); got != tt.root {
				t.Errorf("stageRoot = %s, want %s", got, tt.root)
			}
			if got := x.runnerDir(); got != tt.files {
				t.Errorf("runnerDir = %s, want %s", got, tt.files)
			}
			if got, want := x.workdir(), tt.root+"/widgets"; got != want {
				t.Errorf("workdir = %s, want %s", got, want)
			}
		})
	}
}
