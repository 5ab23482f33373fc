// Package policycue is the CUE side of the policy language. It owns the
// capability catalog embedded in the binary (tool classes and tiers, the
// binary registry, named profiles, runtime baselines per runtime and
// provider), unified with an organisation's own .cue files by LoadCatalog (a
// conflicting value is an error naming both positions), and the CUE
// schemas: the frontmatter input schemas (InputSchema, ValidateInput) and
// the OpenShell #Policy per version (PolicySchema), printed for cue vet by
// OpenShellSchemaCUE and InputSchemaCUE (`fullsend policy schema`). The
// schemas are the single source of the Go tables of openshell's validator
// and compile's frontmatter parser, which internal/schemagen generates.
//
// In the pipeline only compile uses it: the Catalog is the knowledge the
// compiler applies to agent definitions. Of the binary, only it and
// internal/cueload (the one CUE package loader) import cuelang.org/go; of
// this module it imports only internal/cueload and openshell (the version
// gates that instantiate #PolicyAt). It must never import OPA,
// lint or compile, nor anything of the build or run side, which must not
// link CUE.
package policycue
