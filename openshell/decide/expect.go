package decide

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/fullsend-ai/agent-sandbox/openshell"

	"gopkg.in/yaml.v3"

	"github.com/fullsend-ai/agent-sandbox/internal/didyoumean"
	"github.com/fullsend-ai/agent-sandbox/placeholder"
)

// ExpectSuffix names expectation files: agents/triage.policytest.yaml.
const ExpectSuffix = ".policytest.yaml"

// ErrExpectFile reports an expectation file that does not parse.
var ErrExpectFile = errors.New("bad expectation file")

// ExpectFileError is an expectation file that does not parse, at a line
// (0 when the YAML decoder gave none). It wraps ErrExpectFile.
type ExpectFileError struct {
	File    string
	Line    int
	Message string
}

func (e *ExpectFileError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%v: %s:%d: %s", ErrExpectFile, e.File, e.Line, e.Message)
	}
	return fmt.Sprintf("%v: %s: %s", ErrExpectFile, e.File, e.Message)
}

// Unwrap returns ErrExpectFile.
func (e *ExpectFileError) Unwrap() error { return ErrExpectFile }

// ExpectFileErrors is every problem of one expectation file, each at its
// own line, in line order: a file is reported whole in one run.
type ExpectFileErrors []*ExpectFileError

func (e ExpectFileErrors) Error() string {
	msgs := make([]string, len(e))
	for i, fe := range e {
		msgs[i] = fe.Error()
	}
	return strings.Join(msgs, "\n")
}

// Unwrap returns each problem (each wraps ErrExpectFile).
func (e ExpectFileErrors) Unwrap() []error {
	errs := make([]error, len(e))
	for i, fe := range e {
		errs[i] = fe
	}
	return errs
}

// fileErrors is the error of a file's problems: the one problem itself,
// or ExpectFileErrors sorted by line.
func fileErrors(errs []*ExpectFileError) error {
	if len(errs) == 1 {
		return errs[0]
	}
	slices.SortStableFunc(errs, func(a, b *ExpectFileError) int { return a.Line - b.Line })
	return ExpectFileErrors(errs)
}

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
type ComposeFunc func(ef *ExpectFile, p *openshell.Policy) (*openshell.Policy, error)

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
	raw, err := decodeExpectFile(name, data)
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(raw.Agent) == "" {
		return nil, expectFileError(name, 1, "missing agent: (the agent whose compiled policy the tests run against)")
	}
	if len(raw.Tests) == 0 {
		return nil, expectFileError(name, 1, "no tests: (want a list of {request, expect})")
	}
	ef := &ExpectFile{File: name, Agent: raw.Agent, Set: placeholder.Values{}, Providers: raw.Providers}
	var errs []*ExpectFileError
	for _, k := range slices.Sorted(maps.Keys(raw.Set)) {
		if err := ef.Set.Set(k, raw.Set[k]); err != nil {
			errs = append(errs, &ExpectFileError{File: name, Line: 1, Message: fmt.Sprintf("set.%s: %v", k, err)})
		}
	}
	for i := range raw.Tests {
		c, kerrs := parseExpectCase(&raw.Tests[i])
		for _, ke := range kerrs {
			errs = append(errs, &ExpectFileError{File: name, Line: ke.line, Message: fmt.Sprintf("tests[%d]: %s", i, ke.msg)})
		}
		ef.Tests = append(ef.Tests, c)
	}
	if len(errs) > 0 {
		return nil, fileErrors(errs)
	}
	return ef, nil
}

// expectFileError is the ExpectFileError of file at line.
func expectFileError(file string, line int, format string, args ...any) error {
	return &ExpectFileError{File: file, Line: line, Message: fmt.Sprintf(format, args...)}
}

