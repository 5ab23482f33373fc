package suggest

import (
	"net/netip"
	"sort"
	"strings"

	"github.com/fullsend-ai/agent-sandbox/placeholder"
)

// pathOrder is the order in which an ambiguous path segment (OWNER and
// REPO_NAME both "acme") is given its placeholder: the first occurrence
// takes the first name.
var pathOrder = []string{placeholder.Owner, placeholder.RepoName, placeholder.IssueNumber, placeholder.GCPProject, placeholder.GCPRegion, placeholder.AWSRegion}

// deresolvePath puts the job's placeholders back into a path: a whole
// segment equal to a value becomes {{NAME}}, for the names allowed in paths
// (placeholder.Allowed FieldPath). Values shorter than 2 bytes are left
// alone, except ISSUE_NUMBER, whose value is a validated positive integer
// (issue 7 is "7"). It returns the path and the names it used.
func deresolvePath(path string, v placeholder.Values) (string, []string) {
	if len(v) == 0 {
		return path, nil
	}
	segs := strings.Split(path, "/")
	used := map[string]bool{}
	var names []string
	for i, seg := range segs {
		cands := pathCandidates(seg, v)
		if len(cands) == 0 {
			continue
		}
		pick := firstUnused(cands, used)
		used[pick] = true
		names = append(names, pick)
		segs[i] = "{{" + pick + "}}"
	}
	sort.Strings(names)
	return strings.Join(segs, "/"), names
}

// pathCandidates are the placeholders, in pathOrder, that a path segment
// may stand for: allowed in paths, with seg as their value, 2 bytes or
// more unless the placeholder is ISSUE_NUMBER.
func pathCandidates(seg string, v placeholder.Values) []string {
	if seg == "" {
		return nil
	}
	var cands []string
	for _, name := range pathOrder {
		if v[name] == seg && placeholder.Allowed(name, placeholder.FieldPath) && (len(seg) >= 2 || name == placeholder.IssueNumber) {
			cands = append(cands, name)
		}
	}
	return cands
}

// firstUnused is the first candidate not used yet, else the first.
func firstUnused(cands []string, used map[string]bool) string {
	for _, c := range cands {
		if !used[c] {
			return c
		}
	}
	return cands[0]
}

// deresolveHost puts FORGE_HOST, HOST_IP, or a region in the first label
// ({{GCP_REGION}}-aiplatform.googleapis.com) back into a host.
func deresolveHost(host string, v placeholder.Values) string {
	if fh := v[placeholder.ForgeHost]; fh != "" && strings.EqualFold(host, fh) {
		return "{{" + placeholder.ForgeHost + "}}"
	}
	if sameIP(v[placeholder.HostIP], host) {
		return "{{" + placeholder.HostIP + "}}"
	}
	for _, name := range []string{placeholder.GCPRegion, placeholder.AWSRegion} {
		val := v[name]
		if len(val) < 2 {
			continue
		}
		if rest, ok := strings.CutPrefix(host, val+"-"); ok && strings.Contains(rest, ".") {
			return "{{" + name + "}}-" + rest
		}
	}
	return host
}

// sameIP reports whether a and b are the same IP address.
func sameIP(a, b string) bool {
	x, errA := netip.ParseAddr(a)
	y, errB := netip.ParseAddr(b)
	return errA == nil && errB == nil && x == y
}
