package main

import (
	"cmp"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fullsend-ai/agent-sandbox/bundle"
	"github.com/fullsend-ai/agent-sandbox/openshell"
	"github.com/fullsend-ai/agent-sandbox/openshell/decide"
	"github.com/fullsend-ai/agent-sandbox/openshell/profile"
	"github.com/fullsend-ai/agent-sandbox/placeholder"
)

// policyTestFlags are the flags of policy test.
type policyTestFlags struct {
	policiesDir, policyFile, requestsFile, openshellVersion string
	binaryIdentity                                          string
	requests, set                                           []string
	output                                                  outputFormat
	providers                                               providerFlags
}

func newPolicyTestCmd() *cobra.Command {
	var f policyTestFlags
	cmd := &cobra.Command{
		Use:   "test [DIR]",
		Short: "Check which requests compiled policies allow (OpenShell semantics)",
		Long: `Test answers "would this request be allowed?" as OpenShell's proxy and its
sandbox-policy.rego would (--openshell-version picks the release): binary
matched against the process and its ancestors, host globs per label, ports,
the connection's endpoint configs (the first one's tls and allowed_ips, every
L7 one routed by endpoint path), access presets, globset globs for paths and query
values, canonical request paths, deny_rules first, GraphQL/JSON-RPC/MCP/SQL
rules, the SSRF guard and enforcement: audit (allowed, reported).

Without --request it runs every *.policytest.yaml under DIR (default .)
against the compiled policies in --policies (default DIR/policies) and fails
when an expectation does not hold. With --policy and --request it prints the
decision for each request. With --policy and --requests FILE ("-" is stdin)
it reads one request a line (blank lines and # comments skipped) and writes
one JSON object a line (JSON Lines): {"line", "request", "verdict",
"decision"} or {"line", "error"}; it exits 1 when a line does not parse.
Request syntax:

  METHOD URL from BINARY [via ANCESTOR]... [at RESOLVED_IP]
      [sql CMD] [graphql TYPE[:NAME[:FIELD,...]]]... [rpc METHOD] [tool NAME]
      [frame response|stream] [credentialed POLICY]...
  CONNECT HOST:PORT from BINARY [via ANCESTOR]... [at RESOLVED_IP]
      [credentialed POLICY]...
  forward METHOD URL from BINARY ...   (no sql clause)

A request without "forward" travels inside a CONNECT tunnel (https/wss over
TLS, http/ws in plain text). "forward" makes it a forward-proxy request: the
absolute-form "GET http://host/path" a client sends to the proxy itself for
an http:// URL when HTTP_PROXY is set. OpenShell decides those differently:
https is refused (use CONNECT), other schemes are refused from v0.0.111,
tls: skip does not stop inspection, and a path no endpoint path matches is
refused even under audit. Its URL defaults to port 443 for https, 80 else.
DNS is never looked up: "at IP" gives the address the host resolves to.
"credentialed POLICY" says the gateway marked that policy's endpoints as
holding provider credentials: from v0.0.110 a tunnel to one is refused when
it would go uninspected, unless allow_uninspected_credentials opts in.
BINARY is the kernel-resolved executable (/proc/<pid>/exe), not a symlink:
OpenShell matches a policy's symlinked binary only when it resolves it in
the container, which policy test cannot see.
WEBSOCKET_TEXT is the method of a WebSocket client text message.

--provider-profile [PROVIDER=]FILE|BUILTIN_ID (repeatable) and a test file's
"providers: [...]" (files inside DIR) add provider profile layers as the
OpenShell gateway composes them when providers_v2_enabled is on: each under
_provider_<provider name> (default: the profile id), suffixed _2, _3 on a
collision, the policy's own keys untouched. Decisions then say which layer
decided. A profile OpenShell would refuse, or a composition it would refuse
to attach (ambiguous endpoints), fails the command. See docs/providers.md.`,
		Example: `  fullsend policy test
  fullsend policy test --set OWNER=acme --set REPO_NAME=widgets .
  fullsend policy test --policy policies/summarizer.yaml --set OWNER=o --set REPO_NAME=r --set ISSUE_NUMBER=5 \
    --request 'GET https://api.github.com/repos/o/r/issues/5 from /usr/bin/gh via /usr/bin/bash'
  fullsend policy test --policy policies/summarizer.yaml --set OWNER=o --set REPO_NAME=r \
    --request 'forward GET http://10.0.0.5:8080/status from /usr/bin/curl'
  fullsend policy test --policy policies/summarizer.yaml --set OWNER=o --set REPO_NAME=r --requests requests.txt > decisions.jsonl
  fullsend policy test -o json .
  fullsend policy test --policy policies/summarizer.yaml --set OWNER=o --set REPO_NAME=r \
    --provider-profile work=github --request 'GET https://api.github.com/user from /usr/bin/gh'`,
		Args: cobra.MaximumNArgs(1),
		RunE: f.run,
	}
	fl := cmd.Flags()
	fl.StringVar(&f.policiesDir, "policies", "", "compiled policies directory with manifest.json (default DIR/policies)")
	fl.StringVar(&f.policyFile, "policy", "", "one policy file, for --request or --requests")
	fl.StringArrayVar(&f.requests, "request", nil, "a request to decide against --policy (repeatable)")
	fl.StringVar(&f.requestsFile, "requests", "", `file of requests, one a line ("-" is stdin), decided against --policy; JSON Lines out`)
	fl.StringArrayVar(&f.set, "set", nil, "placeholder value KEY=VALUE; overrides the test files' set: (repeatable)")
	fl.StringVar(&f.openshellVersion, "openshell-version", openshell.DefaultOpenShellVersion,
		fmt.Sprintf("OpenShell release whose decisions to reproduce (%s..%s)", openshell.MinOpenShellVersion, openshell.MaxOpenShellVersion))
	fl.StringVar(&f.binaryIdentity, "binary-identity", "required",
		"required, or relaxed: decide as a supervisor whose binary identity is relaxed (binaries match any process), for --request/--requests")
	fl.StringArrayVar(&f.providers.refs, "provider-profile", nil,
		"[PROVIDER=]FILE|BUILTIN_ID: compose this provider profile's layer into the policy as OpenShell does (repeatable)")
	fl.BoolVar(&f.providers.v2Enabled, "providers-v2-enabled", true,
		"the gateway setting providers_v2_enabled: false composes no provider layer, as OpenShell")
	addOutputFlag(cmd, &f.output)
	return cmd
}

