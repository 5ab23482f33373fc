package gcbudget

import (
	"math"
	"runtime/debug"
	"testing"
	"testing/fstest"
)

func TestBudget(t *testing.T) {
	const gib = 1 << 30
	meminfo := func(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s)} }
	for _, tc := range []struct {
		name    string
		files   fstest.MapFS
		ceiling int64
		want    int64
	}{
		{"nothing readable", fstest.MapFS{}, gib, Fallback},
		{"nothing readable, low ceiling", fstest.MapFS{}, 64 << 20, 64 << 20},
		{"machine memory", fstest.MapFS{"proc/meminfo": meminfo("MemTotal:       24576000 kB\nMemFree: 1 kB\n")}, gib, gib},
		{"small machine", fstest.MapFS{"proc/meminfo": meminfo("MemTotal: 1048576 kB\n")}, gib, 512 << 20},
		{"cgroup v2 limit wins", fstest.MapFS{
			"sys/fs/cgroup/memory.max": meminfo("536870912\n"),
			"proc/meminfo":             meminfo("MemTotal: 24576000 kB\n"),
		}, gib, 256 << 20},
		{"cgroup v2 without limit", fstest.MapFS{
			"sys/fs/cgroup/memory.max": meminfo("max\n"),
			"proc/meminfo":             meminfo("MemTotal: 4194304 kB\n"),
		}, gib, gib},
		{"cgroup v1 limit", fstest.MapFS{"sys/fs/cgroup/memory/memory.limit_in_bytes": meminfo("1073741824\n")}, gib, 512 << 20},
		{"cgroup v1 unlimited", fstest.MapFS{
			"sys/fs/cgroup/memory/memory.limit_in_bytes": meminfo("9223372036854771712\n"),
			"proc/meminfo": meminfo("MemTotal: 2097152 kB\n"),
		}, gib, gib},
		{"tiny cgroup keeps the floor", fstest.MapFS{"sys/fs/cgroup/memory.max": meminfo("16777216")}, gib, floor},
		{"garbage cgroup falls back to meminfo", fstest.MapFS{
			"sys/fs/cgroup/memory.max": meminfo("lots"),
			"proc/meminfo":             meminfo("MemTotal: 2097152 kB\n"),
		}, gib, gib},
		{"garbage meminfo", fstest.MapFS{"proc/meminfo": meminfo("MemTotal: many\n")}, gib, Fallback},
		{"meminfo in another unit", fstest.MapFS{"proc/meminfo": meminfo("MemTotal: 2 GB\n")}, gib, Fallback},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Budget(tc.files, tc.ceiling); got != tc.want {
				t.Errorf("Budget = %d MiB, want %d MiB", got>>20, tc.want>>20)
			}
		})
	}
}

// TestApply: Apply sets the percent and a limit, and leaves both alone when
// the user set GOGC or GOMEMLIMIT.
func TestApply(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	tests := []struct {
		name, gogc, memlimit string
		percent              int
		want                 int
	}{
		{name: "compile", percent: 1000, want: 1000},
		{name: "lint", percent: Off, want: Off},
		{name: "GOGC set", gogc: "50", percent: 1000, want: 100},
		{name: "GOMEMLIMIT set", memlimit: "1GiB", percent: Off, want: 100},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("GOGC", tt.gogc)
			t.Setenv("GOMEMLIMIT", tt.memlimit)
			debug.SetGCPercent(100)
			debug.SetMemoryLimit(math.MaxInt64)
			Apply(1<<30, tt.percent)
			if got := debug.SetGCPercent(100); got != tt.want {
				t.Errorf("GC percent %d, want %d", got, tt.want)
			}
			limit := debug.SetMemoryLimit(math.MaxInt64)
			if applied := tt.gogc == "" && tt.memlimit == ""; applied != (limit != math.MaxInt64) {
				t.Errorf("memory limit %d after Apply (applied: %v)", limit, applied)
			}
		})
	}
}
