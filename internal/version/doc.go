// Package version reports the fullsend build version.
//
// The version is stamped at link time (-X .../version.Version, as
// `fullsend image build` does when it compiles the binary) or read from the
// module's build information. The CLI reports it (`fullsend version`, SARIF,
// signing provenance) and forge sends it as its User-Agent. It is a leaf:
// the standard library only.
package version
