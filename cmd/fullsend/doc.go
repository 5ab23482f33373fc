// Command fullsend compiles agent definitions into OpenShell sandbox
// policies, builds and signs the agent-sandbox image, verifies it before a CI
// job runs it, and runs agents inside OpenShell sandboxes.
//
// It is the composition root of the pipeline and stays thin: each cobra
// command turns flags into one package's options, makes one call and prints
// the result; usage errors and flag hints are added here, never in the
// packages, and errors map to exit codes in one place. It is the only
// importer of package compile, and no package imports it.
package main
