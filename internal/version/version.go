package version

import (
	"runtime"
	"runtime/debug"
	"strings"
)

// Version is set at link time with -ldflags "-X .../internal/version.Version=v1.2.3".
// When unset, the module version from the build info is used, else "devel".
var Version = ""

// String returns the fullsend version.
func String() string {
	if Version != "" {
		return Version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "devel"
}

// Build describes the running binary: its version (String), the module it
// was built from, the VCS commit and whether the tree was modified, and the
// Go toolchain, from runtime/debug.ReadBuildInfo.
type Build struct {
	Version   string `json:"version"`
	Module    string `json:"module,omitempty"`
	Commit    string `json:"commit,omitempty"`
	Modified  bool   `json:"modified,omitempty"`
	GoVersion string `json:"go_version"`
}

// Info returns the running binary's Build.
func Info() Build {
	bi, _ := debug.ReadBuildInfo()
	return info(bi, String())
}

// info is Info from given build information (nil: none).
func info(bi *debug.BuildInfo, v string) Build {
	b := Build{Version: v, GoVersion: runtime.Version()}
	if bi == nil {
		return b
	}
	b.Module, b.GoVersion = bi.Main.Path, bi.GoVersion
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Commit = s.Value
		case "vcs.modified":
			b.Modified = s.Value == "true"
		}
	}
	return b
}

// String renders b in one line: `v1.2.3 (module M, commit C, modified, go1.26.8)`.
func (b Build) String() string {
	parts := []string{}
	if b.Module != "" {
		parts = append(parts, "module "+b.Module)
	}
	if b.Commit != "" {
		c := "commit " + b.Commit
		if b.Modified {
			c += " (modified)"
		}
		parts = append(parts, c)
	}
	parts = append(parts, b.GoVersion)
	return b.Version + " (" + strings.Join(parts, ", ") + ")"
}
