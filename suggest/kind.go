package suggest

import "github.com/fullsend-ai/agent-sandbox/denial"

// What suggest does with a kind of denial (docs/policy-suggest.md, the
// "suggest does" column).
const (
	outcomeSuggest           = "suggest"
	outcomeManual            = "manual"
	outcomeIgnored           = "ignored"
	outcomeSuggestOrManual   = "suggest|manual"
	outcomeRefusedOrManual   = "refused|manual"
	outcomeSuggestIfAudit    = "suggest with --include-audit"
	outcomeSuggestOrProvisnl = "suggest (provisional)|manual with --strict-paths"
)

// kindPlan is what suggest does with one kind of the denial table, and why.
type kindPlan struct {
	// Outcome is suggest, manual, refused or ignored, or a choice of them.
	Outcome string
	// Why says, for a human, why that is the outcome; it is the reason a
	// kind suggest cannot turn into a grant is listed under manual.
	Why string
}

// kindPlans is suggest's column of the denial-kind table, keyed by kind.
// It is kept beside the planner rather than in package denial: the table
// says what OpenShell logged (the runner links it inside the image and
// counts with it), this says what suggest makes of it, which changes with
// suggest alone. TestKindPlans keeps the two in step, kind for kind.
var kindPlans = map[denial.Kind]kindPlan{
	denial.KindL7Deny: {outcomeSuggest,
		"one METHOD /path rule on the sandbox endpoint that owns the policy, placeholders put back"},
	denial.KindAudit: {outcomeSuggestIfAudit,
		"an enforcement: audit endpoint let the request through; with --include-audit it is treated as l7-deny"},
	denial.KindForward: {outcomeSuggest,
		"a new endpoint for the exact host and port with the observed METHOD /path rules"},
	denial.KindL4NoEndpoint: {outcomeSuggestOrProvisnl,
		"HTTPS at L4 shows no path: a provisional access: read-only endpoint for the exact host and port, risk medium"},
	denial.KindNoNetwork: {outcomeSuggestOrProvisnl,
		"as l4-no-endpoint; the suggestion reports the tier it raises the agent to"},
	denial.KindBinary: {outcomeSuggestOrManual,
		"the binary is added to the endpoint entry that declares the denied host and port (never the policy N the log names), unless a policy binary is its symlink (manual)"},
	denial.KindSSRF: {outcomeRefusedOrManual,
		"always-blocked, metadata and control-plane destinations are enforced whatever the policy (refused); allowed_ips is a human decision (manual, naming the IP)"},
	denial.KindL7DenyRule: {outcomeIgnored,
		"the author denied it on purpose; suggest never proposes removing a deny rule"},
	denial.KindL7Other: {outcomeManual,
		"the sandbox: block states REST rules only"},
	denial.KindNonCanonical: {outcomeManual,
		"the fix is allow_encoded_slash, which the sandbox: block does not expose"},
	denial.KindTunnelProtocol: {outcomeManual,
		"the endpoint's protocol is wrong for the traffic: configuration, not a grant"},
	denial.KindCredentials: {outcomeManual,
		"a credentialed endpoint needs L7 inspection; never allow_uninspected_credentials"},
	denial.KindTLS: {outcomeManual,
		"TLS termination is a runtime problem; never tls: skip"},
	denial.KindBypass: {outcomeManual,
		"the tool ignored HTTPS_PROXY and connected directly: make it honour the proxy"},
	denial.KindTransparentTCP: {outcomeManual,
		"transparent TCP is not a REST grant"},
	denial.KindReloadRace: {outcomeIgnored,
		"the policy was being replaced; the request would be decided again"},
	denial.KindUnknown: {outcomeManual,
		"suggest does not know this denial: read it"},
}

// planOf returns what suggest does with k: manual for a kind it has no
// plan for.
func planOf(k denial.Kind) kindPlan {
	if p, ok := kindPlans[k]; ok {
		return p
	}
	return kindPlan{Outcome: outcomeManual, Why: "suggest does not know this denial: read it"}
}
