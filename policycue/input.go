package policycue

import (
	"embed"
	"errors"
	"fmt"
	"sync"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/cuecontext"
	cueerrors "cuelang.org/go/cue/errors"
	"cuelang.org/go/encoding/yaml"
)

//go:embed schema/input/*.cue
var inputSchemaFS embed.FS

// InputSchemaDir is the directory of the embedded frontmatter input schemas
// (CUE package input); InputSchemaCUE prints them as one file.
const InputSchemaDir = "schema/input"

// InputKind names one frontmatter definition of the input schema.
type InputKind string

// The frontmatter definitions. The value is the CUE definition's name
// without its leading '#'.
const (
	// InputClaudeAgent is a Claude Code subagent (#ClaudeAgent).
	InputClaudeAgent InputKind = "ClaudeAgent"
	// InputOpenCodeAgent is an OpenCode agent (#OpenCodeAgent).
	InputOpenCodeAgent InputKind = "OpenCodeAgent"
	// InputSkill is a SKILL.md file (#Skill).
	InputSkill InputKind = "Skill"
	// InputSandbox is fullsend's sandbox: field on its own (#Sandbox).
	InputSandbox InputKind = "Sandbox"
)

// InputKinds lists every InputKind.
func InputKinds() []InputKind {
	return []InputKind{InputClaudeAgent, InputOpenCodeAgent, InputSkill, InputSandbox}
}

// Definition returns the CUE path of the kind's definition, such as
// #ClaudeAgent.
func (k InputKind) Definition() string { return "#" + string(k) }

// Sentinel errors of InputValidator.
var (
	// ErrUnknownInputKind is returned for a kind not in InputKinds.
	ErrUnknownInputKind = errors.New("unknown input kind")
	// ErrInputSchema wraps every schema violation, so callers can tell a
	// bad document from a broken schema.
	ErrInputSchema = errors.New("frontmatter does not match the input schema")
)

// InputSchema loads the embedded input package into ctx and returns it;
// look definitions up with Value.LookupPath(cue.ParsePath(kind.Definition())).
func InputSchema(ctx *cue.Context) (cue.Value, error) {
	return LoadEmbedded(ctx, inputSchemaFS, InputSchemaDir)
}

// InputValidator checks frontmatter against the input schema. The schema
// is compiled once, in NewInputValidator. A cue.Context is not safe for
// concurrent use, so Validate serializes callers.
type InputValidator struct {
	mu   sync.Mutex
	ctx  *cue.Context
	defs map[InputKind]cue.Value
}

// NewInputValidator compiles the embedded input schema.
func NewInputValidator() (*InputValidator, error) {
	ctx := cuecontext.New()
	pkg, err := InputSchema(ctx)
	if err != nil {
		return nil, err
	}
	v := &InputValidator{ctx: ctx, defs: map[InputKind]cue.Value{}}
	for _, k := range InputKinds() {
		def := pkg.LookupPath(cue.ParsePath(k.Definition()))
		if err := def.Err(); err != nil {
			return nil, fmt.Errorf("input schema: %s: %w", k.Definition(), err)
		}
		v.defs[k] = def
	}
	return v, nil
}

// Definition returns the compiled definition of kind. The value belongs to
// the validator's context: do not use it concurrently with Validate.
func (v *InputValidator) Definition(kind InputKind) (cue.Value, error) {
	def, ok := v.defs[kind]
	if !ok {
		return cue.Value{}, fmt.Errorf("%w %q", ErrUnknownInputKind, kind)
	}
	return def, nil
}

// Validate checks one YAML frontmatter document (the text between the ---
// lines, not the Markdown file) against kind's definition, as
// `cue vet -c` does. file names the document in error positions. A
// violation is reported as an error wrapping ErrInputSchema whose message
// lists every problem with its line.
func (v *InputValidator) Validate(kind InputKind, file string, data []byte) error {
	def, err := v.Definition(kind)
	if err != nil {
		return err
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	expr, err := extractYAML(file, data)
	if err != nil {
		return fmt.Errorf("%w: %s: invalid YAML: %v", ErrInputSchema, file, err)
	}
	doc := v.ctx.BuildFile(expr)
	if err := doc.Err(); err != nil {
		return fmt.Errorf("%w: %s: %v", ErrInputSchema, file, err)
	}
	if err := doc.Unify(def).Validate(cue.Concrete(true), cue.Final()); err != nil {
		return fmt.Errorf("%w: %s as %s:\n%s", ErrInputSchema, file, kind.Definition(), cueerrors.Details(err, nil))
	}
	return nil
}

// extractYAML decodes YAML into a CUE file. CUE v0.17.1's decoder panics on
// some malformed input (lone carriage returns: "\r\r0"); that is turned into
// an error, so that bad input never crashes the caller.
func extractYAML(file string, data []byte) (f *ast.File, err error) {
	defer func() {
		if r := recover(); r != nil {
			f, err = nil, fmt.Errorf("the YAML decoder failed: %v", r)
		}
	}()
	return yaml.Extract(file, data)
}

// defaultInputValidator is compiled on first use and immutable afterwards
// (Validate locks).
var defaultInputValidator = sync.OnceValues(NewInputValidator)

// ValidateInput checks YAML frontmatter against kind's definition with a
// validator compiled once per process; see InputValidator.Validate.
func ValidateInput(kind InputKind, file string, data []byte) error {
	v, err := defaultInputValidator()
	if err != nil {
		return err
	}
	return v.Validate(kind, file, data)
}
