package policydiff

import (
	"fmt"
	"net/netip"
	"path"
	"slices"
	"strings"

	"github.com/fullsend-ai/agent-sandbox/prover"
)

// Risks, lowest first (the Kubernetes PolicyReport severity names).
const (
	RiskInfo     = "info"
	RiskLow      = "low"
	RiskMedium   = "medium"
	RiskHigh     = "high"
	RiskCritical = "critical"
)

// Risks lists the risk names, highest first.
func Risks() []string { return []string{RiskCritical, RiskHigh, RiskMedium, RiskLow, RiskInfo} }

// RiskRank orders risks: info 0 ... critical 4; an unknown name is -1.
func RiskRank(r string) int {
	switch r {
	case RiskInfo:
		return 0
	case RiskLow:
		return 1
	case RiskMedium:
		return 2
	case RiskHigh:
		return 3
	case RiskCritical:
		return 4
	}
	return -1
}

// Categories beyond OpenShell's four, named after the mapper's and the
// policy advisor's security notes (crates/openshell-sandbox/src/
// mechanistic_mapper.rs:285-328, docs/sandboxes/policy-advisor.mdx:163-182
// @ v0.0.111) and the B.4 table.
const (
	CatWildcardHost   = "wildcard_host"
	CatPrivateIPs     = "private_allowed_ips"
	CatHostlessIPs    = "hostless_allowed_ips"
	CatAudit          = "enforcement_audit"
	CatTierFull       = "tier_full"
	CatTierNetwork    = "tier_network"
	CatWriteOutside   = "write_outside_workspace"
	CatPathWidened    = "path_widened"
	CatRawBinary      = "interpreter_or_raw_network_binary"
	CatForgeWrite     = "profile_forge_write"
	CatSpawn          = "spawnable_subagent"
	CatSpawnWidening  = "spawn_widening"
	CatEphemeralPort  = "ephemeral_port"
	CatDatabasePort   = "database_port"
	CatUninspectedCrd = "allow_uninspected_credentials"
)

// grade is one risk-table hit.
type grade struct {
	risk, category, why string
}

// apply raises c to each grade in turn.
func (c *Change) apply(gs ...grade) {
	for _, g := range gs {
		c.raise(g)
	}
}

// raise raises c to the grade and records its category.
func (c *Change) raise(g grade) {
	if RiskRank(g.risk) > RiskRank(c.Risk) {
		c.Risk = g.risk
		if g.why != "" {
			c.Why = g.why
		}
	}
	if c.Why == "" {
		c.Why = g.why
	}
	if g.category != "" && !slices.Contains(c.Categories, g.category) {
		c.Categories = append(c.Categories, g.category)
	}
}

// rawBinaries are B.4's "interpreter or raw network binary" names (the
// interpreters and raw tools whose traffic no method/path rule bounds).
var rawBinaryRE = []string{"python*", "node", "nodejs", "bash", "sh", "dash", "zsh", "curl", "wget", "nc", "ncat", "netcat", "socat", "ssh", "git-remote-https", "perl", "ruby", "deno", "bun"}

// rawBinary reports whether a binary path (or glob) names an interpreter
// or raw network tool; a glob binary counts as one (it may be any).
func rawBinary(p string) bool {
	base := path.Base(p)
	if strings.ContainsAny(base, "*?[") {
		return true
	}
	for _, g := range rawBinaryRE {
		if ok, _ := path.Match(g, base); ok {
			return true
		}
	}
	return false
}

// databasePorts are the mapper's well-known database/service ports
// (mechanistic_mapper.rs:318-325 @ v0.0.111); ports above 49152 are
// ephemeral (:310-316).
var databasePorts = []int{5432, 3306, 6379, 27017, 9200, 11211, 5672}

func portGrades(ports []int) []grade {
	var out []grade
	for _, p := range ports {
		if p > 49152 {
			out = append(out, grade{RiskMedium, CatEphemeralPort, fmt.Sprintf("port %d is in the ephemeral range: maybe a temporary service", p)})
		}
		if slices.Contains(databasePorts, p) {
			out = append(out, grade{RiskMedium, CatDatabasePort, fmt.Sprintf("port %d is a well-known database/service port", p)})
		}
	}
	return out
}

// hostGrades grades a host the agent can newly reach.
func hostGrades(host string) []grade {
	var out []grade
	if strings.Contains(host, "*") {
		out = append(out, grade{RiskCritical, CatWildcardHost, "a wildcard host reaches every matching name, an attacker's included"})
	}
	if prover.IsLinkLocal(host) || prover.IsMetadataHost(host) {
		out = append(out, grade{RiskCritical, prover.LinkLocalReach, "link-local or metadata host: cloud credentials live there"})
	}
	return out
}

// internalPrefixes are the private (RFC 1918), CGNAT and ULA ranges B.4
// names; link-local is graded as link_local_reach.
var internalPrefixes = []netip.Prefix{
	netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("172.16.0.0/12"),
	netip.MustParsePrefix("192.168.0.0/16"), netip.MustParsePrefix("100.64.0.0/10"),
	netip.MustParsePrefix("fc00::/7"), netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128"),
}

