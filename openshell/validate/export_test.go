package validate

import (
	"github.com/fullsend-ai/agent-sandbox/openshell"
)

// SchemaField is one field of the generated validator table, as the CUE
// cross-check (schema_cue_test.go) walks it: its YAML name, the release
// feature that added it ("" for every supported release) and, for nested
// mappings, lists of mappings and maps of mappings, the fields of the
// element.
type SchemaField struct {
	Name   string
	Since  openshell.Feature
	Nested NestKind
	Fields []SchemaField
}

// NestKind says how a field nests a struct: not at all, directly, as a list
// element or as a map value.
type NestKind int

// How a SchemaField nests its Fields.
const (
	NestNone NestKind = iota
	NestStruct
	NestList
	NestMap
)

// SchemaFields returns the fields of the policy document, recursively.
func SchemaFields() []SchemaField { return schemaFields(policyDef) }

func schemaFields(d *structDef) []SchemaField {
	out := make([]SchemaField, 0, len(d.fields))
	for _, f := range d.fields {
		sf := SchemaField{Name: f.name, Since: f.since}
		if f.def != nil {
			switch f.kind {
			case kList:
				sf.Nested = NestList
			case kMap:
				sf.Nested = NestMap
			default:
				sf.Nested = NestStruct
			}
			sf.Fields = schemaFields(f.def)
		}
		out = append(out, sf)
	}
	return out
}
