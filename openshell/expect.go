package openshell

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"path"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/fullsend-ai/agent-sandbox/placeholder"
)

// ExpectSuffix names expectation files: agents/triage.policytest.yaml.
const ExpectSuffix = ".policytest.yaml"

// ErrExpectFile reports an expectation file that does not parse.
var ErrExpectFile = errors.New("bad expectation file")

// ExpectFile is one *.policytest.yaml: requests one agent's compiled policy
// must allow or deny.
//
//	agent: triage
//	set: {OWNER: acme, REPO_NAME: widgets, ISSUE_NUMBER: "5"}
//	tests:
//	  - name: reads its own issue
//	    request: GET https://api.github.com/repos/acme/widgets/issues/5 from /usr/bin/gh
//	    expect: allow
//	  - request: CONNECT 169.254.169.254:80 from /usr/bin/curl
//	    expect: deny
//	    reason: SSRF
type ExpectFile struct {
	File  string
	Agent string
	// Set holds placeholder values for this file (--set values override them).
	Set   placeholder.Values
	Tests []ExpectCase
	// Providers lists the provider profiles whose layers the tests compose
	// into the agent's policy (providers: [...], as written; resolved by
	// the ComposeFunc of RunExpectationsCompose).
	Providers []string
}

// ComposeFunc returns the effective policy the tests of ef run against,
// given the agent's policy with its placeholders substituted (package
// openshell/profile composes the provider layers).
type ComposeFunc func(ef *ExpectFile, p *Policy) (*Policy, error)

// ExpectCase is one request and its expected verdict.
type ExpectCase struct {
	Line    int
	Name    string
	Request *Request
	// Expect is allow, deny or audit (allowed, but only because the
	// endpoint is not enforced).
	Expect string
	// Reason, when set, must be a substring of the decision's reason.
	Reason string
}

type rawExpectFile struct {
	Agent     string            `yaml:"agent"`
	Set       map[string]string `yaml:"set"`
	Providers []string          `yaml:"providers"`
	Tests     []yaml.Node       `yaml:"tests"`
}

type rawCase struct {
	Name    string `yaml:"name"`
	Request string `yaml:"request"`
	Expect  string `yaml:"expect"`
	Reason  string `yaml:"reason"`
}

// ParseExpectFile parses an expectation file strictly: unknown keys, a
// missing agent or tests, a bad request or verdict are errors naming the
// file and line.
func ParseExpectFile(name string, data []byte) (*ExpectFile, error) {
	bad := func(line int, format string, args ...any) error {
		return fmt.Errorf("%w: %s:%d: %s", ErrExpectFile, name, line, fmt.Sprintf(format, args...))
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var raw rawExpectFile
	if err := dec.Decode(&raw); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, bad(1, "file is empty (want agent: and tests:)")
		}
		return nil, fmt.Errorf("%w: %s: %v", ErrExpectFile, name, err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return nil, bad(extra.Line, "more than one YAML document")
	}
	if strings.TrimSpace(raw.Agent) == "" {
		return nil, bad(1, "missing agent: (the agent whose compiled policy the tests run against)")
	}
	if len(raw.Tests) == 0 {
		return nil, bad(1, "no tests: (want a list of {request, expect})")
	}
	ef := &ExpectFile{File: name, Agent: raw.Agent, Set: placeholder.Values{}, Providers: raw.Providers}
	for _, k := range slices.Sorted(maps.Keys(raw.Set)) {
		if err := ef.Set.Set(k, raw.Set[k]); err != nil {
			return nil, bad(1, "set.%s: %v", k, err)
		}
	}
	for i := range raw.Tests {
		n := &raw.Tests[i]
		c, err := parseExpectCase(n)
		if err != nil {
			return nil, bad(n.Line, "tests[%d]: %v", i, err)
		}
		ef.Tests = append(ef.Tests, c)
	}
	return ef, nil
}

// parseExpectCase parses one test case: a known request and verdict.
func parseExpectCase(n *yaml.Node) (ExpectCase, error) {
	var rc rawCase
	if err := decodeStrict(n, &rc); err != nil {
		return ExpectCase{}, err
	}
	if rc.Request == "" {
		return ExpectCase{}, errors.New("missing request:")
	}
	r, err := ParseRequest(rc.Request)
	if err != nil {
		return ExpectCase{}, err
	}
	switch rc.Expect {
	case "allow", "deny", "audit":
	default:
		return ExpectCase{}, fmt.Errorf("expect %q, want allow, deny or audit", rc.Expect)
	}
	return ExpectCase{Line: n.Line, Name: rc.Name, Request: r, Expect: rc.Expect, Reason: rc.Reason}, nil
}

// decodeStrict decodes one node with unknown keys rejected (Node.Decode
// ignores the decoder's KnownFields, so re-encode through a strict decoder).
func decodeStrict(n *yaml.Node, v any) error {
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("want a mapping with request and expect")
	}
	raw, err := yaml.Marshal(n)
	if err != nil {
		return err
	}
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	if err := dec.Decode(v); err != nil {
		return errors.New(strings.TrimPrefix(err.Error(), "yaml: unmarshal errors:\n  "))
	}
	return nil
}

