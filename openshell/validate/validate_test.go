package validate

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/fullsend-ai/agent-sandbox/openshell"
)

// trap in a table's severity column means a warning marked Trap: OpenShell
// loads the policy, but it does not do what it says.
const trap openshell.Severity = "trap"

// matchesSeverity reports whether d has the severity a table expects.
func matchesSeverity(d openshell.Diagnostic, want openshell.Severity) bool {
	if want == trap {
		return d.Severity == openshell.SeverityWarning && d.Trap
	}
	return d.Severity == want && !d.Trap
}

// invalidCases lists one fixture per rule under testdata/invalid:
// the target version, and the code, severity, line and message the validator
// must report for it.
var invalidCases = []struct {
	name     string
	version  string
	code     string
	severity openshell.Severity
	line     int
	message  string
}{
	{"syntax_error", "v0.0.111", "OSP001", openshell.SeverityError, 2, "invalid YAML"},
	{"empty_document", "v0.0.111", "OSP001", openshell.SeverityError, 1, "policy is empty"},
	{"two_documents", "v0.0.111", "OSP001", openshell.SeverityError, 19, "more than one YAML document"},
	{"not_a_mapping", "v0.0.111", "OSP003", openshell.SeverityError, 1, "policy must be a YAML mapping"},
	{"unknown_field", "v0.0.111", "OSP002", openshell.SeverityError, 14, "unknown field \"hosts\" in endpoint"},
	{"unknown_top_level", "v0.0.111", "OSP002", openshell.SeverityError, 19, "unknown field \"inference\" in policy"},
	{"merge_key", "v0.0.111", "OSP002", openshell.SeverityError, 12, "unknown field \"<<\""},
	{"query_glob_not_string", "v0.0.111", "OSP003", openshell.SeverityError, 17, "glob must be a string, got integer 1"},
	{"host_null_literal", "v0.0.111", "OSP003", openshell.SeverityWarning, 12, "read as the literal string \"null\""},
	{"port_quoted", "v0.0.111", "OSP003", openshell.SeverityError, 13, "port must be an integer, got quoted \"443\""},
	{"port_out_of_range", "v0.0.111", "OSP003", openshell.SeverityError, 13, "between 0 and 65535"},
	{"include_workdir_not_bool", "v0.0.111", "OSP003", openshell.SeverityError, 3, "include_workdir must be a boolean"},
	{"field_too_new_uninspected", "v0.0.83", "OSP004", openshell.SeverityError, 17, "needs OpenShell v0.0.110"},
	{"deny_rules_before_v0_0_30", "v0.0.29", "OSP004", openshell.SeverityError, 17, "needs OpenShell v0.0.30"},
	{"network_middlewares_before_v0_0_86", "v0.0.83", "OSP004", openshell.SeverityError, 19, "needs OpenShell v0.0.86"},
	{"missing_version", "v0.0.111", "OSP005", openshell.SeverityError, 1, "missing required field \"version\""},
	{"missing_allow_wrapper", "v0.0.111", "OSP005", openshell.SeverityError, 17, "missing required field \"allow\" in rule"},
	{"duplicate_key", "v0.0.111", "OSP006", openshell.SeverityError, 14, "duplicate key \"port\""},
	{"duplicate_policy_key", "v0.0.111", "OSP006", trap, 15, "keeps only the last entry; the one at line 9 is silently dropped"},
	{"custom_tag", "v0.0.111", "OSP008", openshell.SeverityError, 12, "custom YAML tag !env"},
	{"version_2", "v0.0.111", "OSP010", trap, 1, "version must be 1"},
	{"run_as_root", "v0.0.111", "OSP011", openshell.SeverityError, 7, "run_as_user \"root\" is root"},
	{"run_as_uid_zero", "v0.0.111", "OSP011", openshell.SeverityError, 7, "run_as_group \"0\" is root"},
	{"run_as_uid_below_1000_v0_0_83", "v0.0.83", "OSP011", openshell.SeverityError, 7, "outside 1000..2000000000"},
	{"run_as_name", "v0.0.111", "OSP011", openshell.SeverityError, 7, "neither \"sandbox\" nor a numeric id"},
	{"landlock_unknown", "v0.0.111", "OSP012", openshell.SeverityWarning, 6, "silently treated as best_effort"},
	{"fs_relative", "v0.0.111", "OSP013", openshell.SeverityError, 5, "path \"tmp\" is not absolute"},
	{"fs_traversal", "v0.0.111", "OSP014", openshell.SeverityError, 4, "has a .. component"},
	{"fs_too_long", "v0.0.111", "OSP015", openshell.SeverityError, 4, "OpenShell allows at most 4096"},
	{"fs_too_many", "v0.0.111", "OSP016", openshell.SeverityError, 3, "lists 259 paths"},
	{"fs_root_writable", "v0.0.111", "OSP017", openshell.SeverityError, 5, "makes the whole filesystem writable"},
	{"process_omitted", "v0.0.111", "OSP018", openshell.SeverityWarning, 1, "process is omitted"},
	{"reserved_provider_key", "v0.0.111", "OSP020", openshell.SeverityError, 9, "reserved prefix"},
	{"no_endpoints", "v0.0.111", "OSP021", trap, 10, "has no endpoints"},
	{"empty_binaries", "v0.0.111", "OSP022", trap, 17, "empty binaries list matches no process"},
	{"binaries_omitted", "v0.0.111", "OSP022", trap, 10, "has no binaries"},
	{"binary_relative", "v0.0.111", "OSP023", trap, 18, "is not absolute"},
	{"host_missing", "v0.0.111", "OSP030", openshell.SeverityError, 12, "no host and no allowed_ips"},
	{"port_missing", "v0.0.111", "OSP031", openshell.SeverityError, 12, "no port or ports"},
	{"port_zero_in_ports", "v0.0.111", "OSP032", openshell.SeverityError, 13, "port 0 is not a destination port"},
	{"port_and_ports", "v0.0.111", "OSP033", trap, 14, "mutually exclusive"},
	{"host_star", "v0.0.111", "OSP035", openshell.SeverityError, 12, "would match every host"},
	{"host_partial_double_star", "v0.0.111", "OSP035", openshell.SeverityError, 12, "must be the entire first label"},
	{"host_middle_wildcard_v0_0_83", "v0.0.83", "OSP035", openshell.SeverityError, 12, "later label"},
	{"host_later_label_partial", "v0.0.111", "OSP035", openshell.SeverityError, 12, "later label"},
	{"host_tld_wildcard", "v0.0.111", "OSP036", openshell.SeverityError, 12, "covers a top-level domain"},
	{"host_trailing_dot", "v0.0.111", "OSP037", trap, 12, "ends with a dot"},
	{"host_url", "v0.0.111", "OSP038", trap, 12, "includes a URL scheme"},
	{"host_with_port", "v0.0.111", "OSP038", trap, 12, "includes a port"},
	{"protocol_unknown", "v0.0.111", "OSP040", openshell.SeverityError, 14, "unknown protocol \"https\""},
	{"protocol_uppercase", "v0.0.111", "OSP040", trap, 14, "protocol \"REST\" is not lower case"},
	{"protocol_tcp_v0_0_83", "v0.0.83", "OSP040", openshell.SeverityError, 14, "needs OpenShell v0.0.111"},
	{"protocol_mcp_before_v0_0_72", "v0.0.53", "OSP040", openshell.SeverityError, 14, "needs OpenShell v0.0.72"},
	{"enforcement_omitted", "v0.0.111", "OSP041", trap, 12, "enforcement is omitted, which means audit"},
	{"enforcement_typo", "v0.0.111", "OSP041", trap, 15, "silently treated as audit"},
	{"enforcement_audit", "v0.0.111", "OSP041", openshell.SeverityWarning, 15, "logs rule violations but allows them"},
	{"access_unknown", "v0.0.111", "OSP042", trap, 16, "unknown access preset \"readonly\""},
	{"access_and_rules", "v0.0.111", "OSP043", openshell.SeverityError, 17, "mutually exclusive"},
	{"access_on_mcp", "v0.0.111", "OSP044", openshell.SeverityError, 16, "protocol mcp does not support access presets"},
	{"access_on_json_rpc", "v0.0.111", "OSP044", openshell.SeverityError, 16, "protocol json-rpc does not support access presets"},
	{"sql_enforce", "v0.0.111", "OSP045", openshell.SeverityError, 15, "protocol sql cannot be enforced"},
	{"tcp_with_access", "v0.0.111", "OSP046", openshell.SeverityError, 16, "protocol tcp does not support L7-only fields: access, enforcement"},
	{"tcp_ip_literal", "v0.0.111", "OSP047", openshell.SeverityError, 12, "must use a DNS hostname, not an IP literal"},
	{"access_without_protocol", "v0.0.111", "OSP048", trap, 14, "grants full L4 access"},
	{"rules_without_protocol", "v0.0.111", "OSP048", trap, 14, "grants full L4 access"},
	{"deny_rules_without_protocol", "v0.0.111", "OSP048", openshell.SeverityError, 14, "deny_rules require a protocol"},
	{"protocol_without_allow_set", "v0.0.111", "OSP049", openshell.SeverityError, 12, "requires rules or access"},
	{"tls_terminate", "v0.0.111", "OSP050", openshell.SeverityWarning, 17, "deprecated and ignored"},
	{"tls_unknown", "v0.0.111", "OSP050", trap, 17, "unknown tls value \"strict\""},
	{"tls_skip_l7_443", "v0.0.111", "OSP051", openshell.SeverityWarning, 17, "cannot see encrypted traffic"},
	{"rules_empty", "v0.0.111", "OSP052", openshell.SeverityWarning, 16, "same as omitting rules"},
	{"rule_denies_all", "v0.0.111", "OSP053", openshell.SeverityError, 17, "would deny all traffic"},
	{"rule_unknown_method", "v0.0.111", "OSP054", openshell.SeverityWarning, 17, "unknown rest method \"FETCH\""},
	{"rule_path_relative", "v0.0.111", "OSP055", trap, 17, "never matches a request"},
	{"rule_glob_unbalanced", "v0.0.111", "OSP056", openshell.SeverityWarning, 17, "unbalanced brackets"},
	{"query_any_empty", "v0.0.111", "OSP057", openshell.SeverityError, 20, "any: [] matches nothing"},
	{"query_glob_key", "v0.0.111", "OSP002", openshell.SeverityError, 20, "unknown matcher key \"glob\""},
	{"sql_command_on_rest", "v0.0.111", "OSP058", openshell.SeverityWarning, 17, "command is for protocol sql"},
	{"credential_signing_unknown", "v0.0.111", "OSP059", openshell.SeverityError, 17, "unknown credential_signing \"sigv5\""},
	{"allowed_ips_invalid", "v0.0.111", "OSP060", trap, 17, "is not an IP address or CIDR"},
	{"allowed_ips_placeholder", "v0.0.111", "OSP060", trap, 17, "is not an IP address or CIDR"},
	{"allowed_ips_loopback", "v0.0.111", "OSP061", trap, 17, "overlaps an always-blocked range"},
	{"allowed_ips_metadata", "v0.0.111", "OSP061", trap, 17, "overlaps an always-blocked range"},
	{"allowed_ips_everything", "v0.0.111", "OSP061", trap, 17, "overlaps an always-blocked range"},
	{"allowed_ips_broad", "v0.0.111", "OSP062", openshell.SeverityWarning, 17, "broader than /16"},
	{"host_metadata_ip", "v0.0.111", "OSP063", trap, 12, "always-blocked address"},
	{"host_localhost", "v0.0.111", "OSP063", trap, 12, "resolves to loopback"},
	{"control_plane_port", "v0.0.111", "OSP064", trap, 13, "blocked control-plane port"},
	{"internal_host_before_v0_0_53", "v0.0.52", "OSP065", openshell.SeverityWarning, 12, "looks internal"},
	{"ambiguous_enforcement", "v0.0.111", "OSP070", openshell.SeverityError, 21, "conflicting settings: enforcement enforce vs audit"},
	// ** inside a host spans labels in OpenShell's ambiguity check
	// (ambiguity.rs:450-470,570-616 @ v0.0.111); the label rule missed it.
	{"ambiguous_inner_doublestar", "v0.0.111", "OSP070", openshell.SeverityError, 21, "conflicting settings: enforcement enforce vs audit"},
	{"ambiguous_tcp_vs_rest", "v0.0.111", "OSP070", openshell.SeverityError, 21, "explicit tcp false vs true"},
	{"process_empty", "v0.0.111", "OSP018", openshell.SeverityWarning, 7, "sets neither run_as_user nor run_as_group"},
	{"binary_harness", "v0.0.111", "OSP058", openshell.SeverityWarning, 19, "harness is deprecated and ignored"},
	{"port_and_ports_silent_drop", "v0.0.111", "OSP033", trap, 14, "silently drops port"},
	{"host_wildcard_tld_label", "v0.0.111", "OSP036", trap, 12, "wildcard in the top-level label"},
	{"ambiguous_mcp_options", "v0.0.111", "OSP070", openshell.SeverityError, 15, "mcp.strict_tool_names=true vs max_body_bytes=65536 mcp.strict_tool_names=false"},
	{"rule_dead", "v0.0.111", "OSP053", openshell.SeverityWarning, 18, "rule has no allow condition and matches nothing"},
	{"host_ip_outside_allowed_ips", "v0.0.111", "OSP066", trap, 12, "outside the endpoint's allowed_ips"},
	{"endpoint_path_relative", "v0.0.111", "OSP055", openshell.SeverityError, 17, "endpoint path must start with / or be **"},
}

