package suggest

import (
	"fmt"
	"net/netip"
	"path"
	"slices"
	"strings"

	"github.com/fullsend-ai/agent-sandbox/denial"
	"github.com/fullsend-ai/agent-sandbox/openshell"
	"github.com/fullsend-ai/agent-sandbox/openshell/decide"
	"github.com/fullsend-ai/agent-sandbox/placeholder"
)

// planner turns denials into suggestions and findings.
type planner struct {
	opts    Options
	res     *Result
	before  *decide.Decider
	sources map[string]*source
	sugs    []*Suggestion
	// tierTo is the tier the agent's declared sandbox.tier is raised to
	// when the patched project does not compile under the declared one.
	tierTo string
	// keepIDs keeps the suggestions' ids when they are numbered again
	// (Options.Only: the ids the user chose).
	keepIDs bool
	// warned is the number of warnings before the check of the patch.
	warned int
	// after is the patched agent as the last check compiled it, and
	// version the OpenShell release it was decided at.
	after   *Target
	version string
}

func (p *planner) refuse(d *Denial, why string) {
	p.res.Refused = append(p.res.Refused, Finding{Denial: d.ID, Why: why})
}

func (p *planner) manual(d *Denial, why, hint string) {
	p.res.Manual = append(p.res.Manual, Finding{Denial: d.ID, Why: why, Hint: hint})
}

func (p *planner) ignore(d *Denial, why string) {
	p.res.Ignored = append(p.res.Ignored, Finding{Denial: d.ID, Why: why})
}

// auditWarning warns when the agent has an audit endpoint but no input is
// JSONL: the shorthand hides audit verdicts (shorthand.rs:282@v0.0.111).
func (p *planner) auditWarning(inputs []denial.InputStats) {
	audit := false
	for _, np := range p.opts.Agent.Policy.NetworkPolicies {
		for _, ep := range np.Endpoints {
			if ep.Enforcement == "audit" {
				audit = true
			}
		}
	}
	if !audit {
		return
	}
	for _, in := range inputs {
		if in.Format == denial.FormatJSONL {
			return
		}
	}
	p.res.Warnings = append(p.res.Warnings, "the agent has an enforcement: audit endpoint, but no input is OCSF JSONL: audit \"would deny\" verdicts are only in the JSONL file (enable ocsf_json_enabled)")
}

// shorthandWarning warns when a denial rests on shorthand lines alone (no
// OCSF JSONL record in its run, denial.TrustShorthand). OpenShell prints a
// process's executable path raw into the shorthand (procfs.rs:127-156,
// format/shorthand.rs:199 @ v0.0.111), so the agent can write whole lines
// through a path with line breaks; Assess catches a forgery that leaves a
// cut line or an odd binary, not one made only of well-formed lines
// (docs/threat-model.md).
func (p *planner) shorthandWarning(events []denial.Event) {
	if !slices.ContainsFunc(events, func(ev denial.Event) bool { return ev.Trust == denial.TrustShorthand && ev.Action == "Denied" }) {
		return
	}
	p.res.Warnings = append(p.res.Warnings, "some denials rest on shorthand lines alone (no OCSF JSONL record in their run): the agent can write whole shorthand lines through a binary path with line breaks, and a forgery made only of well-formed lines cannot be told from a real denial; keep the JSONL log (ocsf_json_enabled) and read each suggestion below as the agent's claim (docs/threat-model.md)")
}

// valuesWarning warns when the agent's policy holds forge placeholders but
// no value was given: the suggestions then pin concrete owners, repositories
// and issues, and requests the job's values allow look denied.
func (p *planner) valuesWarning() {
	if len(p.opts.Values) > 0 {
		return
	}
	open, err := openshell.OpenPlaceholders(p.opts.Agent.Policy.Clone())
	if err != nil {
		return
	}
	for _, n := range open {
		if n == placeholder.Owner || n == placeholder.RepoName || n == placeholder.IssueNumber {
			p.res.Warnings = append(p.res.Warnings, "no placeholder values (--result FILE, --set KEY=VALUE, or a log directory's result.json): paths stay concrete, and requests the job's values allow are judged with example values")
			return
		}
	}
}

// writeMethods are the methods that change state (capability_expansion).
var writeMethods = map[string]bool{"POST": true, "PUT": true, "PATCH": true, "DELETE": true}

