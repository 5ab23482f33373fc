// Package runner is fullsend's in-image runner: it verifies a compiled
// project against its manifest, resolves runtime placeholders from the CI
// environment (GitHub Actions, GitLab CI), and runs one agent inside an
// NVIDIA OpenShell sandbox by driving the openshell CLI. It fails closed: no
// verified policy, no OpenShell, no healthy gateway, no sandbox, no run. The
// sandbox is deleted on every path out, including timeouts and signals;
// the sandbox of a run killed outright (SIGKILL) is reaped by the next run,
// through its fullsend labels and the owner record it left (reap.go).
//
// Before anything is created, preflight (prereq.go, shared with Doctor)
// checks the openshell version, the ssh client, a sandbox image pinned by
// digest and that the policy lets the uploads land; the gateway is a
// registered healthy one or one the run starts with the podman driver
// (bringup.go). Every sandbox is created --from the pinned image, and the
// policy is confirmed loaded without re-pushing an identical one.
//
// What crosses the sandbox boundary as files (the staged workspace, the
// agent definition for its runtime, outputs extracted and sanitized) is
// package runner/stage; reading, redacting and counting OpenShell's logs
// is package runner/evidence; where a placeholder's runtime value comes
// from is package runner/resolve. The runner drives the openshell
// commands around them.
//
// It is the last stage of the pipeline, inside the image `fullsend verify`
// approved: LoadProject checks the bundle's manifest against the policies
// digest verify exported (FULLSEND_POLICIES_DIGEST; New requires one in CI),
// and Project.Agent the
// agent's policy and source files against the manifest, through package
// bundle; policies are parsed, resolved and
// re-encoded with package openshell and the values checked with package
// placeholder. It must never import compile, policycue or lint, nor link
// CUE or OPA, and never sign or verify: signatures were checked by the job
// before, the digest chain carries that check into the image.
package runner