func TestValidateInvalidFixtures(t *testing.T) {
	seen := map[string]bool{}
	for _, tc := range invalidCases {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join("testdata", "invalid", tc.name+".yaml")
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			seen[tc.name+".yaml"] = true
			diags := File(file, data, tc.version)
			for _, d := range diags {
				if d.Code == tc.code && d.Line == tc.line && matchesSeverity(d, tc.severity) && strings.Contains(d.Message, tc.message) {
					if d.File != file || d.Column < 1 {
						t.Errorf("diagnostic has file %q column %d", d.File, d.Column)
					}
					return
				}
			}
			t.Errorf("want %s %s at line %d containing %q; got:\n%s", tc.severity, tc.code, tc.line, tc.message, render(diags))
		})
	}
	entries, err := os.ReadDir(filepath.Join("testdata", "invalid"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !seen[e.Name()] {
			t.Errorf("fixture %s has no table entry", e.Name())
		}
	}
}

func render(diags []openshell.Diagnostic) string {
	var b strings.Builder
	for _, d := range diags {
		b.WriteString("  " + d.String() + "\n")
	}
	return b.String()
}

func TestValidateValidFixtures(t *testing.T) {
	for _, version := range openshell.SupportedVersions() {
		t.Run(version, func(t *testing.T) {
			file := filepath.Join("testdata", "valid", version+".yaml")
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			if diags := File(file, data, version); len(diags) != 0 {
				t.Errorf("valid policy for %s got diagnostics:\n%s", version, render(diags))
			}
		})
	}
}