func (f *policyTestFlags) run(cmd *cobra.Command, args []string) error {
	version, err := openshell.NormalizeVersion(f.openshellVersion)
	if err != nil {
		return usageErrorf("--openshell-version: %v", err)
	}
	values, err := placeholder.ParseSet(f.set)
	if err != nil {
		return usageErrorf("%v", setFlagError(err))
	}
	if len(f.requests) > 0 || f.requestsFile != "" {
		return f.decideRequests(cmd, values, version)
	}
	dir, err := projectDir(args)
	if err != nil {
		return err
	}
	return f.runExpectations(cmd, dir, values, version)
}

// decideRequests answers --request or --requests against --policy.
func (f *policyTestFlags) decideRequests(cmd *cobra.Command, values placeholder.Values, version string) error {
	if f.policyFile == "" {
		return usageErrorf("--request and --requests need --policy FILE")
	}
	if len(f.requests) > 0 && f.requestsFile != "" {
		return usageErrorf("give --request or --requests, not both")
	}
	d, composed, err := policyDecider(f.policyFile, values, version, f.providers)
	if err != nil {
		return err
	}
	if d, err = withBinaryIdentity(d, f.binaryIdentity); err != nil {
		return err
	}
	w := cmd.OutOrStdout()
	if f.requestsFile != "" {
		return batchDecisions(w, cmd.InOrStdin(), f.requestsFile, d)
	}
	return adHocDecisions(w, d, f.requests, f.output, composed)
}

