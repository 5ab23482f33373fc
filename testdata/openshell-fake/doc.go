// Command openshell-fake is a FAKE of NVIDIA OpenShell's `openshell` CLI and
// `openshell-gateway` service, for fullsend's runner tests. It is not
// OpenShell and sandboxes nothing: `sandbox exec` runs the command LOCALLY in
// a scratch directory that stands in for the sandbox, and says so on stderr.
//
// It follows the CLI contract in shared/reference/openshell-policy.md
// strictly, as read from NVIDIA/OpenShell's source at v0.0.83 and v0.0.111
// (each behaviour cites path:line@tag where it is modelled): the gateway's
// driver, TLS and port requirements and its registration with the CLI
// (gateway.go), `status` exit codes (0 not_configured or connected, 1 when a
// registered gateway refuses connections), `sandbox create` blocking until
// Ready and recording --from (the default image otherwise), `policy get`'s
// effective view on both versions, the gateway's hash de-duplication of
// `policy set` ("Policy unchanged", no new revision), upload/download as tar
// over the `ssh` client under the policy's filesystem rules (transfer.go),
// delete of a missing name (exit 0, "not found"), sandbox phases, DNS-1123
// names of at most 19 characters (v0.0.88+), strict policy parsing
// (openshell.Unmarshal, which rejects unknown fields as OpenShell's serde
// structs do), `policy set --wait` exit codes 0/1/124, exit status
// propagation from `sandbox exec`, and the CLI differences between v0.0.83
// and v0.0.111 (no `-o json` on status/get and no `--detach` before
// v0.0.92/v0.0.111).
// The supervisor's log files under /var/log, the `ocsf_json_enabled`
// setting (`settings set`), the gateway's log tail (`logs`) and the
// workspace boundary of `sandbox download` (which refuses /var/log at both
// tags) are modelled in logs.go.
// Sandboxes keep their `create --label` pairs (validated as the gateway
// does), and `sandbox list` filters by --selector and prints the table,
// --names, --ids or `-o json` (see list.go for the OpenShell sources).
// Providers v2 (profiles.go): `provider profile import`, `provider
// list-profiles`, typed `provider create`, `sandbox provider attach|detach`
// and the gateway's composition of `_provider_*` layers into the effective
// policy when the global setting providers_v2_enabled is on, with what
// v0.0.83 lacks (--global, --global-profile) refused there. Workspaces and
// the platform scope of v0.0.111 are not modelled (--global is accepted and
// ignored), nor is the gateway's ambiguity check of a candidate effective
// policy.
//
// Environment:
//
//	OPENSHELL_FAKE_STATE    state directory (required)
//	OPENSHELL_FAKE_LOG      JSON-lines call log (default STATE/calls.jsonl):
//	                        {"argv":[...],"env":[names only]}
//	OPENSHELL_FAKE_VERSION  0.0.111 (default) or 0.0.83, or any x.y.z
//	OPENSHELL_FAKE_GATEWAY  "up": a registered, healthy gateway without one running;
//	                        otherwise the gateway is the one `gateway add` (STATE/gateway.json)
//	                        or OPENSHELL_GATEWAY_ENDPOINT names, healthy when its port answers
//	OPENSHELL_FAKE_FAIL     comma-separated failure injections: create (deterministic),
//	    create-once and create-transient (transport errors), name-taken-once,
//	    never-ready (create fails, not Ready), phase-error, policy-differs (the
//	    supervisor synced back another policy as a new revision), policy-failed,
//	    policy-pending, load-pending, load-pending-polls=N, load-failed, exec-exit=N,
//	    sandbox-lost, egress-403-once, gateway-down, gateway-no-start, delete,
//	    download-partial[=SANDBOX_PATH] (the files land, then the download fails),
//	    no-log-files (the supervisor could not open /var/log: no log files),
//	    compose-extra (the gateway composes one endpoint more than a profile
//	    holds), global-policy (a global policy replaces the sandbox's: nothing
//	    composed, policy_source "global")
//	OPENSHELL_FAKE_EVENTS   JSON-lines file of OCSF events the sandbox logs at its first
//	                        exec: {"shorthand":"OCSF ...","ocsf":{...}} (logs.go)
//
// Run as `openshell-gateway` (a copy or link of this binary with that name)
// it pretends to be the gateway: it checks its driver, TLS and port flags,
// listens on the port, writes STATE/gateway.pid and gateway-info.json and
// waits for SIGTERM. As `podman` it serves `system service unix://PATH` (a
// listening socket), as `ssh` it is a stub that only has to exist.
//
// It is a test fixture, not part of the pipeline: the runner's and spawn's
// tests build it from this directory. Of this module it imports only
// openshell (the strict policy codec) and openshell/profile (for the bytes
// of OpenShell's embedded built-in profiles, not its decoder or
// composition); nothing may import it.
package main