// TestValidateVersionGates checks that the same document is accepted or
// rejected depending on the target release.
func TestValidateVersionGates(t *testing.T) {
	newest, err := os.ReadFile(filepath.Join("testdata", "valid", "v0.0.111.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		data    []byte
		version string
		codes   []string // error codes expected; none means accepted
	}{
		{"v0.0.111 policy on v0.0.111", newest, "v0.0.111", nil},
		{"v0.0.111 policy on v0.0.83", newest, "v0.0.83", []string{CodeProcessIdentity, CodeFieldTooNew, CodeProtocol, CodeHostWildcard}},
		{"tcp on v0.0.111", tcpPolicy, "v0.0.111", nil},
		{"tcp on v0.0.110", tcpPolicy, "v0.0.110", []string{CodeProtocol}},
		{"tcp on v0.0.83", tcpPolicy, "0.0.83", []string{CodeProtocol}},
		{"uid 500 on v0.0.110", withUser("500"), "v0.0.110", nil},
		{"unquoted uid is read as a string", bytes.Replace(restPolicy, []byte("run_as_user: sandbox"), []byte("run_as_user: 1000"), 1), "v0.0.111", nil},
		{"uid 500 on v0.0.109", withUser("500"), "v0.0.109", []string{CodeProcessIdentity}},
		{"uid 1000 on v0.0.76", withUser("1000"), "v0.0.76", nil},
		{"uid 1000 on v0.0.75", withUser("1000"), "v0.0.75", []string{CodeProcessIdentity}},
		{"uid 4294967295 on v0.0.111", withUser("4294967295"), "v0.0.111", []string{CodeProcessIdentity}},
		{"unsupported old version", tcpPolicy, "v0.0.21", []string{openshell.CodeVersionUnsupported}},
		{"unsupported new version", tcpPolicy, "v0.1.0", []string{openshell.CodeVersionUnsupported}},
		{"not a version", tcpPolicy, "latest", []string{openshell.CodeVersionUnsupported}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			diags := File("p.yaml", tc.data, tc.version)
			got := map[string]bool{}
			for _, d := range diags {
				if d.Severity == openshell.SeverityError {
					got[d.Code] = true
				}
			}
			if len(tc.codes) == 0 && openshell.HasErrors(diags) {
				t.Fatalf("want accepted, got:\n%s", render(diags))
			}
			for _, code := range tc.codes {
				if !got[code] {
					t.Errorf("want error %s, got:\n%s", code, render(diags))
				}
			}
		})
	}
}

