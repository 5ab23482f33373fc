package policydiff

import (
	"fmt"

	"github.com/fullsend-ai/agent-sandbox/openshell"
	"github.com/fullsend-ai/agent-sandbox/prover"
)

// binaries compares the binaries of every network policy.
func (d *differ) binaries() {
	bnps, hnps := d.b.Policy.NetworkPolicies, d.h.Policy.NetworkPolicies
	for _, k := range sortedKeys(bnps, hnps) {
		d.policyBinaries(k, bnps[k], hnps[k])
	}
}

// policyBinaries compares the binaries of one network policy, matched by
// path: added, removed, or listed by other sources.
func (d *differ) policyBinaries(k string, bnp, hnp openshell.NetworkPolicy) {
	bidx, hidx := binaryIndex(bnp.Binaries), binaryIndex(hnp.Binaries)
	for i, b := range hnp.Binaries {
		if j, ok := bidx[b.Path]; ok {
			d.binaryKept(k, j, i, b.Path)
		} else {
			d.binaryAdded(k, i, b.Path, bnp, hnp)
		}
	}
	for i, b := range bnp.Binaries {
		if _, ok := hidx[b.Path]; !ok {
			d.add(Change{Action: ActionRemove, Kind: "binary", Policy: k, Before: b.Path, Risk: RiskInfo,
				From: sourcesFor(d.b, binaryPath(k, i)), order: binaryOrder(k, b.Path)})
		}
	}
}

// binaryIndex maps each binary path to its index.
func binaryIndex(bins []openshell.Binary) map[string]int {
	idx := make(map[string]int, len(bins))
	for i, b := range bins {
		idx[b.Path] = i
	}
	return idx
}

// binaryPath is the policy path of the i-th binary of policy k.
func binaryPath(k string, i int) string {
	return fmt.Sprintf("network_policies.%s.binaries[%d]", k, i)
}

// binaryOrder sorts a binary's change after its policy's endpoints.
func binaryOrder(k, bin string) string {
	return fmt.Sprintf("2%s\x00\xff%s", k, bin)
}

// binaryKept reports a binary both sides list (at base index j and head
// index i) as moved when its sources changed, unless its policy's endpoint
// moved (the same move).
func (d *differ) binaryKept(k string, j, i int, bin string) {
	bs, hs := sourcesFor(d.b, binaryPath(k, j)), sourcesFor(d.h, binaryPath(k, i))
	if !sameOrigin(bs, hs) && !d.policyMoved(k) {
		d.add(Change{Action: ActionMove, Kind: "binary", Policy: k, Before: bin, After: bin, Risk: RiskInfo,
			From: hs, Was: bs, order: binaryOrder(k, bin)})
	}
}

// binaryAdded grades a binary the head adds to policy k: it can use the
// policy's endpoints, an interpreter or raw tool sends anything, and each
// credentialed endpoint is a new reach.
func (d *differ) binaryAdded(k string, i int, bin string, bnp, hnp openshell.NetworkPolicy) {
	c := d.add(Change{Action: ActionAdd, Kind: "binary", Policy: k, After: bin, From: sourcesFor(d.h, binaryPath(k, i)), order: binaryOrder(k, bin)})
	if len(bnp.Endpoints) == 0 {
		c.apply(grade{RiskInfo, "", "part of a new network policy"})
	} else {
		c.apply(grade{RiskMedium, "", "a new binary can use the policy's endpoints"})
	}
	if rawBinary(bin) {
		c.apply(grade{RiskHigh, CatRawBinary, "an interpreter or raw network tool sends whatever the agent writes"})
	}
	for _, ep := range hnp.Endpoints {
		c.apply(d.credentialedReach(bin, ep.Host, len(bnp.Endpoints) > 0)...)
	}
}

// credentialedReach grades a new binary's reach to a host that holds
// credentials (a link-local or metadata host is graded as a host): critical
// when OpenShell cannot inspect the binary's protocol, high when the base
// policy already had endpoints.
func (d *differ) credentialedReach(bin, host string, existing bool) []grade {
	if !d.hCreds.Credentialed(host) || prover.IsLinkLocal(host) || prover.IsMetadataHost(host) {
		return nil
	}
	if d.opts.Registry.Lookup(bin).BypassesL7() {
		return []grade{{RiskCritical, prover.L7BypassCredentialed, bin + " speaks a protocol OpenShell cannot inspect to a host that holds credentials"}}
	}
	if existing {
		return []grade{{RiskHigh, prover.CredentialReachExpansion, bin + " gains reach to a host that holds credentials"}}
	}
	return nil
}

// policyMoved reports whether the policy's own endpoint moved (its binary
// moves are then the same move).
func (d *differ) policyMoved(k string) bool {
	for _, c := range d.changes {
		if c.Policy == k && c.Action == ActionMove && c.Kind == "endpoint" {
			return true
		}
	}
	return false
}