// withBinaryIdentity returns d deciding as a supervisor whose binary
// identity is mode: required, or relaxed.
func withBinaryIdentity(d *decide.Decider, mode string) (*decide.Decider, error) {
	switch mode {
	case "required":
		return d, nil
	case "relaxed":
		return d.RelaxedBinaryIdentity(), nil
	}
	return nil, usageErrorf("--binary-identity %q: want required or relaxed", mode)
}

// runExpectations runs every *.policytest.yaml under dir against the
// compiled policies.
func (f *policyTestFlags) runExpectations(cmd *cobra.Command, dir string, values placeholder.Values, version string) error {
	policiesDir := cmp.Or(f.policiesDir, filepath.Join(dir, "policies"))
	if _, err := checkStale(dir, policiesDir, os.Getenv, cmd.ErrOrStderr()); err != nil {
		return err
	}
	cites := newLayerCites()
	policies, err := projectPolicies(policiesDir, cites)
	if err != nil {
		return err
	}
	files, err := decide.FindExpectations(os.DirFS(dir))
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return usageErrorf("no *%s files under %s", decide.ExpectSuffix, dir)
	}
	rep, err := decide.RunExpectationsCompose(os.DirFS(dir), files, policies, values, version,
		f.providers.expectComposer(os.DirFS(dir), version, cites))
	if err != nil {
		return err
	}
	cites.fill(rep)
	if err := writeExpectReport(cmd.OutOrStdout(), rep, f.output); err != nil {
		return err
	}
	if n := rep.Failed(); n > 0 {
		return exitError{code: 1, err: fmt.Errorf("%w: %d of %d", decide.ErrExpectationsFailed, n, len(rep.Results))}
	}
	return nil
}

// projectPolicies opens the compiled bundle in dir and returns each
// agent's policy composed with its provider layers; the compositions go
// to cites.
func projectPolicies(dir string, cites layerCites) (map[string]*openshell.Policy, error) {
	b, err := bundle.Open(os.DirFS(dir), ".")
	if err != nil {
		return nil, fmt.Errorf("%s: %w (compile first: fullsend policy compile)", dir, err)
	}
	out := map[string]*openshell.Policy{}
	for _, name := range b.Manifest.AgentNames() {
		p, err := openshell.Unmarshal(b.Policies[name])
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", dir, b.Manifest.Agents[name].Policy, openshell.DecodeError(err))
		}
		c, err := bundleComposition(b, name, p)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", dir, err)
		}
		out[name], cites.byAgent[name] = p, c
		if c != nil {
			out[name] = c.Policy
		}
	}
	return out, nil
}

// policyDecider loads one policy file, substitutes the placeholders,
// composes the --provider-profile layers and prepares it for decisions.
func policyDecider(file string, values placeholder.Values, version string, providers providerFlags) (*decide.Decider, *profile.Composed, error) {
	in, err := fileInput(file)
	if err != nil {
		return nil, nil, err
	}
	p := in.Policy
	open, err := openshell.ApplyPlaceholders(p, values)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", file, err)
	}
	if len(open) > 0 {
		return nil, nil, usageErrorf("%s still has placeholders %s: give them with --set KEY=VALUE", file, strings.Join(open, ", "))
	}
	p, composed, err := providers.compose(p, version, source{providers.refs, readCwd})
	if err != nil {
		return nil, nil, err
	}
	d, err := decide.New(p, version)
	return d, composed, err
}

// adHocResult is the decision on one --request.
type adHocResult struct {
	Request  string          `json:"request"`
	Decision decide.Decision `json:"decision"`
	// Layer names the provider layer that decided, when one did.
	Layer string `json:"layer,omitempty"`
}

