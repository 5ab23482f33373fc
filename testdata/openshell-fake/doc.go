// Command openshell-fake is a FAKE of NVIDIA OpenShell's `openshell` CLI and
// `openshell-gateway` service, for fullsend's runner tests. It is not
// OpenShell and sandboxes nothing: `sandbox exec` runs the command LOCALLY in
// a scratch directory that stands in for the sandbox, and says so on stderr.
//
// It follows the CLI contract in shared/reference/openshell-policy.md
// strictly: sandbox phases, DNS-1123 names of at most 19 characters (v0.0.88+),
// strict policy parsing (openshell.Unmarshal, which rejects unknown fields as
// OpenShell's serde structs do), `policy set --wait` exit codes 0/1/124, exit
// status propagation from `sandbox exec`, `status` exiting 0 even when the
// gateway is down, and the CLI differences between v0.0.83 and v0.0.111
// (no `-o json` on status/get and no `--detach` before v0.0.92/v0.0.111).
// Sandboxes keep their `create --label` pairs (validated as the gateway
// does), and `sandbox list` filters by --selector and prints the table,
// --names, --ids or `-o json` (see list.go for the OpenShell sources).
//
// Environment:
//
//	OPENSHELL_FAKE_STATE    state directory (required)
//	OPENSHELL_FAKE_LOG      JSON-lines call log (default STATE/calls.jsonl):
//	                        {"argv":[...],"env":[names only]}
//	OPENSHELL_FAKE_VERSION  0.0.111 (default) or 0.0.83, or any x.y.z
//	OPENSHELL_FAKE_GATEWAY  "up": report a healthy gateway without one running
//	OPENSHELL_FAKE_READY_POLLS  `sandbox get` calls before Ready (default 1)
//	OPENSHELL_FAKE_FAIL     comma-separated failure injections: create,
//	    create-once, name-taken-once, never-ready, phase-error, policy-differs, policy-failed,
//	    policy-pending, load-pending, load-failed, exec-exit=N,
//	    sandbox-lost, egress-403-once, gateway-down, gateway-no-start, delete,
//	    download-partial[=SANDBOX_PATH] (the files land, then the download fails)
//
// Run as `openshell-gateway` (a copy or link of this binary with that name)
// it pretends to be the gateway: it writes STATE/gateway.pid and waits for
// SIGTERM.
//
// It is a test fixture, not part of the pipeline: the runner's and spawn's
// tests build it from this directory. Of this module it imports only
// openshell (the strict policy codec); nothing may import it.
package main
