package main

import (
	"bytes"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/cuecontext"
)

// proseAttr marks a frontmatter field whose value is prose (@prose()).
const proseAttr = "prose"

// inputTable is one generated variable of package agentdef: what it holds,
// read from which definition (and field) of the input schemas.
type inputTable struct {
	goName string
	doc    string
	def    string // a CUE definition, such as #ClaudeAgent
	field  string // a field of def whose type is read; "" for def itself
	read   func(v cue.Value) (string, error)
}

// inputTables are the frontmatter parser's vocabularies. Every slice keeps
// the schema's order: the parser's hints and suggestions list them so.
var inputTables = []inputTable{
	{"claudeAgentKeys", "claudeAgentKeys are the frontmatter fields of a Claude Code subagent, plus fullsend's sandbox block", "#ClaudeAgent", "", keyList},
	{"openCodeAgentKeys", "openCodeAgentKeys are the frontmatter fields of an OpenCode agent, plus fullsend's sandbox block. A name overrides the one OpenCode takes from the file's path", "#OpenCodeAgent", "", keyList},
	{"skillKeys", "skillKeys are the Agent Skills standard fields, Claude Code's extensions, fullsend's dependencies and policy, and our sandbox block", "#Skill", "", keyList},
	{"sandboxKeys", "sandboxKeys are the fields of a sandbox block", "#SandboxBlock", "", keyList},
	{"endpointKeys", "endpointKeys are the fields of a sandbox endpoint", "#Endpoint", "", keyList},
	{"ruleKeys", "ruleKeys are the fields of a rule in mapping form", "#RuleMap", "", keyList},
	{"filesystemKeys", "filesystemKeys are the fields of a sandbox filesystem block", "#Filesystem", "", keyList},
	{"providerRefKeys", "providerRefKeys are the fields of a sandbox provider in mapping form", "#ProviderRef", "", keyList},
	{"spawnWideningKeys", "spawnWideningKeys are the fields of a declared spawn widening", "#SpawnWidening", "", keyList},
	{"permissionModes", "permissionModes are Claude Code's permission modes", "#ClaudeAgent", "permissionMode", enumList},
	{"memoryScopes", "memoryScopes are the scopes of a Claude Code agent's memory", "#ClaudeAgent", "memory", enumList},
	{"effortLevels", "effortLevels are the reasoning effort levels of agents and skills", "#Effort", "", enumList},
	{"isolationModes", "isolationModes are the isolation modes of a Claude Code agent", "#ClaudeAgent", "isolation", enumList},
	{"openCodeModes", "openCodeModes are where an OpenCode agent can be used", "#OpenCodeAgent", "mode", enumList},
	{"permActions", "permActions are the actions of an OpenCode permission", "#OpenCodeAction", "", enumList},
	{"tiers", "tiers are the sandbox tiers, from least to most capable", "#SandboxBlock", "tier", enumList},
	{"protocols", "protocols are OpenShell's endpoint protocols (tcp needs v0.0.111+; the compiler gates it on the target version)", "#Endpoint", "protocol", enumList},
	{"accesses", "accesses are OpenShell's access presets", "#Endpoint", "access", enumList},
	{"httpMethods", "httpMethods are the methods a rule may name", "#HTTPMethod", "", enumList},
	{"openCodeTools", "openCodeTools maps OpenCode permission and tool names to Claude Code tool names. An empty value is a permission that grants no tool capability (doom_loop, question) or none the compiler maps (external_directory). edit covers OpenCode's write, patch and multiedit tools", "#OpenCodePermissions", "", claudeToolMap},
	{"openCodeLegacyTools", "openCodeLegacyTools are tool names accepted only in the deprecated tools map", "#OpenCodeLegacyTools", "", stringMap},
	{"openCodePatternPerms", "openCodePatternPerms are the permissions that take a pattern->action map; the others take one action", "#OpenCodePatternPermissions", "", stringSet},
}

// proseDefs are the definitions whose @prose fields form freeTextFields.
var proseDefs = []string{"#ClaudeAgent", "#OpenCodeAgent", "#Skill"}

// generateInput returns agentdef/zz_generated_input.go for the input
// schemas in dir.
func generateInput(dir string) ([]byte, error) {
	pkg, err := loadDir(cuecontext.New(), dir)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.WriteString(`package agentdef

// The frontmatter parser's vocabularies, as the CUE input schemas in
// policycue/schema/input declare them. Change the CUE and run
// go generate ./..., never this file.
var (
`)
	for _, t := range inputTables {
		v := pkg.LookupPath(cue.ParsePath(t.def))
		where := t.def
		if t.field != "" {
			v = v.LookupPath(cue.MakePath(cue.Str(t.field).Optional()))
			where += "." + t.field
		}
		if !v.Exists() {
			return nil, fmt.Errorf("input schema has no %s", where)
		}
		lit, err := t.read(v)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		writeComment(&b, "\t", fmt.Sprintf("%s (%s).", t.doc, where))
		fmt.Fprintf(&b, "\t%s = %s\n\n", t.goName, lit)
	}
	prose, err := proseFields(pkg)
	if err != nil {
		return nil, err
	}
	writeComment(&b, "\t", fmt.Sprintf("freeTextFields are the fields whose values are prose, where a ` #` most likely was meant as text and not as a YAML comment (@%s() in %s).", proseAttr, strings.Join(proseDefs, ", ")))
	fmt.Fprintf(&b, "\tfreeTextFields = %s\n)\n", prose)
	return goSource("policycue/schema/input", &b)
}