func adHocDecisions(w io.Writer, dec *decide.Decider, requests []string, output outputFormat, composed *profile.Composed) error {
	var results []adHocResult
	for _, s := range requests {
		r, err := decide.ParseRequest(s)
		if err != nil {
			return usageErrorf("--request: %v", err)
		}
		d := dec.Decide(r)
		results = append(results, adHocResult{Request: r.String(), Decision: d, Layer: composed.Cite(d.Policy, d.Path)})
	}
	if output == outputJSON {
		return writeJSON(w, results)
	}
	if composed != nil && composed.Skipped != "" {
		if _, err := fmt.Fprintf(w, "note: %s\n", composed.Skipped); err != nil {
			return err
		}
	}
	for _, r := range results {
		if err := writeAdHocResult(w, r); err != nil {
			return err
		}
	}
	return nil
}

// writeAdHocResult writes one decision as text.
func writeAdHocResult(w io.Writer, r adHocResult) error {
	d := r.Decision
	at := ""
	if d.Path != "" {
		at = " [" + d.Path + "]"
	}
	if _, err := fmt.Fprintf(w, "%-5s %s\n      %s%s\n", d.Verdict(), r.Request, d.Reason, at); err != nil {
		return err
	}
	if r.Layer != "" {
		if _, err := fmt.Fprintf(w, "      in %s\n", r.Layer); err != nil {
			return err
		}
	}
	return nil
}

// batchDecisions answers --requests: every request of file (or stdin for
// "-"), one a line, decided with dec, one JSON object a line.
func batchDecisions(w io.Writer, stdin io.Reader, file string, dec *decide.Decider) error {
	in := stdin
	if file != "-" {
		f, err := os.Open(file)
		if err != nil {
			return fmt.Errorf("--requests: %w", err)
		}
		defer f.Close()
		in = f
	}
	bad, err := dec.DecideLines(in, w)
	if err != nil {
		return fmt.Errorf("--requests %s: %w", file, err)
	}
	if bad > 0 {
		return exitError{code: 1, err: fmt.Errorf("--requests %s: %d lines are not requests (see their \"error\")", file, bad)}
	}
	return nil
}

func writeExpectReport(w io.Writer, rep *decide.ExpectReport, output outputFormat) error {
	if output == outputJSON {
		return writeJSON(w, map[string]any{"files": rep.Files, "failed": rep.Failed(), "results": rep.Results})
	}
	var b strings.Builder
	for _, c := range rep.Results {
		writeCaseResult(&b, c)
	}
	fmt.Fprintf(&b, "%d expectations in %d files: %d passed, %d failed\n",
		len(rep.Results), rep.Files, len(rep.Results)-rep.Failed(), rep.Failed())
	_, err := io.WriteString(w, b.String())
	return err
}

// writeCaseResult writes one expectation's line, and for a failure what
// was expected and what was decided.
func writeCaseResult(b *strings.Builder, c decide.CaseResult) {
	status := "PASS"
	if !c.Pass {
		status = "FAIL"
	}
	name := cmp.Or(c.Name, c.Request)
	via := ""
	if c.Pass && profile.IsProviderRuleName(c.Decision.Policy) {
		via = " (via " + c.Decision.Policy + ")"
	}
	fmt.Fprintf(b, "%s %s:%d %s: %s%s\n", status, c.File, c.Line, c.Agent, name, via)
	if c.Pass {
		return
	}
	fmt.Fprintf(b, "     %s\n     expected %s, got %s: %s", c.Request, c.Expect, c.Decision.Verdict(), c.Decision.Reason)
	if c.Decision.Path != "" {
		fmt.Fprintf(b, " [%s]", c.Decision.Path)
	}
	b.WriteByte('\n')
	if c.Layer != "" {
		fmt.Fprintf(b, "     in %s\n", c.Layer)
	}
	if c.Problem != "" {
		fmt.Fprintf(b, "     %s\n", c.Problem)
	}
}
