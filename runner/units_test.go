package runner

import (
	"errors"
	"strings"
	"testing"
)

func TestSandboxName(t *testing.T) {
	seen := map[string]bool{}
	for _, agent := range []string{"triage", "completeness-assessor", "Dup--Detector", "", "___", "a", "x-y-z-long-name-here", "日本語"} {
		for i := 0; i < 20; i++ {
			n := SandboxName(agent)
			if !ValidSandboxName(n) {
				t.Fatalf("SandboxName(%q) = %q breaks OpenShell's name rules", agent, n)
			}
			if seen[n] && agent == "triage" {
				t.Fatalf("duplicate name %q", n)
			}
			seen[n] = true
		}
	}
	for _, bad := range []string{"fs-triage-abcdef1234", "Fs-x", "fs--x", "-fs", "fs-"} {
		if ValidSandboxName(bad) {
			t.Errorf("ValidSandboxName(%q) = true", bad)
		}
	}
}

func TestParseVersion(t *testing.T) {
	for in, want := range map[string]string{
		"openshell 0.0.111\n":          "v0.0.111",
		"openshell v0.0.83":            "v0.0.83",
		"openshell 0.0.4-dev.6+g2bf99": "v0.0.4-dev.6+g2bf99",
	} {
		if got, err := ParseVersion(in); err != nil || got != want {
			t.Errorf("ParseVersion(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ParseVersion("openshell"); err == nil {
		t.Error("no version: want an error")
	}
}

func TestParseStatusText(t *testing.T) {
	for in, want := range map[string]string{
		"Server Status\n\n  \x1b[2mStatus:\x1b[0m \x1b[32mConnected\x1b[0m\n": "connected",
		"  Status: Disconnected\n":         "disconnected",
		"  Status: Connected (HTTP)\n":     "connected_http",
		"  Status: No gateway configured.": "not_configured",
		"garbage":                          "unknown",
	} {
		if got := parseStatusText(in); got != want {
			t.Errorf("parseStatusText(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParseProvider(t *testing.T) {
	p, err := ParseProvider("anthropic=anthropic:ANTHROPIC_API_KEY,EXTRA")
	if err != nil || p.Name != "anthropic" || p.Type != "anthropic" || len(p.CredentialEnv) != 2 {
		t.Fatalf("%+v %v", p, err)
	}
	if p, err := ParseProvider("vertex"); err != nil || p.Type != "" {
		t.Fatalf("%+v %v", p, err)
	}
	for _, bad := range []string{"Bad Name", "x=", "x=t:", "x=t:1BAD", "x=t:A=B", "x=a b:A", "x=-t:A", "x=T:A"} {
		if _, err := ParseProvider(bad); err == nil {
			t.Errorf("ParseProvider(%q): want an error", bad)
		}
	}
}

func TestExitCode(t *testing.T) {
	for err, want := range map[error]int{
		nil:                                     0,
		&AgentExitError{Code: 3}:                3,
		ErrPlaceholder:                          ExitPolicy,
		errors.Join(ErrSandbox, ErrInterrupted): ExitInterrupted,
		ErrTimeout:                              ExitTimeout,
		ErrPreflight:                            ExitPreflight,
		errors.New("other"):                     ExitSandbox,
	} {
		if got := ExitCode(err); got != want {
			t.Errorf("ExitCode(%v) = %d, want %d", err, got, want)
		}
	}
}

func FuzzParseEnvFile(f *testing.F) {
	f.Add([]byte("# c\nA=1\n\nB=x y $Z \"q\"\n"))
	f.Add([]byte("=x\n"))
	f.Add([]byte("A=\r\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		kvs, err := ParseEnvFile("fuzz.env", data)
		if err != nil {
			return
		}
		for _, kv := range kvs {
			// What reaches the sandbox file is one line per pair, KEY a name.
			if !envName.MatchString(kv[0]) || strings.ContainsAny(kv[1], "\n\r") {
				t.Fatalf("pair %q from %q", kv, data)
			}
		}
	})
}

func FuzzParseProvider(f *testing.F) {
	f.Add("anthropic=anthropic:ANTHROPIC_API_KEY")
	f.Add("vertex")
	f.Add("x=y:A,B,,C")
	f.Add("x=a b:A")
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParseProvider(s)
		if err != nil {
			return
		}
		// Everything that reaches openshell argv is a plain token.
		for _, tok := range append([]string{p.Name, p.Type}, p.CredentialEnv...) {
			if strings.ContainsAny(tok, " \t\n=") || strings.HasPrefix(tok, "-") {
				t.Fatalf("token %q from %q", tok, s)
			}
		}
	})
}

func FuzzParseVersion(f *testing.F) {
	f.Add("openshell 0.0.111")
	f.Add("openshell 0.0.4-dev.6+g2bf9969")
	f.Fuzz(func(t *testing.T, s string) {
		if v, err := ParseVersion(s); err == nil && !strings.HasPrefix(v, "v") {
			t.Fatalf("%q -> %q", s, v)
		}
	})
}
