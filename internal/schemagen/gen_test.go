package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/cuecontext"
)

// targets are the checked-in generated files and what they come from, as
// the go:generate directives name them (relative to the module root).
var targets = []struct {
	schema, dir, features, out string
}{
	{"openshell", "policycue/schema/openshell", "openshell/version.go", "openshell/validate/zz_generated_schema.go"},
	{"input", "policycue/schema/input", "", "agentdef/zz_generated_input.go"},
}

func fromRoot(p string) string {
	if p == "" {
		return ""
	}
	return filepath.Join("..", "..", filepath.FromSlash(p))
}

func generate(schema, dir, features string) ([]byte, error) {
	if schema == "openshell" {
		return generateOpenShell(dir, features)
	}
	return generateInput(dir)
}

// TestGeneratedFilesAreCurrent regenerates every table in memory and
// compares it with the checked-in file, byte for byte.
func TestGeneratedFilesAreCurrent(t *testing.T) {
	for _, tc := range targets {
		t.Run(tc.schema, func(t *testing.T) {
			want, err := generate(tc.schema, fromRoot(tc.dir), fromRoot(tc.features))
			if err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(fromRoot(tc.out))
			if err != nil {
				t.Fatalf("%v: run `go generate ./...`", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s is not current with %s (first difference: %s): run `go generate ./...`", tc.out, tc.dir, firstDiff(got, want))
			}
			if !bytes.HasPrefix(got, []byte("// Code generated ")) || !bytes.Contains(got, []byte(" DO NOT EDIT.\n")) {
				t.Errorf("%s lacks the generated-code header", tc.out)
			}
		})
	}
}

func firstDiff(got, want []byte) string {
	g, w := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := range min(len(g), len(w)) {
		if g[i] != w[i] {
			return "line " + strconv.Itoa(i+1) + ": " + strings.TrimSpace(g[i]) + " != " + strings.TrimSpace(w[i])
		}
	}
	return "length"
}

func TestRun(t *testing.T) {
	out := filepath.Join(t.TempDir(), "gen.go")
	args := []string{"-schema", "input", "-cue", fromRoot("policycue/schema/input"), "-o", out}
	if err := run(args, io.Discard); err != nil {
		t.Fatal(err)
	}
	want, err := generateInput(fromRoot("policycue/schema/input"))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(out); err != nil || !bytes.Equal(got, want) {
		t.Errorf("run wrote a different file (%v)", err)
	}
	for _, bad := range [][]string{
		{"-schema", "input"},
		{"-schema", "nope", "-cue", "x", "-o", out},
		{"-schema", "input", "-cue", t.TempDir(), "-o", out},
		{"-bogus"},
	} {
		if err := run(bad, io.Discard); err == nil {
			t.Errorf("run %v succeeded", bad)
		}
	}
}

const testFeatures = `package openshell

type Feature string

const (
	FeatureA Feature = "a"
	FeatureB Feature = "b"
)
`

// TestOpenShellSchemaErrors: a schema the validator's table cannot express
// fails generation with a message naming the place.
func TestOpenShellSchemaErrors(t *testing.T) {
	const base = `package openshell
#Features: {
	a: *true | bool @feature(a)
	b: *true | bool @feature(b)
}
#u16: int & >=0 & <=65535
`
	tests := []struct{ name, cue, want string }{
		{"ok", base + `#PolicyAt: {@name(policy), #f: #Features, version!: #u16 & 1, if #f.a {x?: [...#u16]}}`, ""},
		{"switch without attribute", `package openshell
#Features: {a: *true | bool}
#PolicyAt: {@name(policy), #f: #Features}`, "no @feature(name)"},
		{"unknown feature", `package openshell
#Features: {a: *true | bool @feature(zz)}
#PolicyAt: {@name(policy), #f: #Features}`, "is not an openshell.Feature"},
		{"definition without name", base + `#PolicyAt: {@name(policy), #f: #Features, s?: [...#S], #S: {n?: string}}`, "definition #S has no @name"},
		{"signed integer", base + `#PolicyAt: {@name(policy), #f: #Features, n?: int & >=-1 & <=3}`, "needs the bounds"},
		{"unbounded integer", base + `#PolicyAt: {@name(policy), #f: #Features, n?: int}`, "needs the bounds"},
		{"float", base + `#PolicyAt: {@name(policy), #f: #Features, n?: number}`, "unsupported type"},
		{"two nullable types", base + `#PolicyAt: {@name(policy), #f: #Features, n?: null | bool | string}`, "exactly one other type"},
		{"list of lists", base + `#PolicyAt: {@name(policy), #f: #Features, n?: [...[...string]]}`, "unsupported list element"},
		{"map of strings", base + `#PolicyAt: {@name(policy), #f: #Features, n?: [string]: string}`, "unsupported map value"},
		{"two gates", base + `#PolicyAt: {@name(policy), #f: #Features, if #f.a if #f.b {n?: bool}}`, "gated by both"},
		{"no root name", base + `#PolicyAt: {#f: #Features}`, "no @name"},
	}
	features := filepath.Join(t.TempDir(), "version.go")
	if err := os.WriteFile(features, []byte(testFeatures), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "policy.cue"), []byte(tc.cue), 0o600); err != nil {
				t.Fatal(err)
			}
			out, err := generateOpenShell(dir, features)
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				for _, s := range []string{`{name: "version", kind: kInt, max: 65535, required: true}`, `{name: "x", kind: kIntList, max: 65535, since: openshell.FeatureA}`} {
					if !bytes.Contains(out, []byte(s)) {
						t.Errorf("output lacks %s:\n%s", s, out)
					}
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
	if _, err := generateOpenShell(fromRoot("policycue/schema/openshell"), filepath.Join(t.TempDir(), "missing.go")); err == nil {
		t.Error("a missing features file was accepted")
	}
}

// TestInputSchemaErrors: a definition the parser's tables need is missing
// or of the wrong shape.
func TestInputSchemaErrors(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.cue"), []byte("package input\n#ClaudeAgent: {name!: string}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := generateInput(dir); err == nil || !strings.Contains(err.Error(), "no #OpenCodeAgent") {
		t.Errorf("error %v, want a missing #OpenCodeAgent", err)
	}
	for _, tc := range []struct{ cue, want string }{
		{`"a" | int`, "not a disjunction of strings"},
		{`string`, "not a disjunction of strings"},
		{`1`, "not a string enum"},
	} {
		v := cuecontext.New().CompileString("x: " + tc.cue)
		if _, err := enumList(v.LookupPath(cue.ParsePath("x"))); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("enum %s: error %v, want %q", tc.cue, err, tc.want)
		}
	}
}
