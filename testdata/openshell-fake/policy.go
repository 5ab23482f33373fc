package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"strconv"

	"github.com/fullsend-ai/agent-sandbox/openshell"
)

// revision is one policy revision and its supervisor load status.
type revision struct {
	Version   int    `json:"version"`
	Status    string `json:"status"` // pending, loaded, failed, superseded
	LoadError string `json:"load_error,omitempty"`
	Hash      string `json:"hash,omitempty"`
}

// policyHash stands for deterministic_policy_hash (crates/openshell-server/
// src/grpc/policy.rs v0.0.83:3125, v0.0.111:4719): a hash of the parsed
// policy, so that re-serializing the same policy gives the same hash.
func policyHash(data []byte) string {
	p, err := openshell.Unmarshal(data)
	if err != nil {
		return ""
	}
	b, err := openshell.Marshal(p, "")
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func readPolicy(file string) (*openshell.Policy, []byte, int) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, nil, fail(1, "failed to read policy file %s: %v", file, err)
	}
	p, err := openshell.Unmarshal(data)
	if err != nil {
		return nil, nil, fail(1, "failed to parse sandbox policy YAML: %v", err)
	}
	if p.Version != 1 {
		return nil, nil, fail(1, "unsupported policy version %d", p.Version)
	}
	return p, data, 0
}

// defaultPolicy stands for the image's default policy: what a sandbox
// enforces when the sent policy did not load.
var defaultPolicy = &openshell.Policy{Version: 1,
	FilesystemPolicy: &openshell.FilesystemPolicy{IncludeWorkdir: true, ReadOnly: []string{"/usr"}, ReadWrite: []string{"/sandbox", "/tmp"}},
	Landlock:         &openshell.Landlock{Compatibility: "best_effort"},
	Process:          &openshell.Process{RunAsUser: "sandbox", RunAsGroup: "sandbox"}}

// printPolicy prints the active policy re-serialized from its parsed form,
// as OpenShell does from its proto, not the bytes that were sent.
func (f *fake) printPolicy(s *sandbox) int {
	p := defaultPolicy
	_, differs := f.fails["policy-differs"]
	if len(s.Policy) > 0 && (!differs || s.PolicySet) {
		var err error
		if p, err = openshell.Unmarshal(s.Policy); err != nil {
			return fail(1, "%v", err)
		}
	}
	// The active policy is the effective one: with providers_v2_enabled the
	// gateway composes a _provider_<name> network policy per attached
	// provider into it (profiles.go). A global policy replaces it.
	if _, global := f.fails["global-policy"]; global {
		p = defaultPolicy
	}
	p, code := f.compose(p, s)
	if code != 0 {
		return code
	}
	b, err := openshell.Marshal(p, "")
	if err != nil {
		return fail(1, "%v", err)
	}
	os.Stdout.Write(b)
	return 0
}

func (f *fake) policySet(args []string) int {
	fl, code := parseFlags(args, map[string]bool{"--policy": true, "--wait": false, "--timeout": true, "--global": false, "--yes": false}, 1)
	if code != 0 {
		return code
	}
	if len(fl.pos) != 1 || fl.value("--policy") == "" {
		return fail(2, "usage: openshell policy set <NAME> --policy <FILE> [--wait] [--timeout <SECS>]")
	}
	s, code := f.load(fl.pos[0])
	if code != 0 {
		return code
	}
	p, data, code := readPolicy(fl.value("--policy"))
	if code != 0 {
		return code
	}
	if staticSectionsChanged(s.Policy, p) {
		return fail(1, "process policy cannot be changed on a live sandbox (static sections must repeat the creation policy exactly)")
	}
	// The gateway de-duplicates by hash: the same policy as the latest
	// revision makes no new revision, and the CLI prints "Policy unchanged"
	// and returns before --wait (crates/openshell-server/src/grpc/policy.rs
	// v0.0.83:1552, v0.0.111:2728; crates/openshell-cli/src/run.rs
	// v0.0.83:6742, v0.0.111:5944). A pending revision stays pending.
	latest := s.Revisions[len(s.Revisions)-1]
	if h := policyHash(data); h != "" && h == latest.Hash {
		fmt.Fprintf(os.Stderr, "· Policy unchanged (version %d, hash: %s)\n", latest.Version, h[:12])
		return 0
	}
	next := revision{Version: len(s.Revisions) + 1, Status: "loaded", Hash: policyHash(data)}
	supersede(s.Revisions)
	if code, ok := f.injectedPolicyFailure(s, next, fl.has("--wait")); ok {
		return code
	}
	s.Revisions = append(s.Revisions, next)
	s.Policy, s.PolicySet = data, true
	f.save(s)
	fmt.Fprintf(os.Stderr, "Policy revision %d loaded\n", next.Version)
	return 0
}

