package openshell

import "math"

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
	def      *structDef // element/value struct for kStruct, kList, kMap
	since    Feature    // "" when present in every supported release
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

// The OpenShell v1 policy schema, field by field, with the release that
// added each field. Verified against crates/openshell-policy/src/lib.rs at
// every tag from v0.0.22 to v0.0.111; policy.cue encodes the same table and
// TestCUESchemaMatchesGoSchema keeps the two in step.
var (
	matchDef = &structDef{name: "rule", fields: []fieldDef{
		{name: "method", kind: kString},
		{name: "path", kind: kString},
		{name: "command", kind: kString},
		{name: "query", kind: kMatcherMap, since: FeatureQueryMatchers},
		{name: "operation_type", kind: kString, since: FeatureProtocolGraphQL},
		{name: "operation_name", kind: kString, since: FeatureProtocolGraphQL},
		{name: "fields", kind: kStringList, since: FeatureProtocolGraphQL},
		{name: "tool", kind: kMatcher, since: FeatureProtocolJSONRPC, nullable: true},
		{name: "params", kind: kParamMap, since: FeatureProtocolJSONRPC},
	}}
	ruleDef = &structDef{name: "rule", fields: []fieldDef{
		{name: "allow", kind: kStruct, def: matchDef, required: true},
	}}
	graphqlOpDef = &structDef{name: "graphql operation", fields: []fieldDef{
		{name: "operation_type", kind: kString},
		{name: "operation_name", kind: kString},
		{name: "fields", kind: kStringList},
	}}
	jsonRPCDef = &structDef{name: "json_rpc", fields: []fieldDef{
		{name: "max_body_bytes", kind: kInt, max: math.MaxUint32},
	}}
	mcpDef = &structDef{name: "mcp", fields: []fieldDef{
		{name: "max_body_bytes", kind: kInt, max: math.MaxUint32},
		{name: "strict_tool_names", kind: kBool, nullable: true},
		{name: "allow_all_known_mcp_methods", kind: kBool, nullable: true},
	}}
	credentialBindingDef = &structDef{name: "credential_binding", fields: []fieldDef{
		{name: "provider", kind: kString, required: true},
	}}
	endpointDef = &structDef{name: "endpoint", fields: []fieldDef{
		{name: "host", kind: kString},
		{name: "path", kind: kString, since: FeatureProtocolGraphQL},
		{name: "port", kind: kInt, max: math.MaxUint16},
		{name: "ports", kind: kIntList, max: math.MaxUint16, since: FeaturePortsList},
		{name: "protocol", kind: kString},
		{name: "tls", kind: kString},
		{name: "enforcement", kind: kString},
		{name: "access", kind: kString},
		{name: "rules", kind: kList, def: ruleDef},
		{name: "allowed_ips", kind: kStringList},
		{name: "deny_rules", kind: kList, def: matchDef, since: FeatureDenyRules},
		{name: "allow_encoded_slash", kind: kBool, since: FeatureAllowEncodedSlash},
		{name: "websocket_credential_rewrite", kind: kBool, since: FeatureCredentialRewrite},
		{name: "request_body_credential_rewrite", kind: kBool, since: FeatureCredentialRewrite},
		{name: "allow_uninspected_credentials", kind: kBool, since: FeatureUninspectedCreds},
		{name: "persisted_queries", kind: kString, since: FeatureProtocolGraphQL},
		{name: "graphql_persisted_queries", kind: kMap, def: graphqlOpDef, since: FeatureProtocolGraphQL},
		{name: "graphql_max_body_bytes", kind: kInt, max: math.MaxUint32, since: FeatureProtocolGraphQL},
		{name: "credential_signing", kind: kString, since: FeatureProtocolJSONRPC},
		{name: "signing_service", kind: kString, since: FeatureProtocolJSONRPC},
		{name: "signing_region", kind: kString, since: FeatureProtocolJSONRPC},
		{name: "credential_binding", kind: kStruct, def: credentialBindingDef, nullable: true, since: FeatureCredentialBinding},
		{name: "json_rpc", kind: kStruct, def: jsonRPCDef, nullable: true, since: FeatureProtocolJSONRPC},
		{name: "mcp", kind: kStruct, def: mcpDef, nullable: true, since: FeatureProtocolJSONRPC},
	}}
	binaryDef = &structDef{name: "binary", fields: []fieldDef{
		{name: "path", kind: kString, required: true},
		{name: "harness", kind: kBool},
	}}
	networkPolicyDef = &structDef{name: "network policy", fields: []fieldDef{
		{name: "name", kind: kString},
		{name: "endpoints", kind: kList, def: endpointDef},
		{name: "binaries", kind: kList, def: binaryDef},
	}}
	filesystemDef = &structDef{name: "filesystem_policy", fields: []fieldDef{
		{name: "include_workdir", kind: kBool},
		{name: "read_only", kind: kStringList},
		{name: "read_write", kind: kStringList},
	}}
	landlockDef = &structDef{name: "landlock", fields: []fieldDef{
		{name: "compatibility", kind: kString},
	}}
	processDef = &structDef{name: "process", fields: []fieldDef{
		{name: "run_as_user", kind: kString},
		{name: "run_as_group", kind: kString},
	}}
	policyDef = &structDef{name: "policy", fields: []fieldDef{
		{name: "version", kind: kInt, max: math.MaxUint32, required: true},
		{name: "filesystem_policy", kind: kStruct, def: filesystemDef, nullable: true},
		{name: "landlock", kind: kStruct, def: landlockDef, nullable: true},
		{name: "process", kind: kStruct, def: processDef, nullable: true},
		{name: "network_policies", kind: kMap, def: networkPolicyDef},
		{name: "network_middlewares", kind: kOpaqueMap, since: FeatureNetworkMiddlewares},
	}}
)

// SchemaField is one field of the OpenShell policy schema as the validator
// checks it: its YAML name, the release feature that added it ("" for every
// supported release) and, for nested mappings, lists of mappings and maps of
// mappings, the fields of the element.
type SchemaField struct {
	Name   string
	Since  Feature
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

// SchemaFields returns the fields of the policy document, recursively: the
// table the validator walks, for tools that keep other forms of the schema
// (the CUE #Policy) in step with it.
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
