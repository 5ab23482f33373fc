package main

import (
	"bytes"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"slices"
	"strconv"
	"strings"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/cuecontext"
)

// The names the OpenShell schema (policycue/schema/openshell/policy.cue) and
// this generator agree on.
const (
	policyAtDef  = "#PolicyAt" // the policy document, parameterised by #f
	featuresDef  = "#Features" // the release switches
	featureAttr  = "feature"   // @feature(name) on a switch: the Go Feature's value
	nameAttr     = "name"      // @name(text) on a struct: how messages call it
	rootGoName   = "policyDef" // the generated root table
	featureField = "#f"
)

// matcherDefs are the CUE definitions the validator checks with dedicated
// code rather than a struct table: a glob or {any: [globs]}, and MCP params.
var matcherDefs = map[string]string{"#QueryMatcher": "matcher", "#ParamMatcher": "param"}

// osField is one field of a generated fieldDef.
type osField struct {
	name     string
	kind     string // the Go kind constant: kString, kList, ...
	def      *osStruct
	since    string // the Go Feature constant, "" for every release
	required bool
	nullable bool
	max      int64
}

// osStruct is one generated structDef.
type osStruct struct {
	goName string
	name   string
	fields []*osField
}

// osOccurrence is one field at one path of the document; a shared struct
// (the allow and deny match) has its fields at several paths.
type osOccurrence struct {
	path, parent string
	field        *osField
}

type osGen struct {
	order  []string // Go names in document order
	byName map[string]*osStruct
	occs   []osOccurrence
}

// generateOpenShell returns openshell/validate/zz_generated_schema.go for the
// schema in dir; featuresGo is the Go file declaring the Feature constants.
func generateOpenShell(dir, featuresGo string) ([]byte, error) {
	consts, err := featureConsts(featuresGo)
	if err != nil {
		return nil, err
	}
	ctx := cuecontext.New()
	pkg, err := loadDir(ctx, dir)
	if err != nil {
		return nil, err
	}
	switches, err := featureSwitches(pkg, consts)
	if err != nil {
		return nil, err
	}
	g := &osGen{byName: map[string]*osStruct{}}
	root, err := policyAt(pkg, switchesOn(switches, ""))
	if err != nil {
		return nil, err
	}
	if _, err := g.build(root, "", rootGoName, ""); err != nil {
		return nil, err
	}
	if err := g.gate(pkg, switches); err != nil {
		return nil, err
	}
	return g.render()
}

// featureConsts maps the value of every Feature constant declared in the Go
// file to the constant's name ("ports-list" -> FeaturePortsList).
func featureConsts(file string) (map[string]string, error) {
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
	if err != nil {
		return nil, fmt.Errorf("reading the Feature constants: %w", err)
	}
	out := map[string]string{}
	for _, d := range f.Decls {
		if err := addFeatureDecl(d, out); err != nil {
			return nil, err
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no Feature constants in %s", file)
	}
	return out, nil
}

// addFeatureDecl records in out the Feature constants of one top-level
// declaration; other declarations add nothing.
func addFeatureDecl(d ast.Decl, out map[string]string) error {
	gd, ok := d.(*ast.GenDecl)
	if !ok || gd.Tok != token.CONST {
		return nil
	}
	for _, s := range gd.Specs {
		if err := addFeatureConsts(s.(*ast.ValueSpec), out); err != nil {
			return err
		}
	}
	return nil
}

// addFeatureConsts records in out the string constants of one const spec
// of type Feature (value -> name); other specs add nothing.
func addFeatureConsts(vs *ast.ValueSpec, out map[string]string) error {
	if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != "Feature" || len(vs.Values) != len(vs.Names) {
		return nil
	}
	for i, n := range vs.Names {
		if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
			v, err := strconv.Unquote(lit.Value)
			if err != nil {
				return fmt.Errorf("feature constant %s: %w", n.Name, err)
			}
			out[v] = n.Name
		}
	}
	return nil
}

// featureSwitches maps each #Features switch to the Go Feature constant its
// @feature attribute names.
func featureSwitches(pkg cue.Value, consts map[string]string) (map[string]string, error) {
	sels, vals, err := regularFields(pkg.LookupPath(cue.ParsePath(featuresDef)))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", featuresDef, err)
	}
	out := map[string]string{}
	for i, sel := range sels {
		name, ok := fieldAttr(vals[i], featureAttr)
		if !ok || name == "" {
			return nil, fmt.Errorf("%s.%s has no @%s(name) attribute", featuresDef, sel.Unquoted(), featureAttr)
		}
		c, ok := consts[name]
		if !ok {
			return nil, fmt.Errorf("%s.%s: @%s(%s) is not an openshell.Feature", featuresDef, sel.Unquoted(), featureAttr, name)
		}
		out[sel.Unquoted()] = c
	}
	return out, nil
}