// plan decides one denial group's outcome: refused when the log line asks
// for something no sandbox: block may grant, ignored or manual by its
// kind, ignored when the policy already allows it or it is too rare, else
// planned by kind.
func (p *planner) plan(d *Denial) {
	if why := refusal(d); why != "" {
		p.refuse(d, why)
		return
	}
	if !p.plannable(d) {
		return
	}
	req := p.request(d)
	if req == nil {
		p.manual(d, "the denial does not name a complete request", "")
		return
	}
	if dec := p.before.Decide(req); dec.Allowed && !dec.Audit {
		p.ignore(d, "already allowed by the current policy")
		return
	}
	if d.Count < p.opts.MinCount {
		p.ignore(d, fmt.Sprintf("seen %d times, below --min-count %d", d.Count, p.opts.MinCount))
		return
	}
	p.planKind(d, req)
}

// refusal is why a denial is refused, or "": a host, path, binary or
// method that is not plain (the log line is the sandbox's bytes), or a
// destination OpenShell blocks whatever the policy.
func refusal(d *Denial) string {
	switch {
	case d.Host != "" && !validHost(d.Host):
		return "the host is not a DNS name or IP address (the log line is the sandbox's bytes)"
	case d.Path != "" && !validPath(d.Path):
		return "the path holds characters that would act as glob or placeholder syntax, or is not a plain URL path"
	case d.Binary != "" && !validBinary(d.Binary):
		return "the binary is not a plain absolute executable path"
	case d.Method != "" && d.Kind != denial.KindL7Other && !validMethod(d.Method):
		return "the method is not a REST method the sandbox: block can grant"
	case d.Host != "":
		return blocked(d.Host, d.Port)
	}
	return ""
}

// plannable reports whether the denial's kind is one suggest plans a
// change for; the other kinds it ignores, maps (SSRF) or lists as manual.
func (p *planner) plannable(d *Denial) bool {
	switch d.Kind {
	case denial.KindReloadRace:
		p.ignore(d, "policy reload race: the request was decided while the policy changed")
	case denial.KindL7DenyRule:
		p.ignore(d, "denied by a deny rule the author wrote on purpose; suggest never removes one")
	case denial.KindSSRF:
		p.planSSRF(d)
	case denial.KindL7Deny, denial.KindAudit, denial.KindForward, denial.KindL4NoEndpoint, denial.KindNoNetwork, denial.KindBinary:
		return true
	default:
		p.manual(d, planOf(d.Kind).Why, "OpenShell's reason: "+d.Reason)
	}
	return false
}

// planKind plans the change for a plannable denial of request req.
func (p *planner) planKind(d *Denial, req *decide.Request) {
	switch d.Kind {
	case denial.KindL7Deny, denial.KindAudit:
		p.planRule(d, req)
	case denial.KindForward:
		p.planEndpoint(d, req, false)
	case denial.KindL4NoEndpoint, denial.KindNoNetwork:
		if p.opts.StrictPaths {
			p.manual(d, fmt.Sprintf("%s:%d was denied at L4 (no path visible); --strict-paths suggests no provisional endpoint", d.Host, d.Port),
				"declare the endpoint with the exact METHOD /path rules the agent needs")
			return
		}
		p.planEndpoint(d, req, true)
	case denial.KindBinary:
		p.planBinary(d, req)
	}
}

// planSSRF maps the destination check's reasons
// (crates/openshell-supervisor-network/src/proxy.rs:3869-3955@v0.0.111).
func (p *planner) planSSRF(d *Denial) {
	r := d.Reason
	switch {
	case strings.Contains(r, "always-blocked"):
		p.refuse(d, "resolves to an always-blocked address (loopback, link-local or cloud metadata): OpenShell refuses it whatever the policy")
	case strings.Contains(r, "control-plane port"):
		p.refuse(d, fmt.Sprintf("port %d is a control-plane port, refused whatever the policy", d.Port))
	case strings.Contains(r, "which is not in allowed_ips"):
		ip := ipAfter(r, " resolves to ")
		p.manual(d, fmt.Sprintf("%s resolves to %s, outside the endpoint's allowed_ips; fullsend never adds allowed_ips from logs", d.Host, ip),
			fmt.Sprintf("if %s is the service's stable address, a human may add allowed_ips: [\"%s/32\"] (or {{HOST_IP}}) to the endpoint", ip, ip))
	case strings.Contains(r, "internal address"):
		ip := ipAfter(r, " internal address ")
		p.manual(d, fmt.Sprintf("%s resolves to the internal address %s; fullsend never adds allowed_ips from logs", d.Host, ip),
			"declare the exact host (OpenShell lets an exact declared host reach private addresses), or have a human add allowed_ips")
	case strings.Contains(r, "DNS resolution failed"):
		p.manual(d, "DNS resolution failed inside the sandbox: a runtime problem, not a grant", "")
	default:
		p.manual(d, "the destination check refused the connection: "+r, "")
	}
}

