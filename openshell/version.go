package openshell

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"golang.org/x/mod/semver"
)

// DefaultOpenShellVersion is the OpenShell release the Containerfile pins; the
// compiler and the validator target it unless told otherwise.
const DefaultOpenShellVersion = "v0.0.111"

// MinOpenShellVersion and MaxOpenShellVersion bound the releases whose policy
// schema and validation rules this package knows exactly. Older releases
// parsed ports as u32 and treated `tls: terminate` as meaningful; newer ones
// may accept fields we cannot know about, so both are refused (fail closed).
const (
	MinOpenShellVersion = "v0.0.22"
	MaxOpenShellVersion = "v0.0.111"
)

// SupportedVersions returns the OpenShell releases the toolchain is tested
// against: fullsend's pin and the Containerfile's pin. Every release between
// MinOpenShellVersion and MaxOpenShellVersion is accepted as a target.
func SupportedVersions() []string { return []string{"v0.0.83", DefaultOpenShellVersion} }

// ErrUnsupportedVersion is returned for a target OpenShell version outside
// [MinOpenShellVersion, MaxOpenShellVersion] or not a valid version.
var ErrUnsupportedVersion = errors.New("unsupported OpenShell version")

// Feature names a policy field or behaviour that appeared in a given
// OpenShell release. The compiler and the runner gate on it with Supports.
type Feature string

// Features by the first OpenShell tag that has them. Verified against the
// serde structs in crates/openshell-policy/src/lib.rs and the supervisor's
// L7 validator at every tag.
const (
	FeatureHostWildcards         Feature = "host-wildcards"          // *.example.com, **.example.com
	FeaturePortsList             Feature = "ports-list"              // endpoints[].ports
	FeatureTLSAutoDetect         Feature = "tls-auto-detect"         // tls: terminate/passthrough deprecated no-ops
	FeatureQueryMatchers         Feature = "query-matchers"          // rules[].allow.query
	FeatureTLDWildcardRejected   Feature = "tld-wildcard-rejected"   // *.com rejected at load
	FeatureDenyRules             Feature = "deny-rules"              // endpoints[].deny_rules
	FeatureAllowEncodedSlash     Feature = "allow-encoded-slash"     // endpoints[].allow_encoded_slash
	FeatureProtocolGraphQL       Feature = "protocol-graphql"        // protocol: graphql, endpoint path, persisted queries
	FeatureUnknownProtocolReject Feature = "unknown-protocol-reject" // unknown protocol is a load error (before: silently L4)
	FeatureProtocolWebsocket     Feature = "protocol-websocket"      // protocol: websocket
	FeatureCredentialRewrite     Feature = "credential-rewrite"      // websocket_/request_body_credential_rewrite
	FeatureProtocolJSONRPC       Feature = "protocol-json-rpc"       // protocol: json-rpc, mcp; json_rpc/mcp stanzas; tool/params; credential_signing
	FeatureReservedProviderKeys  Feature = "reserved-provider-keys"  // network_policies keys starting with _provider_ rejected
	FeatureNumericProcessIDs     Feature = "numeric-process-ids"     // run_as_user/group may be numeric (1000..2e9)
	FeaturePrivateExactHost      Feature = "private-exact-host"      // exact hostnames may resolve to private IPs without allowed_ips
	FeatureMiddleLabelWildcard   Feature = "middle-label-wildcard"   // api.*.example.com
	FeatureNetworkMiddlewares    Feature = "network-middlewares"     // top-level network_middlewares
	FeatureSandboxNameRules      Feature = "sandbox-name-rules"      // sandbox names <= 19 chars, DNS-1123 label, no "--"
	FeatureGatewayL7Validation   Feature = "gateway-l7-validation"   // the gateway validates L7 semantics on create/set
	FeatureQuarantine            Feature = "quarantine"              // a policy failing supervisor validation quarantines the sandbox
	FeatureAmbiguityCheck        Feature = "ambiguity-check"         // overlapping endpoints with disagreeing settings rejected
	FeatureCredentialBinding     Feature = "credential-binding"      // endpoints[].credential_binding
	FeatureSandboxStopStart      Feature = "sandbox-stop-start"      // openshell sandbox stop/start
	FeatureWideProcessIDs        Feature = "wide-process-ids"        // numeric ids 1..4294967294
	FeatureUninspectedCreds      Feature = "allow-uninspected-credentials"
	FeatureProtocolTCP           Feature = "protocol-tcp"        // protocol: tcp (explicit L4)
	FeatureCreateCommandMain     Feature = "create-command-main" // `sandbox create -- CMD` is the main process
	// Load-time checks (see openshell/validate*.go for the citations).
	FeatureDenyAllRulesRejected   Feature = "deny-all-rules-rejected"  // rules that all lack an allow condition fail L7 validation
	FeatureMCPAllowAllConflict    Feature = "mcp-allow-all-conflict"   // a method-less MCP rule under allow_all_known_mcp_methods conflicts with tool rules
	FeatureEndpointTargetRequired Feature = "endpoint-target-required" // endpoints need a host (or allowed_ips) and a port in 1..65535
)