var tcpPolicy = []byte(`version: 1
filesystem_policy: {include_workdir: true, read_only: [/usr], read_write: [/tmp]}
landlock: {compatibility: hard_requirement}
process: {run_as_user: sandbox, run_as_group: sandbox}
network_policies:
  db:
    endpoints: [{host: db.example.com, port: 5432, protocol: tcp}]
    binaries: [{path: /usr/bin/psql}]
`)

var restPolicy = bytes.Replace(tcpPolicy, []byte("protocol: tcp"), []byte("protocol: rest, enforcement: enforce, access: read-only"), 1)

func withUser(uid string) []byte {
	return bytes.Replace(restPolicy, []byte("run_as_user: sandbox"), []byte(fmt.Sprintf("run_as_user: %q", uid)), 1)
}

func TestValidateTooLarge(t *testing.T) {
	var b bytes.Buffer
	b.WriteString("version: 1\nfilesystem_policy:\n  read_only:\n")
	for b.Len() <= openshell.MaxPolicyBytes {
		b.WriteString("    - /opt/some/rather/long/path/to/make/the/policy/large\n")
	}
	diags := File("big.yaml", b.Bytes(), "")
	if len(diags) != 1 || diags[0].Code != CodeTooLarge || diags[0].Line != 1 {
		t.Fatalf("want one %s, got:\n%s", CodeTooLarge, render(diags))
	}
}