// policyAt instantiates #PolicyAt with the switches in on.
func policyAt(pkg cue.Value, on map[string]bool) (cue.Value, error) {
	v := pkg.LookupPath(cue.ParsePath(policyAtDef)).FillPath(cue.MakePath(cue.Def(featureField)), on)
	if err := v.Err(); err != nil {
		return cue.Value{}, fmt.Errorf("instantiating %s: %w", policyAtDef, err)
	}
	return v, nil
}

// switchesOn turns every switch of switches on but off ("" for none).
func switchesOn(switches map[string]string, off string) map[string]bool {
	on := map[string]bool{}
	for sw := range switches {
		on[sw] = sw != off
	}
	return on
}

// build returns the table of struct v at path, named goName in Go (derived
// from the CUE definition or the field when ""), recording every field's
// occurrence.
func (g *osGen) build(v cue.Value, path, goName, field string) (*osStruct, error) {
	if strings.Count(path, ".") > 20 {
		return nil, fmt.Errorf("%s: nesting too deep", path)
	}
	display, err := structName(v, field)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", orRoot(path), err)
	}
	if goName == "" {
		goName = derivedGoName(v, field)
	}
	if !slices.Contains(g.order, goName) {
		g.order = append(g.order, goName)
	}
	s := &osStruct{goName: goName, name: display}
	if err := g.addFields(s, v, path); err != nil {
		return nil, err
	}
	s, err = g.intern(s)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", orRoot(path), err)
	}
	for _, f := range s.fields {
		g.occs = append(g.occs, osOccurrence{path: fieldPath(path, f.name), parent: path, field: f})
	}
	return s, nil
}

// derivedGoName is the Go name of the table of struct v, the value of
// field: from its CUE definition, else from the field.
func derivedGoName(v cue.Value, field string) string {
	if ref, _ := refName(v); ref != "" {
		return camel(ref) + "Def"
	}
	return camel(field) + "Def"
}

// addFields classifies the fields of struct v at path into s, building the
// table of each nested struct.
func (g *osGen) addFields(s *osStruct, v cue.Value, path string) error {
	sels, vals, err := regularFields(v)
	if err != nil {
		return fmt.Errorf("%s: %w", orRoot(path), err)
	}
	for i, sel := range sels {
		f, child, err := classify(sel, vals[i])
		fpath := fieldPath(path, sel.Unquoted())
		if err != nil {
			return fmt.Errorf("%s: %w", fpath, err)
		}
		if child.Exists() {
			if f.def, err = g.build(child, fpath, "", f.name); err != nil {
				return err
			}
		}
		s.fields = append(s.fields, f)
	}
	return nil
}

// fieldPath is the dotted path of field name of the struct at path.
func fieldPath(path, name string) string {
	return strings.TrimPrefix(path+"."+name, ".")
}

// intern returns the one table of a struct reached at several paths.
func (g *osGen) intern(s *osStruct) (*osStruct, error) {
	prev, ok := g.byName[s.goName]
	if !ok {
		g.byName[s.goName] = s
		return s, nil
	}
	if prev.name != s.name || len(prev.fields) != len(s.fields) {
		return nil, fmt.Errorf("two different structs would be called %s", s.goName)
	}
	for i, f := range s.fields {
		// Every part of a field compares: since is "" until gate runs, and
		// def is the interned table of a nested struct.
		if *prev.fields[i] != *f {
			return nil, fmt.Errorf("two different structs would be called %s (field %s)", s.goName, f.name)
		}
	}
	return prev, nil
}

func orRoot(path string) string {
	if path == "" {
		return policyAtDef
	}
	return path
}

// structName is how messages call a struct: its definition's @name, or
// the field's name for an inline struct.
func structName(v cue.Value, field string) (string, error) {
	ref, def := refName(v)
	if ref == "" {
		if n, ok := declAttr(v, nameAttr); ok {
			return n, nil
		}
		if field == "" {
			return "", fmt.Errorf("no @%s(...) attribute", nameAttr)
		}
		return field, nil
	}
	if n, ok := declAttr(def, nameAttr); ok {
		return n, nil
	}
	return "", fmt.Errorf("definition %s has no @%s(...) attribute", ref, nameAttr)
}