// featureSince maps each feature to the first OpenShell tag that has it.
var featureSince = map[Feature]string{
	FeatureHostWildcards:         "v0.0.7",
	FeaturePortsList:             "v0.0.7",
	FeatureTLSAutoDetect:         "v0.0.15",
	FeatureQueryMatchers:         "v0.0.19",
	FeatureTLDWildcardRejected:   "v0.0.27",
	FeatureDenyRules:             "v0.0.30",
	FeatureAllowEncodedSlash:     "v0.0.34",
	FeatureProtocolGraphQL:       "v0.0.37",
	FeatureUnknownProtocolReject: "v0.0.37",
	FeatureProtocolWebsocket:     "v0.0.39",
	FeatureCredentialRewrite:     "v0.0.39",
	FeatureProtocolJSONRPC:       "v0.0.72",
	FeatureReservedProviderKeys:  "v0.0.72",
	FeatureNumericProcessIDs:     "v0.0.76",
	FeaturePrivateExactHost:      "v0.0.53",
	FeatureMiddleLabelWildcard:   "v0.0.86",
	FeatureNetworkMiddlewares:    "v0.0.86",
	FeatureSandboxNameRules:      "v0.0.88",
	FeatureGatewayL7Validation:   "v0.0.92",
	FeatureQuarantine:            "v0.0.97",
	FeatureAmbiguityCheck:        "v0.0.97",
	FeatureCredentialBinding:     "v0.0.103",
	FeatureSandboxStopStart:      "v0.0.105",
	FeatureWideProcessIDs:        "v0.0.110",
	FeatureUninspectedCreds:      "v0.0.110",
	FeatureProtocolTCP:           "v0.0.111",
	FeatureCreateCommandMain:     "v0.0.111",
	// l7_validate.rs:171-179 and l7/mod.rs:1077 first appear at v0.0.92.
	FeatureDenyAllRulesRejected: "v0.0.92",
	FeatureMCPAllowAllConflict:  "v0.0.92",
	// openshell-policy/src/lib.rs:1480-1521 @ v0.0.111 (absent at v0.0.110).
	FeatureEndpointTargetRequired: "v0.0.111",
}

// Since returns the first OpenShell version that has feature f, and false
// for an unknown feature.
func Since(f Feature) (string, bool) {
	v, ok := featureSince[f]
	return v, ok
}

// Features returns every known feature name.
func Features() []Feature {
	out := make([]Feature, 0, len(featureSince))
	for f := range featureSince {
		out = append(out, f)
	}
	slices.Sort(out)
	return out
}

// NormalizeVersion parses an OpenShell version ("0.0.83", "v0.0.83") into
// canonical "vMAJOR.MINOR.PATCH" form and checks that it is supported. The
// empty string selects DefaultOpenShellVersion.
func NormalizeVersion(v string) (string, error) {
	if v == "" {
		return DefaultOpenShellVersion, nil
	}
	c := v
	if !strings.HasPrefix(c, "v") {
		c = "v" + c
	}
	if !semver.IsValid(c) || semver.Prerelease(c) != "" || semver.Build(c) != "" {
		return "", fmt.Errorf("%w %q: want a release like %s", ErrUnsupportedVersion, v, DefaultOpenShellVersion)
	}
	c = semver.Canonical(c)
	if semver.Compare(c, MinOpenShellVersion) < 0 || semver.Compare(c, MaxOpenShellVersion) > 0 {
		return "", fmt.Errorf("%w %s: this fullsend knows OpenShell %s through %s", ErrUnsupportedVersion, c, MinOpenShellVersion, MaxOpenShellVersion)
	}
	return c, nil
}

// CompareVersions compares two OpenShell versions like semver.Compare
// (-1, 0, +1); the "v" prefix is optional. Invalid versions sort first.
func CompareVersions(a, b string) int {
	return semver.Compare(withV(a), withV(b))
}

func withV(v string) string {
	if strings.HasPrefix(v, "v") {
		return v
	}
	return "v" + v
}

// Supports reports whether OpenShell at version has feature f. An unknown
// feature or an invalid version reports false, so gated output is omitted
// rather than emitted for a release that might reject it.
func Supports(f Feature, version string) bool {
	since, ok := featureSince[f]
	if !ok {
		return false
	}
	v := withV(version)
	if !semver.IsValid(v) {
		return false
	}
	return semver.Compare(v, since) >= 0
}
