// Package gcbudget sizes the garbage collector of short-lived batch
// commands (policy compile, policy lint): their allocations, OPA
// evaluation above all, die young while the live heap stays small, so the
// collector runs rarely or not at all below a budget.
package gcbudget

import (
	"bufio"
	"bytes"
	"io/fs"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// Fallback is the budget when the memory the process may use is unknown.
const Fallback = 256 << 20

// floor keeps a tiny cgroup from turning the collector into a busy loop.
const floor = 32 << 20

// Off is the percent for Apply that leaves the collector to the limit: a
// batch command whose allocations stay under its budget never collects.
const Off = -1

// Apply sets the collector of a batch command: a soft memory limit of Budget
// (runtime/debug.SetMemoryLimit), and, before the heap reaches it, a
// collection only when the heap has grown percent over what the last
// collection left live (runtime/debug.SetGCPercent; Off: none). It does
// nothing when the user set GOGC or GOMEMLIMIT, which keep their usual
// meaning.
func Apply(ceiling int64, percent int) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	debug.SetMemoryLimit(Budget(os.DirFS("/"), ceiling))
	debug.SetGCPercent(percent)
}

// Budget is the soft heap limit for a batch command: half the memory the
// process may use (its cgroup's limit, else the machine's memory, read
// from root, a view of /), at most ceiling, at least 32 MiB; Fallback, at
// most ceiling, when neither can be read. Half leaves the rest to the
// runtime's own overhead, the page cache and whatever else shares the
// container: the limit is soft, and a CI job killed for memory is worse
// than a slow one.
func Budget(root fs.FS, ceiling int64) int64 {
	avail, ok := cgroupLimit(root)
	if !ok {
		avail, ok = memTotal(root)
	}
	if !ok {
		return min(Fallback, ceiling)
	}
	return max(min(avail/2, ceiling), floor)
}

// cgroupLimit reads the memory limit of the process's cgroup: cgroup v2's
// memory.max ("max" is no limit), else cgroup v1's memory.limit_in_bytes
// (a huge value is no limit). Only the cgroup mounted at /sys/fs/cgroup is
// read, which is the process's own in a container.
func cgroupLimit(root fs.FS) (int64, bool) {
	for _, name := range []string{"sys/fs/cgroup/memory.max", "sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		if data, err := fs.ReadFile(root, name); err == nil {
			return parseLimit(strings.TrimSpace(string(data)))
		}
	}
	return 0, false
}

// parseLimit reads a cgroup memory limit: false for no limit ("max", or
// a value too large to be one) and for anything that is not a positive
// number of bytes.
func parseLimit(v string) (int64, bool) {
	if v == "max" {
		return 0, false
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n <= 0 || n >= 1<<60 {
		return 0, false
	}
	return n, true
}

// memTotal reads MemTotal from /proc/meminfo, in bytes.
func memTotal(root fs.FS) (int64, bool) {
	data, err := fs.ReadFile(root, "proc/meminfo")
	if err != nil {
		return 0, false
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:"); ok {
			return parseKB(rest)
		}
	}
	return 0, false
}

// parseKB reads the value of a /proc/meminfo line, "   N kB", in bytes.
func parseKB(rest string) (int64, bool) {
	f := strings.Fields(rest)
	if len(f) != 2 || f[1] != "kB" {
		return 0, false
	}
	kb, err := strconv.ParseInt(f[0], 10, 64)
	if err != nil || kb <= 0 || kb > 1<<50 {
		return 0, false
	}
	return kb << 10, true
}