// ipAfter is the IP address that follows marker in reason, up to a space
// or a comma; "" when there is none.
func ipAfter(reason, marker string) string {
	_, rest, ok := strings.Cut(reason, marker)
	if !ok {
		return ""
	}
	f := strings.FieldsFunc(rest, func(c rune) bool { return c == ' ' || c == ',' })
	if len(f) == 0 {
		return ""
	}
	if a, err := netip.ParseAddr(f[0]); err == nil {
		return a.String()
	}
	return ""
}

// request is the concrete request a denial stands for.
func (p *planner) request(d *Denial) *decide.Request {
	if d.Host == "" || d.Port == 0 {
		return nil
	}
	bin := p.requestBinary(d)
	if bin == "" {
		return nil
	}
	r, err := decide.ParseRequest(requestText(d, bin))
	if err != nil {
		return nil
	}
	return r
}

// requestBinary is the binary a denial's request is made from: its own,
// else a binary of its policy, kept as its viaBinary.
func (p *planner) requestBinary(d *Denial) string {
	if d.Binary != "" {
		return d.Binary
	}
	d.viaBinary = p.policyBinary(d)
	return d.viaBinary
}

// requestText is the text (decide.ParseRequest) of a denial's request made
// from bin: a forward request, an HTTP request or a CONNECT, via the
// ancestors that are plain executable paths.
func requestText(d *Denial, bin string) string {
	hp := hostPort(d.Host, d.Port)
	var s string
	switch {
	case d.Method != "" && (d.Forward || d.Kind == denial.KindForward):
		s = fmt.Sprintf("forward %s http://%s%s from %s", d.Method, hp, d.Path, bin)
	case d.Method != "":
		s = fmt.Sprintf("%s %s://%s%s from %s", d.Method, schemeFor(d.Port), hp, d.Path, bin)
	default:
		s = fmt.Sprintf("CONNECT %s from %s", hp, bin)
	}
	for _, a := range d.Ancestors {
		if validBinary(a) {
			s += " via " + a
		}
	}
	return s
}

// source loads (once) a project file.
func (p *planner) source(path string) (*source, error) {
	if s, ok := p.sources[path]; ok {
		return s, nil
	}
	s, err := loadSource(p.opts.Project, path)
	if err != nil {
		return nil, err
	}
	p.sources[path] = s
	return s, nil
}

// targetFile is where new endpoints go (--to).
func (p *planner) targetFile() string {
	if name, ok := strings.CutPrefix(p.opts.To, "skill:"); ok {
		return "skills/" + name + "/SKILL.md"
	}
	return p.opts.Agent.File
}

// findSug returns the suggestion of change at (file, yaml path), creating it.
func (p *planner) findSug(file, yamlPath, change, value string) (*Suggestion, bool) {
	for _, s := range p.sugs {
		if s.File == file && s.YAMLPath == yamlPath && s.Change == change && s.Value == value {
			return s, false
		}
	}
	s := &Suggestion{File: file, YAMLPath: yamlPath, Change: change, Value: value, Categories: []string{}, Notes: []string{}, methods: map[string]bool{}}
	p.sugs = append(p.sugs, s)
	return s, true
}

func (s *Suggestion) cover(d *Denial, r *decide.Request) {
	s.denials = append(s.denials, d)
	s.requests = append(s.requests, r)
}

// rule is a denial's rule text, placeholders put back.
func (p *planner) rule(d *Denial) string {
	path, _ := deresolvePath(d.Path, p.opts.Values)
	return d.Method + " " + path
}

// planRule adds METHOD /path to the endpoint entry that owns the policy, or
// a new endpoint for the same host and port when a profile or a tool made
// the policy (kinds l7-deny and l7-audit).
func (p *planner) planRule(d *Denial, req *decide.Request) {
	_, np := p.policyFor(d)
	src, entry := p.ownerEntry(np, d.Host, d.Port)
	if entry == nil {
		p.planEndpoint(d, req, false)
		return
	}
	if get(entry.node, "access") != nil {
		p.manual(d, fmt.Sprintf("%s:%d declares an access preset at %s:%d; a rule cannot be added beside it", d.Host, d.Port, src.path, src.fileLine(entry.node)),
			"replace the preset with rules, then add "+p.rule(d))
		return
	}
	yp := fmt.Sprintf("sandbox.endpoints[%d].rules", entry.index)
	s, _ := p.findSug(src.path, yp, "add-rule", p.rule(d))
	s.methods[d.Method] = true
	s.cover(d, req)
	if d.Kind == denial.KindAudit {
		s.addNote("audit: the endpoint let this request through under enforcement: audit")
	}
}

