package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const header = "# comment\n\n"

func TestParseExceptions(t *testing.T) {
	tests := []struct {
		name, in, wantErr string
		want              int
	}{
		{"empty", header, "", 0},
		{"one", header + "GO-2026-4529 | github.com/sigstore/cosign/v2 | why | checked | when\n", "", 1},
		{"short ID", "GO-2026-1 | a | w | r | x\nGO-2026-1 | b | w | r | x\n", "not a Go vulnerability ID", 0},
		{"same ID two modules", "GO-2026-0001 | a | w | r | x\nGO-2026-0001 | b | w | r | x\n", "", 2},
		{"four fields", "GO-2026-0001 | a | w | r\n", "want 5 fields", 0},
		{"empty field", "GO-2026-0001 | a |   | r | x\n", "every field", 0},
		{"bad ID", "CVE-2026-1 | a | w | r | x\n", "not a Go vulnerability ID", 0},
		{"duplicate", "GO-2026-0001 | a | w | r | x\nGO-2026-0001 | a | w2 | r2 | x2\n", "already listed on line 1", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseExceptions(strings.NewReader(tt.in))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != tt.want {
				t.Fatalf("got %d exceptions, want %d", len(got), tt.want)
			}
		})
	}
}

// stream is a govulncheck -format json stream: one called finding in
// cosign/v2 and in stdlib, plus module- and package-level findings
// (which never count as called).
const stream = `{"config":{"protocol_version":"v1.0.0","go_version":"go1.26.11","db":"file:///db"}}
{"osv":{"id":"GO-2026-4529","summary":"cosign summary"}}
{"osv":{"id":"GO-2026-9999","summary":"stdlib summary"}}
{"osv":{"id":"GO-2026-7777","summary":"only imported"}}
{"finding":{"osv":"GO-2026-4529","trace":[{"module":"github.com/sigstore/cosign/v2","version":"v2.6.5"}]}}
{"finding":{"osv":"GO-2026-4529","trace":[{"module":"github.com/sigstore/cosign/v2","version":"v2.6.5","package":"github.com/sigstore/cosign/v2/pkg/cosign","function":"VerifyImageSignature"},{"module":"example.com/m","package":"example.com/m/sign","function":"CheckSignatures","receiver":"*Entity"}]}}
{"finding":{"osv":"GO-2026-9999","fixed_version":"v1.26.12","trace":[{"module":"stdlib","version":"v1.26.11","package":"crypto/x509","function":"Verify","receiver":"*Certificate"},{"module":"example.com/m","package":"example.com/m","function":"main"}]}}
{"finding":{"osv":"GO-2026-7777","trace":[{"module":"example.com/dep","version":"v1.0.0","package":"example.com/dep/p"}]}}
`

const cosignLine = "GO-2026-4529 | github.com/sigstore/cosign/v2 | no fix in v2 | keyless only | cosign v2 fixed\n"

func TestRun(t *testing.T) {
	tests := []struct {
		name, exceptions string
		want             int
		wantOut, wantErr []string
	}{
		{"all accepted", cosignLine + "GO-2026-9999 | stdlib | w | r | x\n", 0,
			[]string{"2 called vulnerabilities, 2 accepted", "ACCEPTED GO-2026-4529 github.com/sigstore/cosign/v2@v2.6.5: cosign summary", "remove when: cosign v2 fixed"}, nil},
		{"unexpected", cosignLine, 1,
			[]string{"ACCEPTED GO-2026-4529"},
			[]string{"CALLED GO-2026-9999 stdlib@v1.26.11 (fixed in v1.26.12): stdlib summary", "example.com/m.main -> crypto/x509.Certificate.Verify", "1 called vulnerabilities not accepted"}},
		{"stale", cosignLine + "GO-2026-9999 | stdlib | w | r | x\nGO-2026-7777 | example.com/dep | w | r | x\n", 1,
			nil, []string{"STALE", ":5: GO-2026-7777 in example.com/dep is no longer called"}},
		{"wrong module", "GO-2026-4529 | github.com/sigstore/cosign/v3 | w | r | x\nGO-2026-9999 | stdlib | w | r | x\n", 1,
			nil, []string{"CALLED GO-2026-4529 github.com/sigstore/cosign/v2@v2.6.5 (no fixed version)", "STALE", "GO-2026-4529 in github.com/sigstore/cosign/v3 is no longer called"}},
		{"bad file", "GO-2026-4529 | x\n", 2, nil, []string{"want 5 fields"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "exceptions.txt")
			if err := os.WriteFile(path, []byte(header+tt.exceptions), 0o600); err != nil {
				t.Fatal(err)
			}
			var out, errOut bytes.Buffer
			if got := run(path, strings.NewReader(stream), &out, &errOut); got != tt.want {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", got, tt.want, &out, &errOut)
			}
			for _, w := range tt.wantOut {
				if !strings.Contains(out.String(), w) {
					t.Errorf("stdout lacks %q:\n%s", w, &out)
				}
			}
			for _, w := range tt.wantErr {
				if !strings.Contains(errOut.String(), w) {
					t.Errorf("stderr lacks %q:\n%s", w, &errOut)
				}
			}
		})
	}
}

func TestReadScanRejectsOtherInput(t *testing.T) {
	for _, in := range []string{"", "{}\n", "Scanning your code...\n"} {
		if _, err := ReadScan(strings.NewReader(in)); err == nil {
			t.Errorf("ReadScan(%q): no error", in)
		}
	}
}