// decodeExpectFile decodes the one YAML document of an expectation file,
// whose keys must be known.
func decodeExpectFile(name string, data []byte) (*rawExpectFile, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, expectFileError(name, 1, "file is empty (want agent: and tests:)")
		}
		line, msg := yamlErrorLine(err)
		return nil, &ExpectFileError{File: name, Line: line, Message: msg}
	}
	var raw rawExpectFile
	if err := decodeKnown(&doc, &raw, expectFileKeys, "agent, set, providers and tests"); err != nil {
		return nil, expectFileError(name, err.line, "%s", err.msg)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return nil, expectFileError(name, extra.Line, "more than one YAML document")
	}
	return &raw, nil
}

// yamlErrorLine splits a yaml.v3 syntax error ("yaml: line 14: could not
// find expected ':'") into its line (0 when it names none) and message.
func yamlErrorLine(err error) (int, string) {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
		if n, err := strconv.Atoi(m[1]); err == nil {
			return n, m[2]
		}
	}
	return 0, msg
}

// yamlLineRE matches the line yaml.v3 puts before a syntax error.
var yamlLineRE = regexp.MustCompile(`^line (\d+): (.*)$`)

// parseExpectCase parses one test case: a known request and verdict.
// Every problem is reported, each at the line of its key or value (the
// case's when it is about the whole case).
func parseExpectCase(n *yaml.Node) (ExpectCase, []*keyError) {
	if n.Kind != yaml.MappingNode {
		return ExpectCase{}, []*keyError{{line: n.Line, msg: "want a mapping with request and expect"}}
	}
	errs := checkKeys(n, expectCaseKeys, "name, request, expect and reason")
	var rc rawCase
	c := ExpectCase{Line: n.Line}
	for _, f := range []struct {
		key string
		dst *string
	}{{"name", &rc.Name}, {"request", &rc.Request}, {"expect", &rc.Expect}, {"reason", &rc.Reason}} {
		if v := mappingValue(n, f.key); v != nil {
			if err := v.Decode(f.dst); err != nil {
				errs = append(errs, &keyError{line: v.Line, msg: f.key + ": " + typeErrorText(err)})
			}
		}
	}
	if ke := parseCaseRequest(n, rc.Request, &c); ke != nil {
		errs = append(errs, ke)
	}
	switch rc.Expect {
	case "allow", "deny", "audit":
	default:
		line := n.Line
		if v := mappingValue(n, "expect"); v != nil {
			line = v.Line
		}
		errs = append(errs, &keyError{line: line, msg: fmt.Sprintf("expect %q, want allow, deny or audit", rc.Expect)})
	}
	c.Name, c.Expect, c.Reason = rc.Name, rc.Expect, rc.Reason
	return c, errs
}

// parseCaseRequest parses the request of case n (req) into c; the error is
// at the request's line, or the case's when it has none.
func parseCaseRequest(n *yaml.Node, req string, c *ExpectCase) *keyError {
	v := mappingValue(n, "request")
	switch {
	case v == nil || (req == "" && v.Kind == yaml.ScalarNode):
		return &keyError{line: n.Line, msg: "missing request:"}
	case req == "":
		return nil // not a string: reported by its decoding
	}
	r, err := ParseRequest(req)
	if err != nil {
		return &keyError{line: v.Line, msg: err.Error()}
	}
	c.Request = r
	return nil
}

// mappingValue is the value of the first key named key in mapping n, nil
// when there is none.
func mappingValue(n *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// The keys of an expectation file and of one test case.
var (
	expectFileKeys = []string{"agent", "set", "providers", "tests"}
	expectCaseKeys = []string{"expect", "name", "reason", "request"}
)

// keyError is a problem with one key of an expectation file, at its line.
type keyError struct {
	line int
	msg  string
}

func (e *keyError) Error() string { return e.msg }

// decodeKnown decodes a mapping node into v after checking its keys against
// known, so that an unknown key is named with its line and a did-you-mean
// (yaml.v3's strict decoder would name the Go type instead). what lists the
// keys for the message.
func decodeKnown(n *yaml.Node, v any, known []string, what string) *keyError {
	if n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
		n = n.Content[0]
	}
	if n.Kind != yaml.MappingNode {
		return &keyError{line: n.Line, msg: "want a mapping with " + what}
	}
	if errs := checkKeys(n, known, what); len(errs) > 0 {
		return errs[0]
	}
	if err := n.Decode(v); err != nil {
		return &keyError{line: n.Line, msg: typeErrorText(err)}
	}
	return nil
}

