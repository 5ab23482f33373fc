package agentdef

// The frontmatter parser's vocabularies (claudeAgentKeys, skillKeys,
// openCodeTools, the enums, freeTextFields, ...) are generated from the CUE
// input schemas in policycue/schema/input, the one source of what
// frontmatter may hold: the CUE carries the knowledge and is what
// `fullsend policy schema input` prints for `cue vet`, while the parser
// reads the generated Go tables and never evaluates CUE. Edit the CUE, then
// run `go generate ./...`; internal/schemagen's tests fail while
// zz_generated_input.go is stale.
//
//go:generate go run ../internal/schemagen -schema input -cue ../policycue/schema/input -o zz_generated_input.go
