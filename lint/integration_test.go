package lint

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/fullsend-ai/agent-sandbox/internal/testtool"
)

// needTool finds a CLI for an integration test (.ci/install.d/40-opa.sh
// installs opa and conftest).
func needTool(t *testing.T, name string) string {
	t.Helper()
	return testtool.Find(t, name, ".ci/install.d/40-opa.sh")
}

// corpusFiles lists every policy the parity tests compare.
func corpusFiles(t *testing.T) []string {
	bad, _ := filepath.Glob("testdata/bad/*.yaml")
	good, _ := filepath.Glob("testdata/good/*.yaml")
	facts, _ := filepath.Glob("testdata/facts/*.yaml")
	return append(append(bad, good...), facts...)
}

// factsFile writes the engine's host facts for a corpus policy as an
// --data file, so conftest and opa see what lint.Facts computes. The facts
// that stand in for Rego computations (the secret scan, the string walks)
// are left out: the parity tests keep comparing those Rego paths with Go.
func factsFile(t *testing.T, file string) string {
	t.Helper()
	in, _ := corpusInput(t, file)
	facts := Facts(in.Policy)
	delete(facts, "literal_secrets")
	delete(facts, "strings")
	raw, err := json.Marshal(map[string]any{"fullsend": map[string]any{"facts": facts}})
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "facts.json")
	if err := os.WriteFile(out, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}

func contextFile(file string) string {
	c := strings.TrimSuffix(file, ".yaml") + ".context.json"
	if fileExists(c) {
		return c
	}
	return ""
}

// key renders a finding for set comparison: id, element and message.
func key(id, path, msg string) string {
	return fmt.Sprintf("%s %s: %s", id, path, msg)
}

func inProcessKeys(t *testing.T, e *Engine, file string) []string {
	in, _ := corpusInput(t, file)
	rep, err := e.Lint(context.Background(), []Input{in})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range rep.Findings {
		k := key(f.RuleID, f.PolicyPath, f.Message)
		if strings.HasPrefix(f.Waived, "exception in ") {
			// conftest reports exceptions per rule, not per finding.
			i := strings.LastIndex(f.Rule, ".")
			k = "exception " + f.Rule[:i] + " " + bareName(f.Rule[i+1:])
		}
		if !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

var conftestException = regexp.MustCompile(`^data\.(.+)\.exception\[_\]\[_\] == "(.*)"$`)

// TestConftestParity runs the embedded rules with the real conftest CLI on
// every corpus policy (with its context as --data) and requires exactly the
// findings of the in-process engine: same ids, same policy paths.
func TestConftestParity(t *testing.T) {
	conftest := needTool(t, "conftest")
	e := testEngine(t)
	for _, file := range corpusFiles(t) {
		t.Run(filepath.Base(file), func(t *testing.T) {
			t.Parallel()
			args := []string{"test", "--all-namespaces", "--no-color", "-o", "json", "-p", "rules", "--data", factsFile(t, file), file}
			if c := contextFile(file); c != "" {
				args = append(args, "--data", c)
			}
			got := conftestKeys(t, conftest, args)
			want := inProcessKeys(t, e, file)
			if !slices.Equal(got, want) {
				t.Errorf("conftest findings differ\nconftest:   %v\nin-process: %v", got, want)
			}
		})
	}
}

// TestConftestExceptionParity checks a conftest-shaped exception in a user
// rule directory is honoured the same way by conftest and the engine.
func TestConftestExceptionParity(t *testing.T) {
	conftest := needTool(t, "conftest")
	e, err := New(context.Background(), Options{RuleDirs: []fs.FS{os.DirFS("testdata/exceptions")}})
	if err != nil {
		t.Fatal(err)
	}
	file := "testdata/good/triage.yaml"
	got := conftestKeys(t, conftest, []string{"test", "--all-namespaces", "--no-color", "-o", "json",
		"-p", "rules", "-p", "testdata/exceptions", file})
	want := inProcessKeys(t, e, file)
	if !slices.Equal(got, want) || !slices.Contains(want, "exception fullsend.rules.network subdomain_wildcard") {
		t.Errorf("exception handling differs\nconftest:   %v\nin-process: %v", got, want)
	}
}

func conftestKeys(t *testing.T, conftest string, args []string) []string {
	t.Helper()
	cmd := exec.Command(conftest, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatalf("conftest: %v", err)
	}
	var results []struct {
		Failures, Warnings, Exceptions []struct {
			Msg      string         `json:"msg"`
			Metadata map[string]any `json:"metadata"`
		}
	}
	if err := json.Unmarshal(stdout.Bytes(), &results); err != nil {
		t.Fatalf("conftest output: %v\n%s\n%s", err, stdout.String(), stderr.String())
	}
	var out []string
	for _, r := range results {
		for _, group := range []struct {
			list []struct {
				Msg      string         `json:"msg"`
				Metadata map[string]any `json:"metadata"`
			}
			excepted bool
		}{{r.Failures, false}, {r.Warnings, false}, {r.Exceptions, true}} {
			for _, f := range group.list {
				k := ""
				if group.excepted {
					m := conftestException.FindStringSubmatch(f.Msg)
					if m == nil {
						t.Fatalf("unexpected conftest exception message %q", f.Msg)
					}
					k = "exception " + m[1] + " " + m[2]
				} else {
					id, _ := f.Metadata["id"].(string)
					path, _ := f.Metadata["path"].(string)
					k = key(id, path, f.Msg)
				}
				if !slices.Contains(out, k) {
					out = append(out, k)
				}
			}
		}
	}
	slices.Sort(out)
	return out
}

// TestOPAParity runs `opa test` on the rule directory (every rule's unit
// tests) and `opa eval` on every corpus policy, comparing the findings with
// the in-process engine.
func TestOPAParity(t *testing.T) {
	opa := needTool(t, "opa")
	out, err := exec.Command(opa, "test", "rules").CombinedOutput()
	if err != nil {
		t.Fatalf("opa test rules: %v\n%s", err, out)
	}
	if !bytes.Contains(out, []byte("PASS")) {
		t.Fatalf("opa test rules: no PASS line:\n%s", out)
	}
	e := testEngine(t)
	query := `f := [[x.id, x.path, x.msg] | some ns; some name, set in data.fullsend.rules[ns]; regex.match("^(deny|warn)_", name); some x in set]`
	for _, file := range corpusFiles(t) {
		t.Run(filepath.Base(file), func(t *testing.T) {
			t.Parallel()
			args := []string{"eval", "-f", "json", "-d", "rules", "-d", factsFile(t, file), "-i", file}
			if c := contextFile(file); c != "" {
				args = append(args, "-d", c)
			}
			raw, err := exec.Command(opa, append(args, query)...).Output()
			if err != nil {
				t.Fatalf("opa eval: %v", err)
			}
			var res struct {
				Result []struct {
					Bindings struct {
						F [][3]string `json:"f"`
					} `json:"bindings"`
				} `json:"result"`
			}
			if err := json.Unmarshal(raw, &res); err != nil || len(res.Result) != 1 {
				t.Fatalf("opa eval output: %v\n%s", err, raw)
			}
			var got []string
			for _, f := range res.Result[0].Bindings.F {
				if k := key(f[0], f[1], f[2]); !slices.Contains(got, k) {
					got = append(got, k)
				}
			}
			slices.Sort(got)
			if want := inProcessKeys(t, e, file); !slices.Equal(got, want) {
				t.Errorf("opa eval findings differ\nopa:        %v\nin-process: %v", got, want)
			}
		})
	}
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }
