package version

import "runtime/debug"

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