func TestValidateAliasBomb(t *testing.T) {
	var b strings.Builder
	b.WriteString("version: 1\nx0: &a0 [/a, /a, /a, /a, /a, /a, /a, /a, /a, /a]\n")
	for i := 1; i < 9; i++ {
		fmt.Fprintf(&b, "x%d: &a%d [*a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d]\n", i, i, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1)
	}
	b.WriteString("filesystem_policy: {read_only: *a8}\n")
	diags := File("bomb.yaml", []byte(b.String()), "")
	if !openshell.HasErrors(diags) {
		t.Fatal("alias bomb accepted")
	}
}

func TestValidatePolicyModel(t *testing.T) {
	p := &openshell.Policy{
		Version:          1,
		FilesystemPolicy: &openshell.FilesystemPolicy{IncludeWorkdir: true, ReadOnly: []string{"/usr"}, ReadWrite: []string{"/tmp"}},
		Landlock:         &openshell.Landlock{Compatibility: openshell.LandlockBestEffort},
		Process:          &openshell.Process{RunAsUser: "sandbox", RunAsGroup: "sandbox"},
		NetworkPolicies: map[string]openshell.NetworkPolicy{
			"gh": {Name: "gh",
				Endpoints: []openshell.Endpoint{{Host: "api.github.com", Port: 443, Protocol: openshell.ProtocolREST, Enforcement: openshell.EnforcementEnforce,
					Rules: []openshell.Rule{{Allow: openshell.Match{Method: "GET", Path: "/repos/**", Query: map[string]openshell.QueryMatch{"state": {Glob: "open"}, "l": {Any: []string{"a", "b"}}}}}}}},
				Binaries: []openshell.Binary{{Path: "/usr/bin/gh"}}},
		},
	}
	if diags := Policy(p, ""); len(diags) != 0 {
		t.Fatalf("model policy got diagnostics:\n%s", render(diags))
	}
	p.NetworkPolicies["gh"].Endpoints[0].Access = "read-only"
	diags := Policy(p, "v0.0.83")
	if !openshell.HasErrors(diags) || diags[0].File != "<policy>" || diags[0].Code != CodeAccessAndRules {
		t.Fatalf("want %s, got:\n%s", CodeAccessAndRules, render(diags))
	}
	if err := openshell.DiagnosticsError(diags); err == nil {
		t.Fatal("DiagnosticsError returned nil for errors")
	}
}

