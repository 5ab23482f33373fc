// Package publish is the publish step of the pipeline, where the image and
// its signatures meet: it composes image (the daemonless build) and sign
// (cosign signatures and attestations) and writes the result through a
// small Publisher interface (an OCI layout, a tarball, registries, or
// several at once with Multi).
//
// Run is `fullsend image build` as one call, in an order that never lets a
// tag name an unsigned image:
//
//	resolve inputs -> signer ready -> Prepare -> image.Build
//	  -> sign the locally computed digest (once per repository)
//	  -> OCI layout (with its signature) -> tarball
//	  -> registries: image by digest, then signatures, then tags
//	  -> digest file
//
// SignImage is `fullsend image sign`: sign an image already in a registry
// or an OCI layout and store the signature next to it.
//
// Options and SignOptions mirror the CLI flags one field each; the
// decisions the CLI used to make itself (the version from git describe,
// the layer cache directory, the revision, builder id and source
// repository from the CI environment) are functions here with their own
// tests. Invalid options are reported as *OptionError with a sentinel Kind
// and no flag names; the CLI renders them with its flags.
//
// publish imports image and sign; image never imports sign. publish must
// never import cmd, compile, policycue or lint: compiling stale policies
// is the caller's Prepare hook.
package publish
