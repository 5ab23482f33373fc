package openshell

import (
	"fmt"
	"regexp"
	"strings"
)

// goTypeSections names the model's Go types by the policy section a user
// wrote, for decoding errors: yaml.v3's strict decoder reports `field x not
// found in type openshell.Endpoint`, which names our code, not the file.
var goTypeSections = map[string]string{
	"Policy":             "the policy",
	"NetworkMiddleware":  "a network_middlewares entry",
	"MiddlewareSelector": "a middleware's endpoints selector",
	"FilesystemPolicy":   "filesystem_policy",
	"Landlock":           "landlock",
	"Process":            "process",
	"NetworkPolicy":      "a network_policies entry",
	"Endpoint":           "an endpoint",
	"GraphQLOperation":   "a graphql_persisted_queries entry",
	"CredentialBinding":  "a credential binding",
	"JSONRPCConfig":      "an endpoint's json_rpc",
	"MCPConfig":          "an endpoint's mcp",
	"Rule":               "a rule",
	"Match":              "a rule's allow or deny",
	"QueryMatch":         "a query matcher",
	"ParamMatch":         "a params matcher",
	"Binary":             "a binaries entry",
}

var goTypeRef = regexp.MustCompile(`(?:in type |into )(?:\[\]|\*|map\[string\])*openshell\.(\w+)`)

// DecodeError rewrites an error of Unmarshal for a user: the Go types the
// YAML decoder names become the policy sections they model (`field prot
// not found in type openshell.Endpoint` becomes `unknown field prot in an
// endpoint`), and yaml.v3's "unmarshal errors:" preamble and line breaks
// go, so it prints on one line. errors.Is and errors.As still see err.
func DecodeError(err error) error {
	if err == nil {
		return nil
	}
	msg := goTypeRef.ReplaceAllStringFunc(err.Error(), func(m string) string {
		name := goTypeRef.FindStringSubmatch(m)[1]
		sec, ok := goTypeSections[name]
		if !ok {
			sec = strings.ToLower(name)
		}
		if strings.HasPrefix(m, "into ") {
			return "into " + sec
		}
		return "in " + sec
	})
	msg = unknownField.ReplaceAllString(msg, `unknown field $1 in`)
	msg = strings.Replace(msg, "yaml: unmarshal errors:\n  ", "", 1)
	msg = strings.ReplaceAll(msg, "\n  ", "; ")
	if msg == err.Error() {
		return err
	}
	return &decodeError{err: err, msg: msg}
}

var unknownField = regexp.MustCompile(`field (\S+) not found in`)

type decodeError struct {
	err error
	msg string
}

func (e *decodeError) Error() string { return e.msg }
func (e *decodeError) Unwrap() error { return e.err }

// yamlParserProblems are the problems yaml.v3 reports as parser (not
// scanner) errors. For those it prints the 0-based line of the enclosing
// construct's start, so YAMLErrorLine adds one; scanner errors are 1-based.
var yamlParserProblems = []string{
	"did not find expected ',' or ']'", "did not find expected ',' or '}'",
	"did not find expected '-' indicator", "did not find expected <document start>",
	"did not find expected <stream-start>", "did not find expected key",
	"did not find expected node content", "found duplicate %TAG directive",
	"found duplicate %YAML directive", "found incompatible YAML document",
	"found undefined tag handle",
}

// YAMLErrorLine extracts the 1-based line from a yaml.v3 error
// ("yaml: line 3: ..."), correcting the 0-based line yaml.v3 prints for its
// parser errors (yamlParserProblems). The provider profile decoder uses it
// too.
func YAMLErrorLine(err error) int {
	var line int
	msg := err.Error()
	i := strings.Index(msg, "line ")
	if i < 0 {
		return 1
	}
	if _, scanErr := fmt.Sscanf(msg[i:], "line %d", &line); scanErr != nil || line < 0 {
		return 1
	}
	for _, p := range yamlParserProblems {
		if strings.HasSuffix(msg, p) {
			line++
			break
		}
	}
	return max(line, 1)
}