// checkKeys refuses every key of mapping n that is not known, or that is
// given twice.
func checkKeys(n *yaml.Node, known []string, what string) []*keyError {
	var errs []*keyError
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		switch {
		case !slices.Contains(known, k.Value):
			errs = append(errs, unknownKey(k, known, what))
		case seen[k.Value]:
			errs = append(errs, &keyError{line: k.Line, msg: fmt.Sprintf("field %q given twice", k.Value)})
		}
		seen[k.Value] = true
	}
	return errs
}

// unknownKey is the error of key k, not one of known: with a did-you-mean
// when one is close, else listing what.
func unknownKey(k *yaml.Node, known []string, what string) *keyError {
	msg := fmt.Sprintf("unknown field %q (want %s)", k.Value, what)
	if s := didyoumean.Closest(k.Value, known); s != "" {
		msg = fmt.Sprintf("unknown field %q: did you mean %q?", k.Value, s)
	}
	return &keyError{line: k.Line, msg: msg}
}

// typeErrorText is a yaml.v3 decoding error without the Go type names
// (`line 1: cannot unmarshal !!seq into string` becomes `want a string,
// got a list`).
func typeErrorText(err error) string {
	var te *yaml.TypeError
	if !errors.As(err, &te) || len(te.Errors) == 0 {
		return strings.TrimPrefix(err.Error(), "yaml: ")
	}
	var parts []string
	for _, e := range te.Errors {
		if m := unmarshalError.FindStringSubmatch(e); m != nil {
			e = fmt.Sprintf("want %s, got %s", yamlWord(m[2]), yamlWord(m[1]))
		}
		parts = append(parts, e)
	}
	return strings.Join(parts, "; ")
}

var unmarshalError = regexp.MustCompile(`cannot unmarshal (!!\w+)(?: ` + "`" + `[^` + "`" + `]*` + "`" + `)? into (\S+)`)

// yamlWord names a YAML tag or a Go type of the expectation file's fields
// in the file's own words.
func yamlWord(s string) string {
	switch {
	case strings.HasPrefix(s, "[]"):
		return "a list"
	case strings.HasPrefix(s, "map["):
		return "a mapping"
	}
	if w, ok := yamlWords[s]; ok {
		return w
	}
	return "a " + strings.TrimPrefix(s, "!!")
}

// yamlWords are the words of yamlWord for YAML tags and Go's string.
var yamlWords = map[string]string{
	"!!seq": "a list", "!!map": "a mapping",
	"!!str": "a string", "string": "a string",
	"!!int": "a number", "!!float": "a number",
	"!!bool": "a boolean",
}

// FindExpectations lists every *.policytest.yaml under fsys, skipping hidden
// directories and node_modules (skipDir).
func FindExpectations(fsys fs.FS) ([]string, error) {
	var out []string
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return walkError(p, err)
		case d.IsDir():
			return skipDir(p, d.Name())
		case strings.HasSuffix(p, ExpectSuffix):
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("finding %s files: %w", ExpectSuffix, err)
	}
	return out, nil
}

// walkError is the error of walking to p. The path is the project's, not
// ours: quoted, so that no character of it reaches a log raw.
func walkError(p string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return fmt.Errorf("%s: %w", strconv.QuoteToGraphic(p), err)
}

