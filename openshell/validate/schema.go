package validate

import (
	"github.com/fullsend-ai/agent-sandbox/openshell"
)

// The validator's field table (policyDef and the structs it nests) is
// generated from policycue/schema/openshell/policy.cue, the one source of
// the policy's shape: the CUE carries the knowledge and is what
// `fullsend policy schema openshell` prints, while this package walks the
// generated Go table and never evaluates CUE (so nothing that validates or
// runs policies links cuelang.org/go). Edit the CUE, then run
// `go generate ./...`; internal/schemagen's tests fail while
// zz_generated_schema.go is stale, and TestModelMatchesSchema fails when
// the Policy model has a field the schema does not.
//
//go:generate go run ../../internal/schemagen -schema openshell -cue ../../policycue/schema/openshell -features ../version.go -o zz_generated_schema.go

// kind is the YAML shape a field accepts, mirroring OpenShell's serde types.
type kind int

const (
	kString     kind = iota // String
	kInt                    // u16 / u32 with the field's bounds
	kBool                   // bool
	kStringList             // Vec<String>
	kIntList                // Vec<u16>
	kStruct                 // nested struct (Option<T> when nullable)
	kList                   // Vec<T> of structs
	kMap                    // BTreeMap<String, T> of structs
	kMatcher                // string glob or {any: [globs]}
	kMatcherMap             // BTreeMap<String, matcher>
	kParamMap               // MCP params: matcher or nested map of params
	kOpaqueMap              // BTreeMap<String, struct we do not model>
)

var kindNames = map[kind]string{
	kString: "a string", kInt: "an integer", kBool: "a boolean (true or false)",
	kStringList: "a list of strings", kIntList: "a list of integers", kStruct: "a mapping",
	kList: "a list of mappings", kMap: "a mapping", kMatcher: "a glob string or {any: [globs]}",
	kMatcherMap: "a mapping of parameter -> matcher", kParamMap: "a mapping of parameter -> matcher",
	kOpaqueMap: "a mapping",
}

// fieldDef is one field of an OpenShell serde struct.
type fieldDef struct {
	name     string
	kind     kind
	def      *structDef        // element/value struct for kStruct, kList, kMap
	since    openshell.Feature // "" when present in every supported release
	required bool
	nullable bool // Option<T>: an explicit null means absent
	max      int64
}

// structDef is one deny_unknown_fields struct.
type structDef struct {
	name   string
	fields []fieldDef
}

func (d *structDef) field(name string) *fieldDef {
	for i := range d.fields {
		if d.fields[i].name == name {
			return &d.fields[i]
		}
	}
	return nil
}
