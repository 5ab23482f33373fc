// Package atomicfile writes files so that a reader never sees a partial
// one: the bytes go to a temporary file in the target's directory, which is
// renamed into place only once complete. WriteIn does the same inside an
// os.Root, for outputs that must not escape a directory.
//
// compile, image, sign, verify, templates and the CLI write their outputs
// through it. It is a leaf: the standard library only.
package atomicfile
