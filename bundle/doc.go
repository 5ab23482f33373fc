// Package bundle is the compiled bundle: what `fullsend policy compile`
// writes into policies/ and every later stage reads. It owns the formats
// (manifest.json with the digests that pin every policy and source file,
// provenance.json with the file:line behind every policy element) and the one
// check that a bundle's files match its manifest: [Open].
//
// In the pipeline it sits between compile (the only writer) and image,
// runner, spawn, lint and the CLI (readers). It imports the standard library
// only: no package of this module, no CUE, no OPA, so that readers of a
// compiled bundle never link the compiler.
package bundle