// staticSectionsChanged reports whether p's static sections (filesystem,
// Landlock, process) differ from those of the sandbox's current policy
// (its YAML, cur); false when the sandbox has none or it does not parse.
func staticSectionsChanged(cur []byte, p *openshell.Policy) bool {
	old, err := openshell.Unmarshal(cur)
	if err != nil || len(cur) == 0 {
		return false
	}
	a, _ := json.Marshal([]any{old.FilesystemPolicy, old.Landlock, old.Process})
	b, _ := json.Marshal([]any{p.FilesystemPolicy, p.Landlock, p.Process})
	return !bytes.Equal(a, b)
}

// supersede marks every loaded or pending revision superseded.
func supersede(revs []revision) {
	for i := range revs {
		if revs[i].Status == "loaded" || revs[i].Status == "pending" {
			revs[i].Status = "superseded"
		}
	}
}

// injectedPolicyFailure records next as failed (policy-failed) or, under
// --wait, pending (policy-pending) and returns the exit code and true
// when OPENSHELL_FAKE_FAIL asks for either.
func (f *fake) injectedPolicyFailure(s *sandbox, next revision, wait bool) (int, bool) {
	if _, ok := f.fails["policy-failed"]; ok {
		next.Status, next.LoadError = "failed", "injected load failure (openshell-fake)"
		s.Revisions = append(s.Revisions, next)
		f.save(s)
		return fail(1, "policy revision %d failed to load: status FAILED (openshell-fake)", next.Version), true
	}
	if _, ok := f.fails["policy-pending"]; ok && wait {
		next.Status = "pending"
		s.Revisions = append(s.Revisions, next)
		f.save(s)
		fmt.Fprintf(os.Stderr, "timed out waiting for policy revision %d (status PENDING)\n", next.Version)
		return 124, true
	}
	return 0, false
}

// pollPending counts a `policy get` on s; load-pending-polls=N: a
// pending revision is loaded by the supervisor after N `policy get` calls
// (a slow supervisor, #2159).
func (f *fake) pollPending(s *sandbox) {
	s.PolicyGets++
	if n, err := strconv.Atoi(f.fails["load-pending-polls"]); err == nil && s.PolicyGets >= n {
		for i := range s.Revisions {
			if s.Revisions[i].Status == "pending" {
				s.Revisions[i].Status = "loaded"
			}
		}
	}
}

// revisionView is what `policy get` shows of revision revNo (0: the
// effective policy, below 0: the latest revision).
func (f *fake) revisionView(s *sandbox, revNo int) (map[string]any, int) {
	latest := s.Revisions[len(s.Revisions)-1]
	obj := map[string]any{"scope": "sandbox", "sandbox": s.Name, "active_version": latest.Version}
	if revNo == 0 {
		// Without --rev both versions print the effective view, status
		// "effective" (run.rs sandbox_policy_get_to_writer v0.0.83:7165-7190,
		// v0.0.111:6376-6400).
		obj["version"], obj["status"], obj["policy_source"], obj["hash"] = latest.Version, "effective", "sandbox", latest.Hash
		if _, global := f.fails["global-policy"]; global {
			obj["policy_source"] = "global"
		}
		return obj, 0
	}
	r := latest
	if revNo > 0 {
		if revNo > len(s.Revisions) {
			return nil, fail(1, "policy revision %d not found", revNo)
		}
		r = s.Revisions[revNo-1]
	}
	obj["version"], obj["status"] = r.Version, r.Status
	if r.LoadError != "" {
		obj["load_error"] = r.LoadError
	}
	return obj, 0
}

// policyGet reports a policy revision: since v0.0.111 without --rev it
// shows the effective policy (status "effective"), before it shows the
// latest revision with its load status.
func (f *fake) policyGet(args []string) int {
	fl, code := parseFlags(args, map[string]bool{"--rev": true, "-o": true, "--output": true, "--full": false, "--base": false, "--global": false}, 1)
	if code != 0 {
		return code
	}
	if len(fl.pos) != 1 {
		return fail(2, "openshell-fake requires a sandbox name")
	}
	s, code := f.load(fl.pos[0])
	if code != 0 {
		return code
	}
	revNo, _ := strconv.Atoi(fl.value("--rev"))
	f.pollPending(s)
	f.save(s)
	obj, code := f.revisionView(s, revNo)
	if code != 0 {
		return code
	}
	if fl.value("-o", "--output") == "json" {
		b, _ := json.MarshalIndent(obj, "", "  ")
		fmt.Println(string(b))
		return 0
	}
	fmt.Printf("Version:      %v\nStatus:       %v\nActive:       %v\n", obj["version"], obj["status"], obj["active_version"])
	return 0
}
