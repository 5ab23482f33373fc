package validate

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/fullsend-ai/agent-sandbox/openshell"

	"gopkg.in/yaml.v3"
)

// Validate checks one OpenShell policy document offline against what
// OpenShell at version (canonical or bare, "" for DefaultOpenShellVersion)
// accepts and does: the closed schema of that release, its load-time
// rejections, its gateway and supervisor checks, and the traps it accepts
// silently (audit by omission, L7 fields without a protocol, empty binaries).
// Every diagnostic carries a line (1 when the document cannot be parsed at
// all). Diagnostics are sorted by position. Validate never panics.
func File(filename string, data []byte, version string) []openshell.Diagnostic {
	c := &checker{file: filename}
	v, err := openshell.NormalizeVersion(version)
	if err != nil {
		c.diags = append(c.diags, openshell.Diagnostic{File: filename, Line: 1, Column: 1, Severity: openshell.SeverityError,
			Code: openshell.CodeVersionUnsupported, Message: err.Error(),
			Hint: fmt.Sprintf("pass --openshell-version between %s and %s", openshell.MinOpenShellVersion, openshell.MaxOpenShellVersion)})
		return c.diags
	}
	c.version = v
	c.run(data)
	openshell.SortDiagnostics(c.diags)
	return c.diags
}

// ValidatePolicy validates an in-memory policy as OpenShell at version would
// see it, by encoding it exactly as Marshal does and validating the bytes.
// The diagnostics name the file "<policy>"; their lines are those of the
// Marshal output.
func Policy(p *openshell.Policy, version string) []openshell.Diagnostic {
	const name = "<policy>"
	data, err := openshell.Marshal(p, "")
	if err != nil {
		return []openshell.Diagnostic{{File: name, Line: 1, Column: 1, Severity: openshell.SeverityError, Code: CodeSyntax,
			Message: err.Error()}}
	}
	return File(name, data, version)
}

// checker accumulates the diagnostics of one Validate call.
type checker struct {
	file    string
	version string
	diags   []openshell.Diagnostic
	budget  int // remaining node visits, bounding alias expansion
	// hostHard is set while checking an endpoint host OpenShell parses
	// strictly at load (see checkHost).
	hostHard bool
}

// maxNodeVisits bounds the work on one document: alias chains can expand a
// 256 KiB document into billions of nodes.
const maxNodeVisits = 200000

func (c *checker) at(n *yaml.Node, path string, sev openshell.Severity, code, hint, format string, args ...any) {
	line, col := 1, 1
	if n != nil && n.Line > 0 {
		line, col = n.Line, n.Column
	}
	c.diags = append(c.diags, openshell.Diagnostic{File: c.file, Line: line, Column: col, Path: path,
		Severity: sev, Code: code, Message: fmt.Sprintf(format, args...), Hint: hint})
}

func (c *checker) errorf(n *yaml.Node, path, code, hint, format string, args ...any) {
	c.at(n, path, openshell.SeverityError, code, hint, format, args...)
}

func (c *checker) warnf(n *yaml.Node, path, code, hint, format string, args ...any) {
	c.at(n, path, openshell.SeverityWarning, code, hint, format, args...)
}

// trapf reports a trap: OpenShell loads the policy, but it does something
// other than what it says. A warning for `policy validate`, fatal for the
// compiler (openshell.Diagnostic.IsFatal).
func (c *checker) trapf(n *yaml.Node, path, code, hint, format string, args ...any) {
	c.at(n, path, openshell.SeverityWarning, code, hint, format, args...)
	c.diags[len(c.diags)-1].Trap = true
}

func (c *checker) supports(f openshell.Feature) bool { return openshell.Supports(f, c.version) }

func (c *checker) run(data []byte) {
	if len(data) > openshell.MaxPolicyBytes {
		c.errorf(nil, "", CodeTooLarge, "split the agent's access into fewer, broader rules or fewer hosts",
			"policy exceeds OpenShell's limit of %d bytes (256 KiB)", openshell.MaxPolicyBytes)
		return
	}
	root := c.decode(data)
	if root == nil {
		return
	}
	c.budget = maxNodeVisits
	if pol := c.walkStruct(root, "", policyDef); pol != nil {
		c.checkPolicy(pol)
	}
}

// decode parses data, which must hold exactly one YAML document, and
// returns the document's root node; nil once it has reported why not.
func (c *checker) decode(data []byte) *yaml.Node {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); errors.Is(err, io.EOF) {
		c.emptyPolicy(nil)
		return nil
	} else if err != nil {
		c.syntaxError(err)
		return nil
	}
	var extra yaml.Node
	switch err := dec.Decode(&extra); {
	case err == nil:
		c.errorf(&extra, "", CodeSyntax, "keep one policy per file", "policy file holds more than one YAML document")
		return nil
	case !errors.Is(err, io.EOF):
		c.syntaxError(err)
		return nil
	}
	if doc.Kind != yaml.DocumentNode {
		return &doc
	}
	if len(doc.Content) == 0 {
		c.emptyPolicy(&doc)
		return nil
	}
	return doc.Content[0]
}

// emptyPolicy reports a document without content at n.
func (c *checker) emptyPolicy(n *yaml.Node) {
	c.errorf(n, "", CodeSyntax, "a policy needs at least `version: 1`", "policy is empty")
}

// syntaxError reports a YAML decoding error at the line it names.
func (c *checker) syntaxError(err error) {
	c.errorf(&yaml.Node{Line: openshell.YAMLErrorLine(err), Column: 1}, "", CodeSyntax, "fix the YAML syntax", "%s", yamlErrorMessage(err))
}

func yamlErrorMessage(err error) string {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if i := strings.Index(msg, "line "); i == 0 {
		if j := strings.Index(msg, ": "); j > 0 {
			msg = msg[j+2:]
		}
	}
	return "invalid YAML: " + msg
}
