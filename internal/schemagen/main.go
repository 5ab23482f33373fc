// Command schemagen generates the Go tables of the runtime packages from the
// CUE schemas in policycue/schema, which are the single source of truth:
//
//   - -schema openshell: the OpenShell policy validator's field table
//     (openshell/validate/zz_generated_schema.go) from policycue/schema/openshell;
//   - -schema input: the frontmatter parser's key lists and enums
//     (agentdef/zz_generated_input.go) from policycue/schema/input.
//
// The direction is CUE -> Go: the CUE carries the knowledge (and is what
// `fullsend policy schema` prints for `cue vet` users), while openshell and
// agentdef's parser never evaluate CUE at run time, so the runner and image
// packages need not link cuelang.org/go. Run it through `go generate ./...`;
// the directives sit in openshell/validate/schema.go and
// agentdef/input_schema.go, and TestGeneratedFilesAreCurrent fails when a
// checked-in file differs from what the schemas produce.
//
// The generator reads the CUE from disk and imports neither openshell nor
// agentdef, so it still builds when a generated file is missing or stale.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/fullsend-ai/agent-sandbox/internal/atomicfile"
)

func main() {
	if err := run(os.Args[1:], os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "schemagen:", err)
		os.Exit(1)
	}
}

func run(args []string, stderr io.Writer) error {
	fl := flag.NewFlagSet("schemagen", flag.ContinueOnError)
	fl.SetOutput(stderr)
	schema := fl.String("schema", "", "which tables to generate: openshell or input")
	dir := fl.String("cue", "", "directory of the CUE package to read")
	features := fl.String("features", "", "Go file declaring the openshell.Feature constants (openshell only)")
	out := fl.String("o", "", "output Go file")
	if err := fl.Parse(args); err != nil {
		return err
	}
	if *dir == "" || *out == "" {
		return fmt.Errorf("-cue and -o are required")
	}
	var src []byte
	var err error
	switch *schema {
	case "openshell":
		src, err = generateOpenShell(*dir, *features)
	case "input":
		src, err = generateInput(*dir)
	default:
		return fmt.Errorf("unknown -schema %q: want openshell or input", *schema)
	}
	if err != nil {
		return err
	}
	return atomicfile.Write(*out, src, 0o644)
}