func (s *Suggestion) addNote(n string) {
	if !slices.Contains(s.Notes, n) {
		s.Notes = append(s.Notes, n)
	}
}

// planEndpoint adds a new endpoint for the exact host and port: with the
// observed rule, or, for an L4 denial, provisional access: read-only (the
// decision on issue 23's question Q1), and always binaries: listing exactly
// the denied requests' binaries, so no other binary of the agent gains it.
func (p *planner) planEndpoint(d *Denial, req *decide.Request, provisional bool) {
	file := p.targetFile()
	host := deresolveHost(d.Host, p.opts.Values)
	value := hostPort(host, d.Port)
	s, _ := p.findSug(file, "sandbox.endpoints", "add-endpoint", value)
	s.cover(d, req)
	if !slices.Contains(s.binaries, req.Binary) {
		s.binaries = append(s.binaries, req.Binary)
		slices.Sort(s.binaries)
	}
	if provisional {
		// Paths seen for the host (a forward request) beat the
		// provisional read-only preset of an L4 denial of it.
		if len(s.Rules) == 0 {
			s.Provisional = true
			s.addNote(provisionalNote)
		}
		return
	}
	r := p.rule(d)
	if !slices.Contains(s.Rules, r) {
		s.Rules = append(s.Rules, r)
	}
	s.methods[d.Method] = true
	s.Provisional = false
	s.Notes = slices.DeleteFunc(s.Notes, func(n string) bool { return n == provisionalNote })
}

const provisionalNote = "provisional: denied at L4 (HTTPS), so the paths are unknown; replace access: read-only with the exact rules after the next run, or rerun with --strict-paths to list it as manual"

// planBinary adds the denied binary to the sandbox endpoint entry that
// declares the denied host and port, unless a binary of the policy serving
// it is its symlink (OpenShell matches the kernel-resolved /proc/<pid>/exe,
// sandbox-policy.rego:58@v0.0.111). The entry is found from the denied
// request and the compiled policy, never from the policy the log's reason
// names (the reason is the sandbox's text): an entry without binaries: gets
// the binaries that already reach it, then the denied one.
func (p *planner) planBinary(d *Denial, req *decide.Request) {
	key, np := p.policyServing(d.Host, d.Port)
	bin := d.Binary
	if link, ok := linkedBinary(np.Binaries, bin); ok {
		p.manual(d, fmt.Sprintf("%s is denied but policy %s allows %s: OpenShell matches the kernel-resolved executable, not a symlink", bin, key, link),
			fmt.Sprintf("if %s is a link to %s, declare %s (readlink -f inside the sandbox)", link, bin, bin))
		return
	}
	src, entry := p.ownerEntry(np, d.Host, d.Port)
	if entry == nil {
		p.manual(d, fmt.Sprintf("%s is not allowed to reach %s, whose policy comes from tools or a profile, not a sandbox: endpoint", bin, hostPort(d.Host, d.Port)),
			"add the tool that implies the binary, or declare the endpoint with binaries:")
		return
	}
	yp := fmt.Sprintf("sandbox.endpoints[%d].binaries", entry.index)
	s, fresh := p.findSug(src.path, yp, "add-binary", bin)
	if fresh {
		s.Rules = p.reaching(np, d.Host, d.Port) // kept, if the entry lists none
	}
	s.cover(d, req)
}

// reaching are the binaries of np that the compiled policy already lets
// open host:port: those an entry without binaries: is compiled with.
func (p *planner) reaching(np openshell.NetworkPolicy, host string, port int) []string {
	var out []string
	for _, b := range np.Binaries {
		r, err := decide.ParseRequest(fmt.Sprintf("CONNECT %s from %s", hostPort(host, port), b.Path))
		if err == nil && p.before.Decide(r).Allowed && !slices.Contains(out, b.Path) {
			out = append(out, b.Path)
		}
	}
	return out
}

// linkedBinary is the first policy binary that bin may be a link of: one
// with bin's base name, or with a base name of 3 bytes or more that bin's
// starts with (python3 and python3.12).
func linkedBinary(bins []openshell.Binary, bin string) (string, bool) {
	db := path.Base(bin)
	for _, b := range bins {
		if bb := path.Base(b.Path); bb == db || strings.HasPrefix(db, bb) && len(bb) >= 3 {
			return b.Path, true
		}
	}
	return "", false
}