// classify returns the table entry of one field and, for a nested struct,
// list of structs or map of structs, the element struct.
func classify(sel cue.Selector, v cue.Value) (*osField, cue.Value, error) {
	f := &osField{name: sel.Unquoted(), required: sel.ConstraintType() == cue.RequiredConstraint}
	v, f.nullable = stripNull(v)
	if !v.Exists() {
		return nil, cue.Value{}, errors.New("a nullable field must have exactly one other type")
	}
	if ref, _ := refName(v); matcherDefs[ref] == "matcher" {
		f.kind = "kMatcher"
		return f, cue.Value{}, nil
	}
	var err error
	switch k := v.IncompleteKind(); k {
	case cue.StringKind:
		f.kind = "kString"
	case cue.IntKind:
		f.kind = "kInt"
		f.max, err = intMax(v)
	case cue.BoolKind:
		f.kind = "kBool"
	case cue.ListKind:
		return classifyList(f, v.LookupPath(cue.MakePath(cue.AnyIndex)))
	case cue.StructKind:
		if elem := v.LookupPath(cue.MakePath(cue.AnyString)); elem.Exists() {
			return classifyMap(f, elem)
		}
		f.kind = "kStruct"
		return f, v, nil
	default:
		err = fmt.Errorf("unsupported type %v", k)
	}
	return f, cue.Value{}, err
}

func classifyList(f *osField, elem cue.Value) (*osField, cue.Value, error) {
	var err error
	switch k := elem.IncompleteKind(); k {
	case cue.StringKind:
		f.kind = "kStringList"
	case cue.IntKind:
		f.kind = "kIntList"
		f.max, err = intMax(elem)
	case cue.StructKind:
		f.kind = "kList"
		return f, elem, nil
	default:
		err = fmt.Errorf("unsupported list element type %v", k)
	}
	return f, cue.Value{}, err
}

func classifyMap(f *osField, elem cue.Value) (*osField, cue.Value, error) {
	ref, _ := refName(elem)
	switch {
	case matcherDefs[ref] == "matcher":
		f.kind = "kMatcherMap"
	case matcherDefs[ref] == "param":
		f.kind = "kParamMap"
	case elem.IncompleteKind() != cue.StructKind:
		return nil, cue.Value{}, fmt.Errorf("unsupported map value type %v", elem.IncompleteKind())
	case ref == "" && !hasFields(elem):
		// {...}: a struct OpenShell checks elsewhere; only its shape is fixed.
		f.kind = "kOpaqueMap"
	default:
		f.kind = "kMap"
		return f, elem, nil
	}
	return f, cue.Value{}, nil
}

func hasFields(v cue.Value) bool {
	sels, _, err := regularFields(v)
	return err == nil && len(sels) > 0
}

// stripNull returns the non-null alternative of `null | T` and true, or v
// and false when v does not admit null. The value does not exist when the
// non-null alternatives are not exactly one.
func stripNull(v cue.Value) (cue.Value, bool) {
	if v.IncompleteKind()&cue.NullKind == 0 {
		return v, false
	}
	op, args := v.Expr()
	if op != cue.OrOp {
		return cue.Value{}, true
	}
	var rest []cue.Value
	for _, a := range args {
		if a.IncompleteKind() != cue.NullKind {
			rest = append(rest, a)
		}
	}
	if len(rest) != 1 {
		return cue.Value{}, true
	}
	return rest[0], true
}

// intMax returns the upper bound of an integer type such as #u16. The
// validator reads unsigned integers only, so the lower bound must be 0.
func intMax(v cue.Value) (int64, error) {
	lo, hi := int64(-1), int64(-1)
	if err := bounds(v, &lo, &hi, 0); err != nil {
		return 0, err
	}
	if lo != 0 || hi < 0 {
		return 0, fmt.Errorf("integer type %v needs the bounds >=0 and <=N", v)
	}
	return hi, nil
}

func bounds(v cue.Value, lo, hi *int64, depth int) error {
	if depth > 10 {
		return errors.New("integer bounds nest too deep")
	}
	op, args := v.Expr()
	switch op {
	case cue.AndOp:
		return boundsAll(args, lo, hi, depth+1)
	case cue.SelectorOp:
		if root, p := v.ReferencePath(); len(p.Selectors()) > 0 {
			return bounds(root.LookupPath(p), lo, hi, depth+1)
		}
	case cue.GreaterThanEqualOp:
		return boundValue(args[0], lo)
	case cue.LessThanEqualOp:
		return boundValue(args[0], hi)
	case cue.NoOp:
		// int, or a concrete value such as the 1 of `#u32 & 1`: the
		// validator checks values, the table only the type.
	default:
		return fmt.Errorf("unsupported integer constraint %v", v)
	}
	return nil
}