// keyList is the definition's field names in source order.
func keyList(v cue.Value) (string, error) {
	sels, _, err := regularFields(v)
	if err != nil {
		return "", err
	}
	names := make([]string, len(sels))
	for i, s := range sels {
		names[i] = s.Unquoted()
	}
	return sliceLit(names), nil
}

// enumList is the string values of a disjunction of literals, following
// references such as #Effort, in the order written.
func enumList(v cue.Value) (string, error) {
	vals, err := enumValues(v, 0)
	if err != nil {
		return "", err
	}
	return sliceLit(vals), nil
}

func enumValues(v cue.Value, depth int) ([]string, error) {
	if depth > 10 {
		return nil, fmt.Errorf("enum %v nests too deep", v)
	}
	if v.IsConcrete() {
		s, err := v.String()
		if err != nil {
			return nil, fmt.Errorf("%v is not a string enum: %w", v, err)
		}
		return []string{s}, nil
	}
	op, args := v.Expr()
	switch op {
	case cue.OrOp:
		return enumAlternatives(args, depth+1)
	case cue.SelectorOp:
		if root, p := v.ReferencePath(); len(p.Selectors()) > 0 {
			return enumValues(root.LookupPath(p), depth+1)
		}
	}
	return nil, fmt.Errorf("%v is not a disjunction of strings", v)
}

// enumAlternatives is enumValues over each alternative of a disjunction,
// in order.
func enumAlternatives(args []cue.Value, depth int) ([]string, error) {
	var out []string
	for _, a := range args {
		vals, err := enumValues(a, depth)
		if err != nil {
			return nil, err
		}
		out = append(out, vals...)
	}
	return out, nil
}

// claudeToolMap is #OpenCodePermissions as permission -> Claude Code tool.
func claudeToolMap(v cue.Value) (string, error) {
	sels, vals, err := regularFields(v)
	if err != nil {
		return "", err
	}
	m := map[string]string{}
	for i, s := range sels {
		tool, err := vals[i].LookupPath(cue.ParsePath("claude")).String()
		if err != nil {
			return "", fmt.Errorf("%s.claude: %w", s.Unquoted(), err)
		}
		m[s.Unquoted()] = tool
	}
	return mapLit(m, strconv.Quote, "string"), nil
}

// stringMap is a struct of string fields.
func stringMap(v cue.Value) (string, error) {
	m := map[string]string{}
	if err := v.Decode(&m); err != nil {
		return "", err
	}
	return mapLit(m, strconv.Quote, "string"), nil
}

// stringSet is a list of strings as a set.
func stringSet(v cue.Value) (string, error) {
	var list []string
	if err := v.Decode(&list); err != nil {
		return "", err
	}
	m := map[string]bool{}
	for _, s := range list {
		m[s] = true
	}
	return mapLit(m, strconv.FormatBool, "bool"), nil
}

func proseFields(pkg cue.Value) (string, error) {
	m := map[string]bool{}
	for _, def := range proseDefs {
		sels, vals, err := regularFields(pkg.LookupPath(cue.ParsePath(def)))
		if err != nil {
			return "", fmt.Errorf("%s: %w", def, err)
		}
		for i, s := range sels {
			if _, ok := fieldAttr(vals[i], proseAttr); ok {
				m[s.Unquoted()] = true
			}
		}
	}
	if len(m) == 0 {
		return "", fmt.Errorf("no @%s() field in %s", proseAttr, strings.Join(proseDefs, ", "))
	}
	return mapLit(m, strconv.FormatBool, "bool"), nil
}

func sliceLit(vals []string) string {
	q := make([]string, len(vals))
	for i, v := range vals {
		q[i] = strconv.Quote(v)
	}
	return "[]string{" + strings.Join(q, ", ") + "}"
}

// mapLit prints a map literal with sorted keys, one entry per line.
func mapLit[V any](m map[string]V, lit func(V) string, typ string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	fmt.Fprintf(&b, "map[string]%s{\n", typ)
	for _, k := range keys {
		fmt.Fprintf(&b, "%q: %s,\n", k, lit(m[k]))
	}
	b.WriteString("}")
	return b.String()
}
