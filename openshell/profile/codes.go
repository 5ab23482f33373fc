package profile

// Stable diagnostic codes of profile validation, in openshell's Diagnostic
// code style (openshell/validate/codes.go). Findings about the endpoints as
// the composed policy carries them keep openshell's OSP codes. Codes never
// change meaning; docs/providers.md lists them.
const (
	// Document and schema (serde_yml into ProviderTypeProfile).
	CodeSyntax       = "OPP001" // YAML syntax, empty document, several documents
	CodeUnknownField = "OPP002" // key the release's struct does not know: silently ignored (trap)
	CodeType         = "OPP003" // wrong YAML type, out-of-range number, unknown enum value
	CodeFieldTooNew  = "OPP004" // field added after the target release: silently ignored there (trap)
	CodeRequired     = "OPP005" // required field missing
	CodeDuplicateKey = "OPP006" // the same key twice in one mapping
	CodeYAMLFeature  = "OPP008" // custom tags, over-deep alias expansion
	CodeUnsupported  = "OPP009" // the target release has no provider profiles

	// Identity.
	CodeID          = "OPP010" // id missing or not lowercase kebab-case
	CodeDuplicateID = "OPP011" // two profiles with one id
	CodeBuiltinID   = "OPP012" // id of a built-in profile: import refused

	// Credentials.
	CodeCredential = "OPP020" // credential name, env vars, auth_style and its companion fields
	CodeRefresh    = "OPP021" // refresh strategy, durations, material, additional_outputs
	CodeTokenGrant = "OPP022" // token_grant endpoint, auth style, header, audience overrides
	CodeDiscovery  = "OPP023" // discovery.credentials

	// Endpoints and binaries, as profile lint checks them.
	CodeEndpoint    = "OPP030" // host missing, port outside 1..65535
	CodeEndpointL7  = "OPP031" // L7 field combinations (validate_l7_endpoint_semantics), empty rule lists, tcp with L7 fields
	CodeEndpointMCP = "OPP032" // MCP tool/params rules
	CodeUninspected = "OPP033" // credentialed endpoint without L7 inspection
	CodeBinary      = "OPP040" // binary path empty
)
