package report

import (
	"sort"

	"github.com/fullsend-ai/agent-sandbox/bundle"
)

// Severities of a finding. A rule's severity is its name prefix, as in
// conftest: deny_* and violation_* deny, warn_* warn.
const (
	SeverityDeny = "deny"
	SeverityWarn = "warn"
)

// Rule describes one rule a linter runs: its Rego reference, its id,
// severity and title from the rule's METADATA, and where it is written.
type Rule struct {
	Namespace   string `json:"namespace"`
	Name        string `json:"name"`
	ID          string `json:"id"`
	Severity    string `json:"severity"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	// File is the rule module, for builtin rules relative to lint/rules.
	File string `json:"file"`
	Line int    `json:"line"`
}

// Finding is one rule result on one policy.
type Finding struct {
	RuleID   string `json:"rule_id"`
	Severity string `json:"severity"`
	Title    string `json:"title,omitempty"`
	Message  string `json:"message"`
	// Rule is the Rego rule reference, namespace.rule.
	Rule string `json:"rule"`
	// Policy is the policy file; Agent the agent it belongs to.
	Policy string `json:"policy,omitempty"`
	Agent  string `json:"agent,omitempty"`
	// PolicyPath names the element, e.g. network_policies.x.endpoints[0].host.
	PolicyPath string `json:"policy_path,omitempty"`
	// Line is the line of PolicyPath in the policy file, when Input.Raw was given.
	Line int `json:"line,omitempty"`
	// Source is the agent or skill line that caused the element, when known.
	Source *bundle.Source `json:"source,omitempty"`
	// Waived holds the reason a waiver or conftest exception accepted it.
	Waived string `json:"waived,omitempty"`
}

// Report is the result of linting a set of policies.
type Report struct {
	Policies int       `json:"policies"`
	Findings []Finding `json:"findings"`
	Rules    []Rule    `json:"-"`
}

// Sort orders the findings by policy, agent, policy path, rule id and
// message, so every output is deterministic.
func (r *Report) Sort() {
	sort.SliceStable(r.Findings, func(i, j int) bool {
		a, b := &r.Findings[i], &r.Findings[j]
		if a.Policy != b.Policy {
			return a.Policy < b.Policy
		}
		if a.Agent != b.Agent {
			return a.Agent < b.Agent
		}
		if a.PolicyPath != b.PolicyPath {
			return a.PolicyPath < b.PolicyPath
		}
		if a.RuleID != b.RuleID {
			return a.RuleID < b.RuleID
		}
		return a.Message < b.Message
	})
}

// Count returns the number of unwaived findings of a severity.
func (r *Report) Count(severity string) int {
	n := 0
	for _, f := range r.Findings {
		if f.Waived == "" && f.Severity == severity {
			n++
		}
	}
	return n
}

// Failed reports whether any unwaived finding is at or above failOn
// (SeverityDeny or SeverityWarn).
func (r *Report) Failed(failOn string) bool {
	if failOn == SeverityWarn && r.Count(SeverityWarn) > 0 {
		return true
	}
	return r.Count(SeverityDeny) > 0
}
