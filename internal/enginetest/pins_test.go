package enginetest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/fullsend-ai/agent-sandbox/internal/testtool"
)

const containerfile = "../../Containerfile"

var (
	zeroPin = regexp.MustCompile(`(^|[^0-9a-f])0{64}([^0-9a-f]|$)`)
	pinLine = regexp.MustCompile(`^(FROM\s+\S+@sha256:|ARG\s+\w+_SHA256_\w+=|ARG\s+\w+_IMAGE=)`)
)

// TestContainerfileHasNoZeroPins fails on any all-zero pin: a placeholder
// is never a pin. UNRESOLVED values (no stored public source) are logged;
// the Containerfile refuses to build with them.
func TestContainerfileHasNoZeroPins(t *testing.T) {
	data, err := os.ReadFile(containerfile)
	if err != nil {
		t.Fatal(err)
	}
	pins := 0
	for i, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		if zeroPin.MatchString(line) {
			t.Errorf("Containerfile:%d: all-zero pin (a placeholder, not a real value): %s", i+1, line)
		}
		if pinLine.MatchString(line) {
			pins++
			if strings.Contains(line, "UNRESOLVED") {
				t.Logf("Containerfile:%d: UNRESOLVED (the build stops there): %s", i+1, line)
			}
		}
	}
	if pins < 10 {
		t.Errorf("found %d pins in the Containerfile, want the base digest and the Go, Node, gh, yq and OpenShell checksums", pins)
	}
}

func runUpdatePins(t *testing.T, cf string, args ...string) (string, error) {
	t.Helper()
	testtool.Find(t, "bash", ".ci/install.d/00-apt.sh bash")
	cmd := exec.Command("bash", append([]string{"../../scripts/update-pins.sh"}, args...)...)
	cmd.Env = append(os.Environ(), "PINS_CONTAINERFILE="+cf)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

// TestUpdatePinsCheck runs the offline check on the real Containerfile:
// format, citations and the signed Node checksum file.
func TestUpdatePinsCheck(t *testing.T) {
	abs, err := filepath.Abs(containerfile)
	if err != nil {
		t.Fatal(err)
	}
	out, err := runUpdatePins(t, abs, "--check")
	if err != nil {
		t.Fatalf("scripts/update-pins.sh --check: %v\n%s", err, out)
	}
	if !strings.Contains(out, " 0 errors") {
		t.Errorf("--check output has no error count:\n%s", out)
	}
	t.Log(strings.TrimSpace(out))
}

// TestUpdatePinsCheckRejects feeds the check broken copies of the
// Containerfile and expects each to fail with a message naming the problem.
func TestUpdatePinsCheckRejects(t *testing.T) {
	orig, err := os.ReadFile(containerfile)
	if err != nil {
		t.Fatal(err)
	}
	zeros := strings.Repeat("0", 64)
	tests := []struct {
		name    string
		edit    func(string) string
		want    string
		strict  bool
		wantErr bool
	}{
		{"zero checksum", func(s string) string {
			return regexp.MustCompile(`(?m)^ARG GO_SHA256_AMD64=.*$`).ReplaceAllString(s, "ARG GO_SHA256_AMD64="+zeros)
		}, "GO_SHA256_AMD64 is an all-zero placeholder", false, true},
		{"zero base digest", func(s string) string {
			return regexp.MustCompile(`(?m)^(FROM \S+@sha256:)[0-9a-f]{64}`).ReplaceAllString(s, "${1}"+zeros)
		}, "FROM is an all-zero placeholder", false, true},
		{"short checksum", func(s string) string {
			return regexp.MustCompile(`(?m)^ARG NODE_SHA256_ARM64=.*$`).ReplaceAllString(s, "ARG NODE_SHA256_ARM64=abc123")
		}, "NODE_SHA256_ARM64=abc123 is not 64 lowercase hex", false, true},
		{"missing citation", func(s string) string {
			return regexp.MustCompile(`(?m)^# source: .*\nARG YQ_SHA256_AMD64=`).ReplaceAllString(s, "# yq\nARG YQ_SHA256_AMD64=")
		}, "YQ_SHA256_AMD64 has no '# source: ...' citation", false, true},
		{"node pin not in the signed file", func(s string) string {
			return regexp.MustCompile(`(?m)^ARG NODE_SHA256_AMD64=.*$`).ReplaceAllString(s, "ARG NODE_SHA256_AMD64="+strings.Repeat("ab", 32))
		}, "does not list", false, true},
		{"strict refuses UNRESOLVED", func(s string) string { return s }, "are UNRESOLVED", true, strings.Contains(string(orig), "UNRESOLVED")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			edited := tc.edit(string(orig))
			if edited == string(orig) && tc.name != "strict refuses UNRESOLVED" {
				t.Fatal("the edit did not change the Containerfile; fix the test's pattern")
			}
			cf := filepath.Join(t.TempDir(), "Containerfile")
			if err := os.WriteFile(cf, []byte(edited), 0o644); err != nil {
				t.Fatal(err)
			}
			args := []string{"--check"}
			if tc.strict {
				args = append(args, "--strict")
			}
			out, err := runUpdatePins(t, cf, args...)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v\n%s", err, tc.wantErr, out)
			}
			if tc.wantErr && !strings.Contains(out, tc.want) {
				t.Errorf("output lacks %q:\n%s", tc.want, out)
			}
		})
	}
}
