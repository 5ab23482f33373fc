package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
)

// helpExample is one command line of a command's --help examples.
type helpExample struct {
	command string // the command path it is listed under
	line    string // the shell line, continuation lines joined
}

// helpExamples returns every example line of every command, in tree order:
// lines ending in `\` joined with the next, comment lines dropped.
func helpExamples(root *cobra.Command) []helpExample {
	var out []helpExample
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		var cur string
		for _, l := range strings.Split(c.Example, "\n") {
			l = strings.TrimSpace(l)
			if cont, ok := strings.CutSuffix(l, "\\"); ok {
				cur += cont + " "
				continue
			}
			cur += l
			if cur != "" && !strings.HasPrefix(cur, "#") {
				out = append(out, helpExample{c.CommandPath(), cur})
			}
			cur = ""
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	return out
}

// exampleNeeds says what an example needs that an offline machine without
// a CI job, an OpenShell gateway or a registry lacks ("" when nothing).
// Such an example still runs: it must get past its flags and arguments (no
// usage error, exit status 2), within a short time.
func exampleNeeds(line string) string {
	registry := strings.Contains(line, "--base ghcr.io") || strings.Contains(line, "--push") ||
		(strings.Contains(line, "ghcr.io/") || strings.Contains(line, "registry.")) && !strings.Contains(line, "--oci-layout")
	switch {
	case registry:
		return "a registry"
	case strings.Contains(line, "--keyless"):
		return "a CI OIDC token"
	case strings.Contains(line, "fullsend run summarizer") || strings.Contains(line, "fullsend doctor") ||
		strings.Contains(line, "entrypoint -- run") || strings.Contains(line, "openshell policy get"):
		return "an OpenShell gateway (fullsend run's own tests use the fake)"
	case strings.Contains(line, "172.17.0.1"):
		return "the Docker bridge address"
	case strings.Contains(line, "fullsend serve ") && !strings.Contains(line, "listen "):
		return "host.docker.internal, the default listen address, which resolves inside a container"
	}
	return ""
}

// examplePlaceholders are the parts of examples a user replaces with their
// own values, and what the test puts there.
var examplePlaceholders = strings.NewReplacer(
	"sha256:...", "sha256:"+strings.Repeat("0", 64),
	"=...", "=example",
)

// exampleTools are the programs besides fullsend some examples use; such an
// example runs only where the tool is installed.
var exampleTools = []string{"cue", "conftest", "openshell", "pass"}

// TestHelpExamplesRun runs every example of every --help with the built
// binary, from a directory outside the checkout where `fullsend init` made
// a project (what a new user has after following the README): examples
// that need nothing else must succeed; the others (exampleNeeds) must at
// least be valid command lines. Examples that pointed at testdata/, at
// paths the user does not have, or at flags that no longer exist failed
// when pasted.
func TestHelpExamplesRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := t.TempDir()
	build := exec.Command("go", "build", "-o", filepath.Join(bin, "fullsend"), ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	world := t.TempDir()
	// PATH: the built fullsend first, then the tools (cue, conftest) this
	// machine has.
	env := []string{"PATH=" + bin + ":" + os.Getenv("PATH"), "HOME=" + world, "TMPDIR=" + os.TempDir(),
		"COSIGN_PASSWORD=example", "SOURCE_DATE_EPOCH=0", "GOFLAGS=", "GOTOOLCHAIN=local"}
	shIn := func(ctx context.Context, dir, line string) (string, int, bool) {
		cmd := exec.CommandContext(ctx, "sh", "-c", line)
		cmd.Dir, cmd.Env = dir, env
		cmd.WaitDelay = time.Second
		out, err := cmd.CombinedOutput()
		return string(out), cmd.ProcessState.ExitCode(), ctx.Err() != nil && err != nil
	}
	sh := func(ctx context.Context, line string) (string, int, bool) { return shIn(ctx, world, line) }
	// What the README's first steps leave (a project, a key pair, a signed
	// image in an OCI layout), plus the files examples name as the user's
	// own: a prebuilt binary, a prompt, requests, an org's rules, data and
	// catalog, a password file.
	for _, setup := range []string{
		"fullsend init .",
		"fullsend image keygen",
		"fullsend image build . --base scratch --tag ghcr.io/acme/agents:v1.2.0 --oci-layout out/image --sign --key cosign.key",
		"mkdir -p dist org-rules org-catalog && cp " + filepath.Join(bin, "fullsend") + " dist/fullsend",
		`printf 'package catalog\nbinaries: terraform: {paths: ["/usr/bin/terraform"], tier: "network"}\n' > org-catalog/org.cue`,
		"echo 'Summarize issue 42' > prompt.md && echo example > cosign-password.txt && echo '{}' > org-data.json",
		"echo 'GET https://api.github.com/repos/o/r/issues/5 from /usr/bin/gh' > requests.txt",
		// A denial as the sandbox's log file reports it (policy suggest).
		`printf '2026-11-28T10:00:00.000Z OCSF NET:OPEN [MED] DENIED /usr/bin/gh(64) -> docs.python.org:443 [policy:- engine:opa] [reason:endpoint docs.python.org:443 is not allowed by any policy]\n' > denied.log`,
	} {
		if out, code, _ := sh(t.Context(), setup); code != 0 {
			t.Fatalf("%s: exit %d\n%s", setup, code, out)
		}
	}
	for _, ex := range helpExamples(newRootCmd()) {
		t.Run(ex.command+": "+ex.line, func(t *testing.T) {
			for _, tool := range exampleTools {
				if strings.Contains(" "+ex.line, " "+tool+" ") || strings.Contains(ex.line, "$("+tool+" ") {
					if _, err := exec.LookPath(tool); err != nil {
						t.Skipf("needs %s", tool)
					}
				}
			}
			// Each example starts from the same world: no example sees
			// another's files.
			dir := filepath.Join(t.TempDir(), "w")
			if out, err := exec.Command("cp", "-a", world, dir).CombinedOutput(); err != nil {
				t.Fatalf("copying the project: %v\n%s", err, out)
			}
			needs := exampleNeeds(ex.line)
			wait := 60 * time.Second
			if needs != "" || strings.Contains(ex.line, "fullsend serve ") {
				wait = 5 * time.Second
			}
			ctx, cancel := context.WithTimeout(t.Context(), wait)
			defer cancel()
			out, code, timedOut := shIn(ctx, dir, examplePlaceholders.Replace(ex.line))
			for _, bad := range []string{"unknown flag", "unknown command", "unknown shorthand", "has been deprecated"} {
				if strings.Contains(out, bad) {
					t.Fatalf("%s:\n%s", bad, out)
				}
			}
			if code == 2 {
				t.Fatalf("usage error (exit 2):\n%s", out)
			}
			serving := strings.Contains(ex.line, "fullsend serve ") && timedOut && strings.Contains(out, "listening")
			switch {
			case needs != "":
				t.Logf("needs %s: exit %d", needs, code)
			case code != 0 && !serving:
				t.Errorf("exit %d (timed out: %v):\n%s", code, timedOut, out)
			}
		})
	}
}
