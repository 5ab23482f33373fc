// Package childproc runs the runner's child processes: the openshell CLI
// and the tar of an output download. It starts a child in its own process
// group with the parent-death signal where the system has one, makes
// cancellation and termination reach the whole group, tells whether a
// recorded pid is still the process that wrote it (for reaping the
// sandboxes of a runner that died), and holds the bounded writers a
// child's output is read into: whatever comes out of a sandbox is hostile,
// so none of them grows without bound.
package childproc