// TestCodesDocumented keeps docs/policy-validate.md listing every code.
func TestCodesDocumented(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "policy-validate.md"))
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("codes.go")
	if err != nil {
		t.Fatal(err)
	}
	codes := regexp.MustCompile(`"(OSP\d{3})"`).FindAllStringSubmatch(string(src), -1)
	if len(codes) < 50 {
		t.Fatalf("found only %d codes in codes.go", len(codes))
	}
	seen := map[string]bool{}
	for _, m := range codes {
		if seen[m[1]] {
			t.Errorf("code %s defined twice", m[1])
		}
		seen[m[1]] = true
		if !strings.Contains(string(doc), "| "+m[1]+" |") {
			t.Errorf("code %s is not in the docs/policy-validate.md table", m[1])
		}
	}
}

// TestValidateSyntaxErrorLines pins the lines reported for YAML errors:
// yaml.v3 prints 0-based lines for parser errors and 1-based for scanner
// errors; Validate reports 1-based lines for both.
func TestValidateSyntaxErrorLines(t *testing.T) {
	tests := []struct {
		src  string
		line int
	}{
		{"version: 1\nnetwork_policies: [\n  x: y\n", 2},           // parser: flow sequence opened on line 2
		{"version: 1\nlandlock:\n  a: b\n c: d\n", 4},              // parser: block mapping key expected
		{"version: 1\nx: \"abc\n", 2},                              // scanner: unterminated quote
		{"version: 1\nlandlock:\n\t a: b\n", 3},                    // scanner: tab
		{"version: 1\nlandlock: {a: b\nprocess: x\n", 2},           // parser: flow mapping opened on line 2
		{"version: 1\nfilesystem_policy:\n  read_only: a: b\n", 3}, // scanner: mapping value
	}
	for _, tc := range tests {
		diags := File("s.yaml", []byte(tc.src), "")
		if len(diags) != 1 || diags[0].Code != CodeSyntax || diags[0].Line != tc.line {
			t.Errorf("%q: want %s at line %d, got:\n%s", tc.src, CodeSyntax, tc.line, render(diags))
		}
	}
}

