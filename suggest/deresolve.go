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
		if seg == "" {
			continue
		}
		var cands []string
		for _, name := range pathOrder {
			val, ok := v[name]
			if !ok || val != seg || !placeholder.Allowed(name, placeholder.FieldPath) {
				continue
			}
			if len(val) < 2 && name != placeholder.IssueNumber {
				continue
			}
			cands = append(cands, name)
		}
		if len(cands) == 0 {
			continue
		}
		pick := cands[0]
		for _, c := range cands {
			if !used[c] {
				pick = c
				break
			}
		}
		used[pick] = true
		names = append(names, pick)
		segs[i] = "{{" + pick + "}}"
	}
	sort.Strings(names)
	return strings.Join(segs, "/"), names
}

// deresolveHost puts FORGE_HOST, HOST_IP, or a region in the first label
// ({{GCP_REGION}}-aiplatform.googleapis.com) back into a host.
func deresolveHost(host string, v placeholder.Values) string {
	if fh := v[placeholder.ForgeHost]; fh != "" && strings.EqualFold(host, fh) {
		return "{{" + placeholder.ForgeHost + "}}"
	}
	if ip := v[placeholder.HostIP]; ip != "" {
		if a, err := netip.ParseAddr(ip); err == nil {
			if b, err := netip.ParseAddr(host); err == nil && a == b {
				return "{{" + placeholder.HostIP + "}}"
			}
		}
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
