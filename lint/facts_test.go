package lint

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/fullsend-ai/agent-sandbox/openshell"
)

// TestHostAddr pins every spelling of an address the red-team review used:
// inet_aton forms (decimal, octal, hex, short), host "0", bracketed IPv6
// and IPv6 forms embedding IPv4 (mapped, compatible, NAT64, 6to4).
func TestHostAddr(t *testing.T) {
	for _, tc := range []struct{ host, want string }{
		{"127.0.0.1", "127.0.0.1"},
		{"2130706433", "127.0.0.1"},
		{"0177.0.0.1", "127.0.0.1"},
		{"0x7f.1", "127.0.0.1"},
		{"0X7F.0.0.1", "127.0.0.1"},
		{"127.1", "127.0.0.1"},
		{"127.0.1", "127.0.0.1"},
		{"0", "0.0.0.0"},
		{"0x", "0.0.0.0"},
		{"2852039166", "169.254.169.254"},
		{"0xa9fea9fe", "169.254.169.254"},
		{"0251.0376.0251.0376", "169.254.169.254"},
		{"0xa9.0xfe.0xa9fe", "169.254.169.254"},
		{"169.254.169.254.", "169.254.169.254"},
		{"[::1]", "::1"},
		{"::", "::"},
		{"::ffff:169.254.169.254", "169.254.169.254"},
		{"[::ffff:a9fe:a9fe]", "169.254.169.254"},
		{"64:ff9b::a9fe:a9fe", "169.254.169.254"},
		{"[64:ff9b::169.254.169.254]", "169.254.169.254"},
		{"64:ff9b:1::a9fe:a9fe", "169.254.169.254"},
		{"2002:7f00:1::", "127.0.0.1"},
		{"::127.0.0.1", "127.0.0.1"},
		{"fe80::1%eth0", "fe80::1"},
		{"fd00:ec2::254", "fd00:ec2::254"},
	} {
		got, ok := HostAddr(tc.host)
		if !ok || got.String() != tc.want {
			t.Errorf("HostAddr(%q) = %v, %v; want %s", tc.host, got, ok, tc.want)
		}
	}
	for _, host := range []string{"api.github.com", "", "256.1.1.1", "1.2.3.4.5", "0xa9fe.0xa9fe", "08.0.0.1", "*.1.2.3", "127.0.0.1.example.com", "{{HOST_IP}}"} {
		if a, ok := HostAddr(host); ok {
			t.Errorf("HostAddr(%q) = %v, want no address", host, a)
		}
	}
}

// TestMultiTenantSuffix checks the public suffix list's private section
// (golang.org/x/net/publicsuffix) finds the multi-tenant wildcards, and that
// exact tenant names, ICANN suffixes and unlisted names are left alone.
func TestMultiTenantSuffix(t *testing.T) {
	for _, tc := range []struct{ host, want string }{
		{"*.s3.amazonaws.com", "s3.amazonaws.com"},
		{"**.workers.dev", "workers.dev"},
		{"*.ngrok-free.app", "ngrok-free.app"},
		{"*.github.io", "github.io"},
		{"*.GitHub.IO.", "github.io"},
		{"api-*.herokuapp.com", "herokuapp.com"},
		{"*.blob.core.windows.net", "blob.core.windows.net"},
		{"*.vercel.app", "vercel.app"},
		{"*.pages.dev", "pages.dev"},
		{"myorg.github.io", ""},
		{"*.myorg.github.io", ""},
		{"*.example.com", ""},
		{"*.co.uk", ""},
		{"api.github.com", ""},
		{"*", ""},
		{"*.internal-unlisted", ""},
	} {
		if got := MultiTenantSuffix(tc.host); got != tc.want {
			t.Errorf("MultiTenantSuffix(%q) = %q, want %q", tc.host, got, tc.want)
		}
	}
}

// TestFactsFindings runs the engine on the red-team spellings end to end:
// the facts it computes reach the rules.
func TestFactsFindings(t *testing.T) {
	e := testEngine(t)
	for _, tc := range []struct {
		host   string
		access string
		want   []string
	}{
		{"2130706433", "read-only", []string{"FS009"}},
		{"0x7f.1", "read-only", []string{"FS009"}},
		{"0", "read-only", []string{"FS009"}},
		{"[64:ff9b::a9fe:a9fe]", "read-only", []string{"FS009"}},
		{"168.63.129.16", "read-only", []string{"FS009"}},
		{"metadata.goog", "read-only", []string{"FS009"}},
		{"134744072", "read-only", nil},
		{"*.s3.amazonaws.com", "read-write", []string{"FS002", "FS031"}},
		{"*.github.io", "read-only", []string{"FS002", "FS032"}},
		{"myorg.github.io", "read-write", nil},
	} {
		p := &openshell.Policy{Version: 1, NetworkPolicies: map[string]openshell.NetworkPolicy{"p": {
			Name:      "p",
			Endpoints: []openshell.Endpoint{{Host: tc.host, Port: 443, Protocol: "rest", Enforcement: "enforce", Access: tc.access}},
			Binaries:  []openshell.Binary{{Path: "/usr/bin/curl"}},
		}}}
		rep, err := e.Lint(context.Background(), []Input{{File: "p.yaml", Policy: p}})
		if err != nil {
			t.Fatal(err)
		}
		if got := ids(rep.Findings); !slices.Equal(got, tc.want) {
			t.Errorf("%s (%s): findings %v, want %v", tc.host, tc.access, got, tc.want)
		}
	}
}

// TestWriteContextFilesCarryFacts checks the --write-context data files hold
// the facts, so conftest and opa run the facts-only checks too.
func TestWriteContextFilesCarryFacts(t *testing.T) {
	in, _ := corpusInput(t, "testdata/facts/multi-tenant-read.yaml")
	in.Name = "pages"
	dir := t.TempDir()
	files, err := WriteContextFiles(dir, []Input{in})
	if err != nil || len(files) != 1 {
		t.Fatalf("WriteContextFiles: %v %v", files, err)
	}
	raw, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Fullsend struct {
			Facts struct {
				Hosts map[string]struct {
					MultiTenantSuffix string `json:"multi_tenant_suffix"`
				} `json:"hosts"`
			} `json:"facts"`
		} `json:"fullsend"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	if got := doc.Fullsend.Facts.Hosts["*.github.io"].MultiTenantSuffix; got != "github.io" {
		t.Errorf("facts for *.github.io: suffix %q, want github.io\n%s", got, raw)
	}
}

// TestWriteContextFilesCreatesDir: `policy lint --write-context ctx/` into
// a directory that does not exist yet used to fail on the temp file.
func TestWriteContextFilesCreatesDir(t *testing.T) {
	in, _ := corpusInput(t, "testdata/facts/multi-tenant-read.yaml")
	in.Name = "pages"
	dir := filepath.Join(t.TempDir(), "ctx", "nested")
	if files, err := WriteContextFiles(dir, []Input{in}); err != nil || len(files) != 1 {
		t.Fatalf("WriteContextFiles into a missing dir: %v %v", files, err)
	}
}