func TestPathsCompete(t *testing.T) {
	tests := []struct {
		a, b string
		want bool
	}{
		{"", "", true},
		{"/graphql", "/graphql", true},
		{"", "/graphql", false},       // the more specific path wins
		{"/api/*", "/api/v1", false},  // different specificity
		{"/api/*", "/*/v1/", true},    // same specificity, both match /api/v1/
		{"/api/*", "/web/*", false},   // same specificity, disjoint
		{"/a/[xy]z", "/a/yz", false},  // specificity 8 vs 5: brackets count
		{"/a/[xy]", "/a/[!x]", true},  // classes assumed to share a byte
		{"/a/[xy]b", "/a/zzb", false}, // specificity 8 vs 6
		{"/a?c", "/abc", true},
		{"/a?c", "/abd", false},
		{"/ab/***", "/abc", true}, // malformed: conservative
		{"/a*b", "/ac", false},    // the star cannot supply the missing b
		{"/*a*", "/*b*", true},    // both match /ab
		{"/v[12]/*", "/v1/abc*", true},
		{"/v[1-3]/*", "/v2/abcd*", true},
		{"/v[1-3]/*", "/v7/abcd*", false},
	}
	for _, tc := range tests {
		if got := pathsCompete(tc.a, tc.b); got != tc.want {
			t.Errorf("pathsCompete(%q, %q) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
		if got := pathsCompete(tc.b, tc.a); got != tc.want {
			t.Errorf("pathsCompete(%q, %q) = %v, want %v", tc.b, tc.a, got, tc.want)
		}
	}
}

// TestValidateControlPlanePorts: a control-plane port is a trap where the
// proxy's destination check always refuses it, and a plain warning where
// a connection can take the default mode, which checks no port
// (reject_internal_resolved_addrs, proxy.rs:2676 @ v0.0.83, :3864 @
// v0.0.111; ../decide/ssrf.go's destination).
func TestValidateControlPlanePorts(t *testing.T) {
	tests := []struct {
		name, endpoint, version string
		trap                    bool
	}{
		{"exact host", `{host: db.example.com, port: 6443, protocol: tcp}`, "v0.0.111", true},
		{"exact host before v0.0.53", `{host: db.example.com, port: 6443}`, "v0.0.52", false},
		{"wildcard host", `{host: "*.example.com", port: 6443, protocol: tcp}`, "v0.0.111", false},
		{"wildcard host with allowed_ips", `{host: "*.example.com", port: 10250, protocol: tcp, allowed_ips: [10.0.0.0/8]}`, "v0.0.111", true},
		{"IP literal", `{host: 203.0.113.7, port: 2379, protocol: tcp}`, "v0.0.111", true},
		{"host-gateway alias", `{host: host.openshell.internal, port: 10255, protocol: tcp}`, "v0.0.111", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			data := bytes.Replace(tcpPolicy, []byte("{host: db.example.com, port: 5432, protocol: tcp}"), []byte(tc.endpoint), 1)
			if tc.version == "v0.0.52" {
				data = bytes.Replace(data, []byte("hard_requirement"), []byte("best_effort"), 1)
			}
			var found *openshell.Diagnostic
			diags := File("p.yaml", data, tc.version)
			for i := range diags {
				if diags[i].Code == CodeControlPlanePort {
					found = &diags[i]
				}
			}
			if found == nil {
				t.Fatalf("no %s:\n%s", CodeControlPlanePort, render(diags))
			}
			if found.Severity != openshell.SeverityWarning || found.Trap != tc.trap {
				t.Errorf("severity %v trap %v, want a warning with trap %v:\n%s", found.Severity, found.Trap, tc.trap, render(diags))
			}
		})
	}
}

// TestValidateConcurrent runs Validate from many goroutines (under -race in
// CI): the compiler validates agents in parallel.
func TestValidateConcurrent(t *testing.T) {
	data := largePolicy(5)
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, v := range []string{"v0.0.83", "v0.0.111"} {
				if diags := File("p.yaml", data, v); v == "v0.0.111" && len(diags) != 0 {
					t.Errorf("%s: %s", v, render(diags))
				}
			}
		}()
	}
	wg.Wait()
}
