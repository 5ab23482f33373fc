package compile

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/fullsend-ai/agent-sandbox/agentdef"
	"github.com/fullsend-ai/agent-sandbox/internal/didyoumean"
	"github.com/fullsend-ai/agent-sandbox/policycue"
)

// RuntimeTool is one of the agent's tool rules as its runtime gets it:
// pre-approved (Approved, the rule in the form the runtime is given) or
// left out, and why. The runtime pre-approves only what the agent
// declared: a tool it does not name is never added.
type RuntimeTool struct {
	Rule     string       `json:"rule"`
	Pos      agentdef.Pos `json:"pos"`
	Approved string       `json:"approved,omitempty"`
	// Output is the declared output a pre-approved write is scoped to.
	Output string `json:"output,omitempty"`
	Why    string `json:"why"`
}

// runtimeTools decides, for each of the agent's own tool rules, whether
// the runtime pre-approves it at tier: a write scoped to a declared output
// as its absolute //path form, any other rule as written when the tier
// holds it. A Bash rule with a command the binary registry does not know
// is left out (its tier is unknown: fail closed), and so is an unknown tool.
func (b *builder) runtimeTools(tier policycue.Tier) []RuntimeTool {
	scoped := map[agentdef.Pos]outputWrite{}
	for _, w := range b.outputWrites {
		scoped[w.rule.Pos] = w
	}
	out := make([]RuntimeTool, 0, len(b.agent.Tools))
	for _, r := range b.agent.Tools {
		rt := RuntimeTool{Rule: r.Raw, Pos: r.Pos}
		if w, ok := scoped[r.Pos]; ok && w.rule.Raw == r.Raw {
			rt.Approved, rt.Output, rt.Why = w.approve, w.output, "a write scoped to the declared output "+w.output
		} else if need, why := b.ruleTier(r); why != "" {
			rt.Why = why
		} else if tier == policycue.TierFull || need.Rank() <= tier.Rank() {
			rt.Approved, rt.Why = r.Raw, fmt.Sprintf("declared, and tier %s holds it", tier)
		} else {
			rt.Why = fmt.Sprintf("needs tier %s, above the agent's tier %s", need, tier)
		}
		out = append(out, rt)
	}
	return out
}

// ruleTier is the tier one tool rule needs on its own, or why the runtime
// cannot be asked to pre-approve it.
func (b *builder) ruleTier(r agentdef.ToolRule) (policycue.Tier, string) {
	if r.Tool == "Bash" {
		return b.bashTier(r)
	}
	spec, ok := b.cat.Tools[catalogToolName(r.Tool)]
	if !ok {
		return "", fmt.Sprintf("unknown tool %q: not pre-approved", r.Tool)
	}
	if writeTools[r.Tool] {
		return policycue.TierFull, ""
	}
	return spec.Tier, ""
}

// bashTier is the tier a Bash rule needs: the highest of its commands'
// (full for any command), or why it is not pre-approved: a command the
// binary registry does not know.
func (b *builder) bashTier(r agentdef.ToolRule) (policycue.Tier, string) {
	if r.AnyCommand() {
		return policycue.TierFull, ""
	}
	t := policycue.TierReadOnly
	for _, cmd := range r.Commands {
		bin, ok := b.cat.Binaries[cmd.Command]
		if !ok {
			why := fmt.Sprintf("command %q is not in the binary registry", cmd.Command)
			if sg := didyoumean.Closest(cmd.Command, slices.Sorted(maps.Keys(b.cat.Binaries))); sg != "" {
				why += fmt.Sprintf(" (did you mean %q?)", sg)
			}
			return "", why + ": not pre-approved"
		}
		if bin.Tier.Rank() > t.Rank() {
			t = bin.Tier
		}
	}
	return t, ""
}

// runtimeFlags derives each backend's flags (and environment) from the
// agent's tier, from the catalog: defense in depth on top of the policy.
// An agent that writes its declared outputs below the full tier gets its
// runtime's output flags for the tier instead (the compile refused the
// writes for a runtime without them).
func runtimeFlags(c *Compiled) (map[string][]string, map[string]map[string]string) {
	cat := c.catalog
	flags := map[string][]string{}
	env := map[string]map[string]string{}
	for name, rt := range cat.Runtimes {
		f := append([]string{}, rt.Flags[c.Tier]...)
		if of, ok := rt.OutputFlags[c.Tier]; ok && c.writesOutputs() {
			f = append([]string{}, of...)
		}
		if name == "claude" {
			f = claudeAllowedTools(f, c)
		}
		flags[name] = f
		if e := rt.Env[c.Tier]; len(e) > 0 {
			env[name] = e
		}
	}
	for name, be := range cat.Backends {
		flags[name] = declaredOnly(append([]string{}, be.Flags[c.Tier]...), name, c)
	}
	if len(env) == 0 {
		env = nil
	}
	return flags, env
}

// declaredOnly keeps, in a backend's --allowed-tools list (Gemini CLI:
// the tools it runs without asking), only the backend's names of tools the
// agent declared and the runtime pre-approves; the flag goes when none is
// left. The catalog lists what a tier may pre-approve, never more than the
// agent declared.
func declaredOnly(flags []string, backend string, c *Compiled) []string {
	for i := 0; i+1 < len(flags); i++ {
		if flags[i] != "--allowed-tools" {
			continue
		}
		var keep []string
		for _, tool := range strings.Split(flags[i+1], ",") {
			if c.approvesAlias(backend, tool) {
				keep = append(keep, tool)
			}
		}
		if len(keep) == 0 {
			return append(flags[:i], flags[i+2:]...)
		}
		flags[i+1] = strings.Join(keep, ",")
		return flags
	}
	return flags
}

// approvesAlias reports whether the runtime pre-approves a declared tool
// whose name in backend is alias.
func (c *Compiled) approvesAlias(backend, alias string) bool {
	for _, t := range c.RuntimeTools {
		if t.Approved == "" {
			continue
		}
		name, _, _ := strings.Cut(t.Rule, "(")
		if slices.Contains(c.catalog.Tools[catalogToolName(strings.TrimSpace(name))].Aliases[backend], alias) {
			return true
		}
	}
	return false
}

// writesOutputs reports whether the runtime pre-approves a write scoped
// to a declared output.
func (c *Compiled) writesOutputs() bool {
	for _, t := range c.RuntimeTools {
		if t.Approved != "" && t.Output != "" {
			return true
		}
	}
	return false
}

// claudeAllowedTools extends Claude Code's --allowedTools with the agent's
// pre-approved tool rules, so the runtime runs without asking exactly what
// the agent declared and its tier (or an output) holds.
func claudeAllowedTools(flags []string, c *Compiled) []string {
	var own []string
	for _, t := range c.RuntimeTools {
		if t.Approved != "" {
			own = append(own, t.Approved)
		}
	}
	if len(own) == 0 {
		return flags
	}
	for i := 0; i+1 < len(flags); i++ {
		if flags[i] == "--allowedTools" {
			flags[i+1] = mergeList(flags[i+1], own)
			return flags
		}
	}
	return append(flags, "--allowedTools", strings.Join(own, ","))
}

func mergeList(csv string, add []string) string {
	seen := map[string]bool{}
	var out []string
	for _, s := range append(strings.Split(csv, ","), add...) {
		if s != "" && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}