var linkLocalPrefixes = []netip.Prefix{netip.MustParsePrefix("169.254.0.0/16"), netip.MustParsePrefix("fe80::/10")}

func parseCIDR(s string) (netip.Prefix, bool) {
	if p, err := netip.ParsePrefix(s); err == nil {
		return p.Masked(), true
	}
	if a, err := netip.ParseAddr(s); err == nil {
		return netip.PrefixFrom(a, a.BitLen()), true
	}
	return netip.Prefix{}, false
}

// allowedIPGrades grades allowed_ips entries the head adds.
func allowedIPGrades(host string, added []string) []grade {
	var out []grade
	if host == "" && len(added) > 0 {
		out = append(out, grade{RiskCritical, CatHostlessIPs, "hostless allowed_ips match any name that resolves into the range"})
	}
	for _, s := range added {
		out = append(out, cidrGrades(s)...)
	}
	return out
}

// cidrGrades grades one allowed_ips entry: once for each link-local range
// it overlaps, once if it overlaps any internal range. A placeholder such
// as {{HOST_IP}} (a /32 or /128 of the job host) is not graded.
func cidrGrades(s string) []grade {
	p, ok := parseCIDR(s)
	if !ok {
		return nil
	}
	var out []grade
	for _, q := range linkLocalPrefixes {
		if p.Overlaps(q) {
			out = append(out, grade{RiskCritical, prover.LinkLocalReach, fmt.Sprintf("allowed_ips %s overlaps the link-local/metadata range", s)})
		}
	}
	if slices.ContainsFunc(internalPrefixes, p.Overlaps) {
		out = append(out, grade{RiskCritical, CatPrivateIPs, fmt.Sprintf("allowed_ips %s opens private, CGNAT or ULA addresses", s)})
	}
	return out
}

// safeWritable are the paths B.4 lets an agent write without a critical
// grade: the workspace, /tmp and /dev/null.
var safeWritable = []string{"/sandbox", "/tmp", "/dev/null"}

func writableGrade(p string) grade {
	for _, s := range safeWritable {
		if p == s || strings.HasPrefix(p, s+"/") {
			return grade{RiskMedium, "", "a new writable path"}
		}
	}
	return grade{RiskCritical, CatWriteOutside, fmt.Sprintf("%s is writable outside /sandbox, /tmp and /dev/null", p)}
}

// proverGrade grades a prover path: the two unconditional categories are
// critical, a new credentialed reach or method high (a read method medium).
func proverGrade(p prover.Path) grade {
	switch p.Category {
	case prover.LinkLocalReach, prover.L7BypassCredentialed:
		return grade{risk: RiskCritical}
	case prover.CapabilityExpansion:
		if !prover.IsWriteMethod(p.Method) {
			return grade{risk: RiskMedium}
		}
	}
	return grade{risk: RiskHigh}
}

var tierRank = map[string]int{"read-only": 0, "network": 1, "full": 2}

var accessRank = map[string]int{"": 0, "read-only": 1, "read-write": 2, "full": 3}

// questions are the review questions the Markdown closes with, by category.
var questions = map[string]string{
	prover.CapabilityExpansion:      "Does this agent need the new write methods (create, update, delete) for its task?",
	prover.CredentialReachExpansion: "Should this binary be able to authenticate to this host at all?",
	prover.L7BypassCredentialed:     "Is a binary whose traffic OpenShell cannot inspect meant to reach a host that holds credentials?",
	prover.LinkLocalReach:           "Why does the agent need the link-local or metadata range, where cloud credentials live?",
	CatWildcardHost:                 "Can the wildcard host be replaced by the exact hosts the agent uses?",
	CatPrivateIPs:                   "Which internal service needs these addresses, and can allowed_ips name just its /32?",
	CatHostlessIPs:                  "Can the allowed_ips be tied to a host name?",
	CatAudit:                        "Is audit mode (requests that would be denied are forwarded) intended outside a discovery run?",
	CatTierFull:                     "Does this agent need the full tier (writes to the workspace, interpreters, package registries)?",
	CatTierNetwork:                  "Does this agent need network access beyond its model API?",
	CatWriteOutside:                 "Why must the agent write outside the workspace?",
	CatPathWidened:                  "Can the rule keep the placeholder or an exact path instead of a glob?",
	CatRawBinary:                    "Can a specific tool replace the interpreter or raw network binary?",
	CatForgeWrite:                   "Does this agent need to write to the forge (comments, labels)?",
	CatSpawn:                        "Should this agent be able to start the new subagent?",
	CatSpawnWidening:                "Should the subagent reach what its parent may not, or can its grant be narrowed to the parent's?",
	CatEphemeralPort:                "Is the ephemeral-range port a stable service?",
	CatDatabasePort:                 "Should the agent reach a database port directly?",
	CatUninspectedCrd:               "Must credentialed traffic bypass L7 inspection here?",
}