// boundsAll is bounds over each conjunct of a conjunction.
func boundsAll(args []cue.Value, lo, hi *int64, depth int) error {
	for _, a := range args {
		if err := bounds(a, lo, hi, depth); err != nil {
			return err
		}
	}
	return nil
}

// boundValue stores the integer of bound arg in *bound.
func boundValue(arg cue.Value, bound *int64) error {
	n, err := arg.Int64()
	if err != nil {
		return fmt.Errorf("integer bound %v: %w", arg, err)
	}
	*bound = n
	return nil
}

// gate sets each field's release feature: the switch without which the
// field disappears while its parent stays.
func (g *osGen) gate(pkg cue.Value, switches map[string]string) error {
	gates := map[*osField]string{}
	for _, sw := range slices.Sorted(maps.Keys(switches)) {
		present, err := pathsWithout(pkg, switches, sw)
		if err != nil {
			return err
		}
		if err := g.gateBy(gates, present, switches[sw]); err != nil {
			return err
		}
	}
	for _, o := range g.occs {
		o.field.since = gates[o.field]
	}
	return nil
}

// pathsWithout returns the path of every field of the policy document with
// switch sw off and every other switch on ("" for the document itself).
func pathsWithout(pkg cue.Value, switches map[string]string, sw string) (map[string]bool, error) {
	v, err := policyAt(pkg, switchesOn(switches, sw))
	if err != nil {
		return nil, err
	}
	present := map[string]bool{"": true}
	if err := collectPaths(v, "", present); err != nil {
		return nil, fmt.Errorf("with %s off: %w", sw, err)
	}
	return present, nil
}

// gateBy records in gates the feature of the switch whose absence leaves
// only the present paths: it gates each field that disappears while its
// parent stays. A field gated by two features is an error.
func (g *osGen) gateBy(gates map[*osField]string, present map[string]bool, feature string) error {
	for _, o := range g.occs {
		if present[o.path] || !present[o.parent] {
			continue
		}
		if prev, ok := gates[o.field]; ok && prev != feature {
			return fmt.Errorf("%s: gated by both %s and %s", o.path, prev, feature)
		}
		gates[o.field] = feature
	}
	return nil
}

// collectPaths records the path of every field of struct v.
func collectPaths(v cue.Value, path string, out map[string]bool) error {
	sels, vals, err := regularFields(v)
	if err != nil {
		return err
	}
	for i, sel := range sels {
		_, child, err := classify(sel, vals[i])
		fpath := fieldPath(path, sel.Unquoted())
		if err != nil {
			return fmt.Errorf("%s: %w", fpath, err)
		}
		out[fpath] = true
		if child.Exists() {
			if err := collectPaths(child, fpath, out); err != nil {
				return err
			}
		}
	}
	return nil
}

func (g *osGen) render() ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(`package validate

import "github.com/fullsend-ai/agent-sandbox/openshell"

// The OpenShell v1 policy schema, field by field, with the release feature
// that added each field, as policycue/schema/openshell/policy.cue declares
// it. Change the CUE and run go generate ./..., never this file.
var (
`)
	for _, name := range g.order {
		s := g.byName[name]
		fmt.Fprintf(&b, "\t%s = &structDef{name: %q, fields: []fieldDef{\n", s.goName, s.name)
		for _, f := range s.fields {
			fmt.Fprintf(&b, "\t\t{%s},\n", f.literal())
		}
		b.WriteString("\t}}\n")
	}
	b.WriteString(")\n")
	return goSource("policycue/schema/openshell", &b)
}

func (f *osField) literal() string {
	parts := []string{"name: " + strconv.Quote(f.name), "kind: " + f.kind}
	if f.def != nil {
		parts = append(parts, "def: "+f.def.goName)
	}
	if f.max != 0 {
		parts = append(parts, "max: "+strconv.FormatInt(f.max, 10))
	}
	if f.since != "" {
		parts = append(parts, "since: openshell."+f.since)
	}
	if f.required {
		parts = append(parts, "required: true")
	}
	if f.nullable {
		parts = append(parts, "nullable: true")
	}
	return strings.Join(parts, ", ")
}