// skipDir is fs.SkipDir for the directory p (named name) when
// FindExpectations does not look inside it: hidden, or node_modules.
func skipDir(p, name string) error {
	if p != "." && (strings.HasPrefix(name, ".") || name == "node_modules") {
		return fs.SkipDir
	}
	return nil
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
	// Layer cites the provider layer that decided, when one did (filled
	// in by the caller that composed it: profile.Layer.Cite).
	Layer string `json:"layer,omitempty"`
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
func RunExpectations(fsys fs.FS, files []string, policies map[string]*openshell.Policy, set placeholder.Values) (*ExpectReport, error) {
	return RunExpectationsVersion(fsys, files, policies, set, openshell.DefaultOpenShellVersion)
}

// RunExpectationsVersion is RunExpectations with the decisions of OpenShell
// version.
func RunExpectationsVersion(fsys fs.FS, files []string, policies map[string]*openshell.Policy, set placeholder.Values, version string) (*ExpectReport, error) {
	return RunExpectationsCompose(fsys, files, policies, set, version, nil)
}

// RunExpectationsCompose is RunExpectationsVersion with each file's policy
// passed through compose (when not nil) before its tests run. A file that
// names providers: without a compose function is an error.
func RunExpectationsCompose(fsys fs.FS, files []string, policies map[string]*openshell.Policy, set placeholder.Values, version string, compose ComposeFunc) (*ExpectReport, error) {
	x := expectRun{fsys: fsys, policies: policies, set: set, version: version, compose: compose}
	rep := &ExpectReport{Results: []CaseResult{}}
	for _, name := range files {
		if err := x.runFile(rep, name); err != nil {
			return nil, err
		}
	}
	return rep, nil
}

// expectRun is what every expectation file of a RunExpectationsCompose
// runs with.
type expectRun struct {
	fsys     fs.FS
	policies map[string]*openshell.Policy
	set      placeholder.Values
	version  string
	compose  ComposeFunc
}

// runFile parses the expectation file name and adds its results to rep.
func (x *expectRun) runFile(rep *ExpectReport, name string) error {
	data, err := fs.ReadFile(x.fsys, name)
	if err != nil {
		return fmt.Errorf("reading expectations: %w", err)
	}
	ef, err := ParseExpectFile(name, data)
	if err != nil {
		return err
	}
	p, err := x.policy(ef)
	if err != nil {
		return err
	}
	dec, err := New(p, x.version)
	if err != nil {
		return err
	}
	rep.Files++
	for _, c := range ef.Tests {
		rep.Results = append(rep.Results, runExpectCase(name, ef.Agent, dec, c))
	}
	return nil
}

// policy is the policy the tests of ef run against: its agent's with the
// placeholders substituted, then composed; without a compose function, a
// file that names providers: is an error.
func (x *expectRun) policy(ef *ExpectFile) (*openshell.Policy, error) {
	resolved, err := resolvePolicy(ef, x.policies, x.set)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ef.File, err)
	}
	if x.compose == nil {
		if len(ef.Providers) > 0 {
			return nil, fmt.Errorf("%w: %s: providers: needs provider profile composition", ErrExpectFile, ef.File)
		}
		return resolved, nil
	}
	if resolved, err = x.compose(ef, resolved); err != nil {
		return nil, fmt.Errorf("%s: %w", ef.File, err)
	}
	return resolved, nil
}

// resolvePolicy returns a copy of the policy of the file's agent with every
// placeholder substituted: the file's set, overridden by set.
func resolvePolicy(ef *ExpectFile, policies map[string]*openshell.Policy, set placeholder.Values) (*openshell.Policy, error) {
	p, ok := policies[ef.Agent]
	if !ok {
		return nil, fmt.Errorf("agent %q has no compiled policy (have %s)", ef.Agent, strings.Join(slices.Sorted(maps.Keys(policies)), ", "))
	}
	resolved := p.Clone()
	open, err := openshell.ApplyPlaceholders(resolved, ef.Set.Merge(set))
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