// FindExpectations lists every *.policytest.yaml under fsys, skipping hidden
// directories and the compiled policies directory.
func FindExpectations(fsys fs.FS) ([]string, error) {
	var out []string
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			// The path is the project's, not ours: quoted, so that no
			// character of it reaches a log raw.
			var pe *fs.PathError
			if errors.As(err, &pe) {
				err = pe.Err
			}
			return fmt.Errorf("%s: %w", strconv.QuoteToGraphic(p), err)
		}
		if d.IsDir() && p != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules") {
			return fs.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(p, ExpectSuffix) {
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("finding %s files: %w", ExpectSuffix, err)
	}
	return out, nil
}

// CaseResult is the outcome of one expectation.
type CaseResult struct {
	File     string   `json:"file"`
	Line     int      `json:"line"`
	Agent    string   `json:"agent"`
	Name     string   `json:"name,omitempty"`
	Request  string   `json:"request"`
	Expect   string   `json:"expect"`
	Decision Decision `json:"decision"`
	Pass     bool     `json:"pass"`
	// Problem explains a failure beyond the verdict (a reason mismatch).
	Problem string `json:"problem,omitempty"`
}

// ExpectReport collects the results of RunExpectations.
type ExpectReport struct {
	Files   int          `json:"files"`
	Results []CaseResult `json:"results"`
}

// Failed counts the expectations that did not hold.
func (r *ExpectReport) Failed() int {
	n := 0
	for _, c := range r.Results {
		if !c.Pass {
			n++
		}
	}
	return n
}

// ErrExpectationsFailed is wrapped by callers when expectations do not hold.
var ErrExpectationsFailed = errors.New("policy expectations failed")

// RunExpectations parses the named expectation files in fsys and runs each
// against its agent's policy (policies by agent name). Placeholders are
// substituted on a copy of the policy from the file's set: values overridden
// by set; a placeholder a test needs but nobody sets is an error, as is an
// agent with no policy.
func RunExpectations(fsys fs.FS, files []string, policies map[string]*Policy, set placeholder.Values) (*ExpectReport, error) {
	return RunExpectationsVersion(fsys, files, policies, set, DefaultOpenShellVersion)
}

// RunExpectationsVersion is RunExpectations with the decisions of OpenShell
// version.
func RunExpectationsVersion(fsys fs.FS, files []string, policies map[string]*Policy, set placeholder.Values, version string) (*ExpectReport, error) {
	return RunExpectationsCompose(fsys, files, policies, set, version, nil)
}

// RunExpectationsCompose is RunExpectationsVersion with each file's policy
// passed through compose (when not nil) before its tests run. A file that
// names providers: without a compose function is an error.
func RunExpectationsCompose(fsys fs.FS, files []string, policies map[string]*Policy, set placeholder.Values, version string, compose ComposeFunc) (*ExpectReport, error) {
	rep := &ExpectReport{Results: []CaseResult{}}
	for _, name := range files {
		data, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, fmt.Errorf("reading expectations: %w", err)
		}
		ef, err := ParseExpectFile(name, data)
		if err != nil {
			return nil, err
		}
		resolved, err := resolvePolicy(ef, policies, set)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if compose != nil {
			if resolved, err = compose(ef, resolved); err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
		} else if len(ef.Providers) > 0 {
			return nil, fmt.Errorf("%w: %s: providers: needs provider profile composition", ErrExpectFile, name)
		}
		dec, err := NewDecider(resolved, version)
		if err != nil {
			return nil, err
		}
		rep.Files++
		for _, c := range ef.Tests {
			rep.Results = append(rep.Results, runExpectCase(name, ef.Agent, dec, c))
		}
	}
	return rep, nil
}

// resolvePolicy returns a copy of the policy of the file's agent with every
// placeholder substituted: the file's set, overridden by set.
func resolvePolicy(ef *ExpectFile, policies map[string]*Policy, set placeholder.Values) (*Policy, error) {
	p, ok := policies[ef.Agent]
	if !ok {
		return nil, fmt.Errorf("agent %q has no compiled policy (have %s)", ef.Agent, strings.Join(slices.Sorted(maps.Keys(policies)), ", "))
	}
	resolved := p.Clone()
	open, err := ApplyPlaceholders(resolved, ef.Set.Merge(set))
	if err != nil {
		return nil, fmt.Errorf("substituting placeholders into %s's policy: %w", ef.Agent, err)
	}
	if len(open) > 0 {
		return nil, fmt.Errorf("%s's policy still has placeholders %s: give them under set: or with --set KEY=VALUE",
			ef.Agent, strings.Join(open, ", "))
	}
	return resolved, nil
}

// runExpectCase decides one case's request and judges the verdict (an
// audited allow does not satisfy expect: allow) and the reason.
func runExpectCase(file, agent string, dec *Decider, c ExpectCase) CaseResult {
	d := dec.Decide(c.Request)
	res := CaseResult{File: path.Clean(file), Line: c.Line, Agent: agent, Name: c.Name,
		Request: c.Request.String(), Expect: c.Expect, Decision: d, Pass: d.Verdict() == c.Expect}
	if c.Expect == "allow" && d.Audit {
		res.Pass = false
		res.Problem = "allowed only because the endpoint is not enforced (expect: audit to accept that)"
	}
	if res.Pass && c.Reason != "" && !strings.Contains(d.Reason, c.Reason) {
		res.Pass = false
		res.Problem = fmt.Sprintf("reason %q does not contain %q", d.Reason, c.Reason)
	}
	return res
}
