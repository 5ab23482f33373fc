package compile

import (
	"cmp"
	"path"
	"slices"
	"strings"

	"github.com/fullsend-ai/agent-sandbox/bundle"
	"github.com/fullsend-ai/agent-sandbox/openshell"
)

// Each binary gets the rules declared for it, never another binary's on
// the same host (design revision 2026-12-01). OpenShell matches a request
// against each network policy on its own: a policy allows an L7 request
// only when the request's binary is among that policy's binaries and one
// of that policy's endpoints allows the request (allow_request,
// crates/openshell-supervisor-network/data/sandbox-policy.rego:236-243
// @v0.0.83 and :270-277 @v0.0.111). Binaries that would get different
// rules on one endpoint therefore go into separate network policies, one
// per set of binaries sharing the same rules.
//
// The split policies keep one endpoint setting: host, port, path,
// protocol, enforcement, allowed_ips and allow_encoded_slash are the same
// in each, because several policies may contribute request rules to one
// host:port only when those settings agree (find_endpoint_ambiguities,
// crates/openshell-policy/src/ambiguity.rs:51-117 @v0.0.111: allowed_ips
// among the connection settings, protocol, enforcement and
// allow_encoded_slash among the request settings; v0.0.83 has no such
// check and leaves unspecified which endpoint's settings win, so the same
// rule keeps the split safe there). Binaries whose declarations disagree
// on those settings cannot be told apart: compile reports it at the
// endpoint's line instead of widening one binary to the other's.

// binarySet is one network policy of a split endpoint: binaries that get
// the same rules, and the contributions that give them.
type binarySet struct {
	bins []string
	cs   []contribution
}

// splitByBinary groups the binaries of an endpoint's contributions by the
// rules they get. One set means nothing to split (the common case: every
// contribution names the same binaries, checked first without merging).
func splitByBinary(cs []contribution) []binarySet {
	if sameBinaries(cs) {
		return []binarySet{{cs: cs}}
	}
	var bins []string
	for _, c := range cs {
		bins = append(bins, c.binaries...)
	}
	slices.Sort(bins)
	bins = slices.Compact(bins)
	bySig := map[string]int{}
	var sets []binarySet
	for _, bin := range bins {
		own := contributionsOf(cs, bin)
		sig := rulesSignature(own)
		i, ok := bySig[sig]
		if !ok {
			i = len(sets)
			bySig[sig] = i
			sets = append(sets, binarySet{cs: own})
		}
		sets[i].bins = append(sets[i].bins, bin)
		sets[i].cs = unionContributions(sets[i].cs, own)
	}
	if len(sets) == 1 {
		return []binarySet{{cs: cs}}
	}
	return sets
}

// sameBinaries reports whether every contribution names the same binaries.
func sameBinaries(cs []contribution) bool {
	for _, c := range cs[1:] {
		if !slices.Equal(c.binaries, cs[0].binaries) {
			return false
		}
	}
	return true
}

// contributionsOf are the contributions that name bin.
func contributionsOf(cs []contribution, bin string) []contribution {
	var out []contribution
	for _, c := range cs {
		if slices.Contains(c.binaries, bin) {
			out = append(out, c)
		}
	}
	return out
}

// unionContributions adds to a the contributions of b it lacks (by
// source), keeping a's order.
func unionContributions(a, b []contribution) []contribution {
	for _, c := range b {
		if !slices.ContainsFunc(a, func(x contribution) bool { return x.from == c.from && slices.Equal(x.binaries, c.binaries) }) {
			a = append(a, c)
		}
	}
	return a
}

// rulesSignature is what a set of contributions grants on the endpoint:
// its merged rules, or its access preset when none has rules.
func rulesSignature(cs []contribution) string {
	m := endpointMerge{}
	for _, c := range cs {
		if len(c.rules) > 0 {
			m.hasRules = true
		}
		if c.access != "" && (m.preset == "" || c.access == openshell.AccessReadWrite) {
			m.preset = c.access
		}
	}
	if !m.hasRules && m.preset != "" {
		return "access " + m.preset
	}
	var sb strings.Builder
	for _, r := range mergeRules(cs) {
		k := ruleKeyOf(r.Allow)
		sb.WriteString(k.method + " " + k.path + " " + k.query + " " + k.graphql + " " + k.mcp + "\n")
	}
	return sb.String()
}

// settingConflict reports the endpoint setting the binary sets disagree
// on, which OpenShell needs the same in every policy of one host:port.
func settingConflict(sets []binarySet) string {
	ips := func(s binarySet) string {
		var all []string
		for _, c := range s.cs {
			all = append(all, c.allowedIPs...)
		}
		slices.Sort(all)
		return strings.Join(slices.Compact(all), ",")
	}
	slash := func(s binarySet) bool {
		return slices.ContainsFunc(s.cs, func(c contribution) bool { return c.allowEncodedSlash })
	}
	for _, s := range sets[1:] {
		switch {
		case ips(s) != ips(sets[0]):
			return "allowed_ips"
		case slash(s) != slash(sets[0]):
			return "allow_encoded_slash"
		}
	}
	return ""
}

// setKey is the network policy key of one binary set of endpoint k: the
// endpoint's key and the name of the set's first binary
// (api_github_com_443_curl), taken further by freeKey when two sets share
// that name.
func setKey(k endpointKey, s binarySet) endpointKey {
	name := cmp.Or(keyPart(path.Base(s.bins[0])), "bin")
	return endpointKey{host: k.host, port: k.port, path: k.path, suffix: name}
}

// settingSource is the binary set and the contribution that set a
// connection setting (allowed_ips, allow_encoded_slash): the declaration to
// blame when the sets disagree on it.
func settingSource(sets []binarySet) (binarySet, bundle.Source) {
	for _, s := range sets {
		for _, c := range s.cs {
			if len(c.allowedIPs) > 0 || c.allowEncodedSlash {
				return s, c.from
			}
		}
	}
	return sets[0], sets[0].cs[0].from
}
