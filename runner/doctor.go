package runner

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/fullsend-ai/agent-sandbox/handover"
	"github.com/fullsend-ai/agent-sandbox/placeholder"
	"github.com/fullsend-ai/agent-sandbox/runner/redact"
)

// Doctor checks the machine or job container for everything Run needs and
// returns one Check per prerequisite, failed ones with what to fix: the
// openshell CLI and its version, ssh, the pinned sandbox image, the gateway
// (registered and healthy, or what starting one needs: openshell-gateway,
// the podman driver, the pinned supervisor image), the policies digest, and
// per agent (all when agents is empty) the placeholders the environment
// resolves (set wins) and the filesystem rules for the runner's uploads.
// It runs the same checks as preflight and creates nothing.
func (r *Runner) Doctor(ctx context.Context, agents []string, set placeholder.Values) []Check {
	c := &checker{}
	d := &driver{env: r.childEnv(), mask: &redact.Masker{}}
	pre := &prereqs{}
	r.checkTools(ctx, c, d, pre)
	if d.bin != "" {
		r.checkGateway(ctx, c, d, pre)
	}
	if r.opts.PoliciesDigest == "" {
		c.checks = append(c.checks, Check{Name: "policies digest", OK: true,
			Detail: "not pinned: the project is used as found (allowed outside CI only)",
			Fix:    "pass --policies-digest (" + handover.PoliciesDigest + " from fullsend verify)"})
	} else {
		c.ok("policies digest", "manifest "+r.project.ManifestSHA256+" matches the pinned digest")
	}
	if len(agents) == 0 {
		for n := range r.project.Manifest.Agents {
			agents = append(agents, n)
		}
		sort.Strings(agents)
	}
	for _, name := range agents {
		r.doctorAgent(ctx, c, name, set)
	}
	return c.checks
}

// doctorAgent checks one agent: its files verify, its placeholders resolve
// here, and its uploads land where its policy lets them.
func (r *Runner) doctorAgent(ctx context.Context, c *checker, name string, set placeholder.Values) {
	label := "agent " + name
	a, err := r.project.Agent(name)
	if err != nil {
		c.fail(label, err, "recompile and re-sign the project")
		return
	}
	res, err := r.opts.Env.Resolve(ctx, a.Open, set)
	if err != nil {
		c.fail(label+": placeholders", err, "set the missing values with --set KEY=VALUE or run where the CI provides them")
		return
	}
	keys := make([]string, 0, len(res.Values))
	for k := range res.Values {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("{{%s}} from %s", k, res.From[k]))
	}
	c.ok(label+": placeholders", cmp.Or(strings.Join(parts, ", "), "none open"))
	pol, _, err := a.Resolve(res.Values)
	if err != nil {
		c.fail(label+": policy", err, "")
		return
	}
	x := &run{agent: a}
	x.root = chooseStageRoot(pol)
	checkWritable(c, pol, x.uploadTargets())
	last := &c.checks[len(c.checks)-1]
	last.Name = label + ": " + last.Name
}
