package policydiff

import (
	"github.com/fullsend-ai/agent-sandbox/bundle"
	"github.com/fullsend-ai/agent-sandbox/prover"
)

// Schema identifies the JSON result format.
const Schema = "fullsend.policy-diff/v1"

// Actions of a change.
const (
	ActionAdd    = "add"
	ActionRemove = "remove"
	ActionWiden  = "widen"
	ActionNarrow = "narrow"
	ActionChange = "change"
	ActionMove   = "move"
)

// Result is the comparison of two sides.
type Result struct {
	Schema string  `json:"schema"`
	Base   SideRef `json:"base"`
	Head   SideRef `json:"head"`
	// OpenShellVersion is the target both sides were compiled for, or
	// "V1 -> V2" when they differ (--base-openshell/--head-openshell).
	OpenShellVersion string      `json:"openshell_version"`
	Summary          Summary     `json:"summary"`
	Agents           []AgentDiff `json:"agents"`
	// Flips lists the policy-test decisions that differ between the sides
	// (set by the caller, see Flips).
	Flips     []Flip `json:"flips,omitempty"`
	Reproduce string `json:"reproduce,omitempty"`
}

// SideRef names one side in the result.
type SideRef struct {
	Ref              string `json:"ref"`
	Commit           string `json:"commit,omitempty"`
	ManifestSHA256   string `json:"manifest_sha256,omitempty"`
	OpenShellVersion string `json:"openshell_version,omitempty"`
	// FullsendVersion is the fullsend release the side's VersionFile pins.
	FullsendVersion string `json:"fullsend_version,omitempty"`
}

// Summary counts the changes by action and by risk.
type Summary struct {
	Added    int            `json:"added"`
	Removed  int            `json:"removed"`
	Widened  int            `json:"widened"`
	Narrowed int            `json:"narrowed"`
	Changed  int            `json:"changed"`
	Moved    int            `json:"moved"`
	MaxRisk  string         `json:"max_risk"`
	ByRisk   map[string]int `json:"by_risk"`
	Flipped  int            `json:"flipped,omitempty"`
}

// AgentDiff is the changes of one agent. Status is added, removed,
// moved (its definition is in another file under the same name) or
// changed; agents without changes are left out.
type AgentDiff struct {
	Agent   string   `json:"agent"`
	Status  string   `json:"status"`
	Tier    Before   `json:"tier"`
	Changes []Change `json:"changes"`
}

// Before is a value on each side.
type Before struct {
	Before string `json:"before"`
	After  string `json:"after"`
}

// Change is one difference of one grant unit.
type Change struct {
	// ID is stable for the same inputs: the agent and a per-agent counter
	// in the deterministic change order.
	ID     string `json:"id"`
	Action string `json:"action"`
	// Kind is the grant unit: agent, tier, runtime, provider, model, spawn,
	// output, filesystem, landlock, process, endpoint, rule, deny_rule,
	// binary, reach (a prover path no other change explains),
	// fullsend_version (the release VersionFile pins) or openshell_version
	// (the target the sides compile for).
	Kind string `json:"kind"`
	// Field names the endpoint, filesystem or process setting that changed.
	Field  string `json:"field,omitempty"`
	Policy string `json:"policy,omitempty"`
	Host   string `json:"host,omitempty"`
	Port   int    `json:"port,omitempty"`
	Before string `json:"before,omitempty"`
	After  string `json:"after,omitempty"`
	Risk   string `json:"risk"`
	// Categories are the B.4 risk-table rows this change hits, in
	// OpenShell's prover vocabulary where one applies.
	Categories []string `json:"categories"`
	Why        string   `json:"why,omitempty"`
	// Prover lists the paths OpenShell's prover (package prover) reports as
	// new in the head for this change (finding_delta).
	Prover []prover.Path `json:"prover,omitempty"`
	// From is the source of the grant on the side it exists on (the head,
	// the base for a remove); Was the base's for a move or a change.
	From []bundle.Source `json:"from"`
	Was  []bundle.Source `json:"was,omitempty"`

	order string
}

// Flip is a policy-test decision that differs between the two sides.
type Flip struct {
	File    string `json:"file"`
	Agent   string `json:"agent"`
	Name    string `json:"name"`
	Request string `json:"request"`
	Expect  string `json:"expect"`
	Before  string `json:"before"`
	After   string `json:"after"`
	// Reason is the head's decision reason.
	Reason string `json:"reason,omitempty"`
}
