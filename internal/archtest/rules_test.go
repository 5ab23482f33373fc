package archtest

// docSections are the sections of docs/architecture.md whose boundary
// sentences must each have a row below.
var docSections = []string{"Packages", "Import rules"}

// allowedUndocumented are packages being added on other branches whose
// paragraph and rows arrive with them (a name covers its subpackages).
//
// TODO(issue 22): remove each entry when its package's paragraph in
// docs/architecture.md and its rows below are merged.
var allowedUndocumented = []string{}

// pendingRemoval are packages being deleted on another branch: no rule
// names them, imports of them are not counted, and they need no paragraph.
var pendingRemoval = []string{}

// rules are the boundaries docs/architecture.md states, one row per
// sentence, in the document's order. A row with no pkgs quotes a sentence
// that uses the words of a boundary but states none (it describes this
// test).
var rules = []rule{
	// ## Packages
	{
		says: "It imports the standard library only and must never import `compile` or `agentdef` (the frontmatter types)",
		pkgs: []string{"bundle"},
		is:   []claim{leaf(), never("compile", "agentdef")},
	},
	{
		says: "It imports `bundle` and `placeholder` only; it must never import CUE or OPA (the runner uses it inside the image), nor `openshell/validate`, `openshell/decide`, `compile`, `lint` or `policycue`, which sit above it.",
		pkgs: []string{"openshell"},
		is:   []claim{only("bundle", "placeholder"), never(cue, opa, "openshell/validate", "openshell/decide", "compile", "lint", "policycue")},
	},
	{
		says: "It imports `openshell`, `openshell/glob` and `internal/didyoumean` only; it must never import CUE, OPA or `openshell/decide`.",
		pkgs: []string{"openshell/validate"},
		is:   []claim{only("openshell", "openshell/glob", "internal/didyoumean"), never(cue, opa, "openshell/decide")},
	},
	{
		says: "It imports `openshell`, `openshell/glob`, `placeholder` and `internal/didyoumean` only; it must never import CUE, OPA or `openshell/validate`.",
		pkgs: []string{"openshell/decide"},
		is:   []claim{only("openshell", "openshell/glob", "placeholder", "internal/didyoumean"), never(cue, opa, "openshell/validate")},
	},
	{
		says: "It is a leaf (standard library only).",
		pkgs: []string{"openshell/glob"},
		is:   []claim{leaf()},
	},
	{
		says: "It is a leaf (standard library only) and must never import `openshell`",
		pkgs: []string{"placeholder"},
		is:   []claim{leaf(), never("openshell")},
	},
	{
		says: "Of the binary, only it and `internal/cueload` (the one CUE package loader) import `cuelang.org/go`; the schema generator `internal/schemagen` is the third importer, and no binary links it.",
		pkgs: []string{cue},
		is:   []claim{onlyBy("policycue", "internal/cueload", "internal/schemagen")},
	},
	{
		says: "It imports `cuelang.org/go`, `internal/cueload` and `openshell` (the version gates that instantiate `#PolicyAt`) only.",
		pkgs: []string{"policycue"},
		is:   []claim{only(cue, "internal/cueload", "openshell")},
	},
	{
		says: "It must never import OPA, `lint` or `compile`.",
		pkgs: []string{"policycue"},
		is:   []claim{never(opa, "lint", "compile")},
	},
	{
		says: "It imports `agentdef/projectfile`, `bundle`, `placeholder`, `internal/parallel` and `internal/didyoumean` only; it must never import `compile`, `lint`, `policycue`, CUE or OPA: parsing input needs no catalog and no rule engine.",
		pkgs: []string{"agentdef"},
		is:   []claim{only("agentdef/projectfile", "bundle", "placeholder", "internal/parallel", "internal/didyoumean"), never("compile", "compile/lintcheck", "lint", "policycue", cue, opa)},
	},
	{
		says: "It imports `agentdef`, `agentdef/projectfile`, `bundle`, `containment`, `openshell`, `openshell/validate`, `openshell/decide`, `openshell/glob`, `openshell/profile`, `openshell/profile/check`, `placeholder`, `policycue`, `internal/atomicfile`, `internal/parallel` and `internal/didyoumean` only, and links CUE through `policycue`.",
		pkgs: []string{"compile"},
		is:   []claim{only("agentdef", "agentdef/projectfile", "bundle", "containment", "openshell", "openshell/validate", "openshell/decide", "openshell/glob", "openshell/profile", "openshell/profile/check", "placeholder", "policycue", "internal/atomicfile", "internal/parallel", "internal/didyoumean")},
	},
	{
		says: "It must never import OPA or `lint`: the lint check is injected (`ProjectOptions.Lint`, `Options.Checks`), so only `cmd/fullsend` and `compile/lintcheck` import it; later stages read its output through `bundle`.",
		pkgs: []string{"compile"},
		is:   []claim{never(opa, "lint"), onlyBy("cmd/fullsend", "compile/lintcheck")},
	},
	{
		says: "It must never import `image`, `sign`, `verify`, `runner`, `spawn` or `forge`: the compiler ends at the bundle.",
		pkgs: []string{"compile"},
		is:   []claim{never("image", "sign", "verify", "runner", "spawn", "forge")},
	},
	{
		says: "It imports `agentdef`, `compile`, `internal/parallel`, `lint` and `report` only; it is the one library package that links both the compiler and OPA, and only `cmd/fullsend` imports it.",
		pkgs: []string{"compile/lintcheck"},
		is:   []claim{only("agentdef", "compile", "internal/parallel", "lint", "report"), onlyBy("cmd/fullsend")},
	},
	{
		says: "It imports `bundle`, `openshell`, `openshell/glob` (the inference-API host and path patterns), `report`, `secretscan` (FS018's rules) and OPA only; it must never import CUE, `policycue` or `compile` (`compile/lintcheck` imports it), nor `openshell/validate` or `openshell/decide`: the rules read the model, not the validator's or the decision engine's answers.",
		pkgs: []string{"lint"},
		is:   []claim{only("bundle", "openshell", "openshell/glob", "report", "secretscan", opa), never(cue, "policycue", "compile", "openshell/validate", "openshell/decide")},
	},
	{
		says: "It imports `bundle` (a finding's source) and `ciout` (the workflow-command encodings of the github format) only and must never import OPA or `lint`, so findings are rendered without a rule engine.",
		pkgs: []string{"report"},
		is:   []claim{only("bundle", "ciout"), never(opa, "lint")},
	},
	{
		says: "It imports `bundle`, `gitrepo`, `handover` and `internal/atomicfile`; it must never import `sign` (so it does not link cosign), `compile`, CUE or OPA.",
		pkgs: []string{"image"},
		is:   []claim{only("bundle", "gitrepo", "handover", "internal/atomicfile"), never("sign", cosign, "compile", cue, opa)},
	},
	{
		says: "It is the only package that imports cosign;",
		pkgs: []string{cosign},
		is:   []claim{onlyBy("sign")},
	},
	{
		says: "it must never import `image` (the two stages meet only where they are composed), `compile`, CUE or OPA.",
		pkgs: []string{"sign"},
		is:   []claim{never("image", "compile", cue, opa)},
	},
	{
		says: "It composes `image` and `sign`, which is why `image` never imports `sign`.",
		pkgs: []string{"image"},
		is:   []claim{never("sign")},
	},
	{
		says: "It imports `image`, `sign`, `gitrepo`, `cienv`, `internal/atomicfile` and `internal/version` only.",
		pkgs: []string{"publish"},
		is:   []claim{only("image", "sign", "gitrepo", "cienv", "internal/atomicfile", "internal/version")},
	},
	{
		says: "It must never import `compile` (outside CI the CLI compiles a stale bundle before calling it; in CI it refuses one), CUE or OPA.",
		pkgs: []string{"publish"},
		is:   []claim{never("compile", cue, opa)},
	},
	{
		says: "The cryptography is `sign`'s; `verify` must never import cosign directly, nor `image` or `compile`",
		pkgs: []string{"verify"},
		is:   []claim{neverDirect(cosign), never("image", "compile")},
	},
	{
		says: "It imports `bundle`, `cienv`, `ciout`, `denial`, `handover`, `openshell`, `openshell/profile`, `placeholder`, `runner/stage`, `runner/evidence`, `runner/resolve`, `runner/redact` and `runner/childproc` only; it must never import `openshell/validate`, `openshell/decide`, `compile`, `policycue`, `lint`, `sign` or `verify`, nor link CUE or OPA",
		pkgs: []string{"runner"},
		is: []claim{
			only("bundle", "cienv", "ciout", "denial", "handover", "openshell", "openshell/profile", "placeholder", "runner/stage", "runner/evidence", "runner/resolve", "runner/redact", "runner/childproc"),
			never("openshell/validate", "openshell/decide", "compile", "policycue", "lint", "sign", "verify", cue, opa),
		},
	},
	{
		says: "It imports the standard library and `gopkg.in/yaml.v3` only, and must never import `openshell`, `runner` or `runner/evidence`: it drives no sandbox and decides no policy, the runner calls it around the `openshell` commands.",
		pkgs: []string{"runner/stage"},
		is:   []claim{leaf("gopkg.in/yaml.v3"), never("openshell", "runner", "runner/evidence")},
	},
	{
		says: "It imports `cienv` and `placeholder` only and must never import `openshell`, `runner`, `runner/stage` or `runner/evidence`.",
		pkgs: []string{"runner/resolve"},
		is:   []claim{only("cienv", "placeholder"), never("openshell", "runner", "runner/stage", "runner/evidence")},
	},
	{
		says: "It is a leaf (standard library only), so any package of the run may use it.",
		pkgs: []string{"runner/redact"},
		is:   []claim{leaf()},
	},
	{
		says: "`agentdef` reads definitions and `compile` reads fragments through it. It is a leaf (standard library only).",
		pkgs: []string{"agentdef/projectfile"},
		is:   []claim{leaf(), onlyBy("agentdef", "compile")},
	},
	{
		says: "It imports the standard library and `golang.org/x/sys/unix` only, and only `runner` imports it.",
		pkgs: []string{"runner/childproc"},
		is:   []claim{leaf("golang.org/x/sys/unix"), onlyBy("runner")},
	},
	{
		says: "It imports `denial` and the standard library only and must never import `openshell`, `runner` or `runner/stage`: the runner runs the sandbox commands and hands it the bytes.",
		pkgs: []string{"runner/evidence"},
		is:   []claim{only("denial"), never("openshell", "runner", "runner/stage")},
	},
	{
		says: "It imports only `internal/version` and `secretscan`, and takes a tier as the manifest's string; it must never import the policy side (`bundle`, `openshell`, `placeholder`, `policycue`, `compile`, `lint`, `report`, CUE, OPA), the image side (`image`, `publish`) or the signing side (`sign`, `verify`, cosign).",
		pkgs: []string{"forge"},
		is: []claim{
			only("internal/version", "secretscan"),
			never("bundle", "openshell", "placeholder", "policycue", "compile", "lint", "report", cue, opa, "image", "publish", "sign", "verify", cosign),
		},
	},
	{
		// internal/version and secretscan are leaves (their rows), so this
		// follows from forge's row above; the sentence is a measure, not a
		// boundary of its own.
		says: "That keeps the code that holds the token small to review: `go list -deps ./forge` is the standard library and these three packages of the module.",
	},
	{
		says: "It does not make the process small: `fullsend serve forge` runs in the one `fullsend` binary, which links about a thousand packages, CUE, OPA and cosign among them.",
	},
	{
		says: "It is a leaf (standard library only).",
		pkgs: []string{"secretscan"},
		is:   []claim{leaf()},
	},
	{
		says: "Its generator of the Rego copy, `secretscan/internal/genrego` (run by `go generate ./lint`), imports `secretscan` only.",
		pkgs: []string{"secretscan/internal/genrego"},
		is:   []claim{only("secretscan"), onlyBy()},
	},
	{
		says: "It imports `bundle`, `forge` and `handover`; it must never import `runner` (the sandbox stays behind the interface), CUE or OPA.",
		pkgs: []string{"spawn"},
		is:   []claim{only("bundle", "forge", "handover"), never("runner", cue, opa)},
	},
	{
		says: "It imports the standard library only, so any package may use it.",
		pkgs: []string{"cienv"},
		is:   []claim{leaf()},
	},
	{
		says: "It is a leaf (standard library only), so `image` and `sign` share the annotation without importing each other.",
		pkgs: []string{"handover"},
		is:   []claim{leaf()},
	},
	{
		says: "It imports `cienv` (the CI kinds it has templates for) and `internal/atomicfile` only, and must never import the packages whose commands the templates call (`compile`, `policycue`, `lint`, `openshell`, `image`, `sign`, `publish`, `verify`, `runner`, `spawn`, `forge`)",
		pkgs: []string{"templates"},
		is: []claim{
			only("cienv", "internal/atomicfile"),
			never("compile", "policycue", "lint", "openshell", "image", "sign", "publish", "verify", "runner", "spawn", "forge"),
		},
	},
	{
		says: "It imports `templates` and `internal/atomicfile`;",
		pkgs: []string{"scaffold"},
		is:   []claim{only("templates", "internal/atomicfile")},
	},
	{
		says: "It imports everything above; nothing imports it.",
		pkgs: []string{"cmd/fullsend"},
		is:   []claim{onlyBy()},
	},
	{
		says: "`atomicfile` (write via a temporary file and rename), `version` (the build version) and `gcbudget` (the garbage-collector budget of the batch commands `policy compile` and `policy lint`) are standard-library leaves.",
		pkgs: []string{"internal/atomicfile", "internal/version", "internal/gcbudget"},
		is:   []claim{leaf()},
	},
	{
		says: "`parallel` (the ordered worker loop that `agentdef`, `compile` and `compile/lintcheck` share: indexed work on a bounded number of goroutines, results independent of scheduling) is a standard-library leaf too.",
		pkgs: []string{"internal/parallel"},
		is:   []claim{leaf()},
	},
	{
		says: "`projectroot` (the project root a command without DIR works on, found from the working directory upwards: its markers and the walk's end at the repository root) is a standard-library leaf too.",
		pkgs: []string{"internal/projectroot"},
		is:   []claim{leaf()},
	},
	{
		says: "`didyoumean` (\"did you mean\") imports only `github.com/agnivade/levenshtein`, a library without dependencies that the binary links through OPA anyway.",
		pkgs: []string{"internal/didyoumean"},
		is:   []claim{leaf("github.com/agnivade/levenshtein")},
	},
	{
		says: "it imports `cuelang.org/go` only.",
		pkgs: []string{"internal/cueload"},
		is:   []claim{only(cue)},
	},
	{
		says: "are imported by `_test.go` files only.",
		pkgs: []string{"internal/testtool", "internal/fixture", "internal/testregistry", "internal/regexsample"},
		is:   []claim{tests()},
	},
	{
		says: "`archtest` holds only the tests of the import rules below, `e2e` only end-to-end tests that drive installed `fullsend` binaries (`TestNewcomer`), and `enginetest` only tests that need a real Docker Engine and the Containerfile's pins; they import nothing of the module outside their tests.",
		pkgs: []string{"internal/archtest", "internal/e2e", "internal/enginetest"},
		is:   []claim{only(), tests()},
	},
	{
		says: "it imports `cuelang.org/go`, `internal/cueload` and `internal/atomicfile` only, so it builds even when a table is stale.",
		pkgs: []string{"internal/schemagen"},
		is:   []claim{only(cue, "internal/cueload", "internal/atomicfile"), onlyBy()},
	},
	{
		says: "it imports `openshell` and `openshell/profile` (for the bytes of OpenShell's built-in profiles) only, must never import `openshell/validate` or `openshell/decide`, and nothing imports it.",
		pkgs: []string{"testdata/openshell-fake"},
		is:   []claim{only("openshell", "openshell/profile"), never("openshell/validate", "openshell/decide"), onlyBy()},
	},

	{
		says: "It imports `openshell`, `openshell/glob`, `bundle` and `internal/didyoumean` only and must never import `openshell/validate`, `openshell/decide`, CUE, OPA, `compile`, `lint` or `policycue`: the runner and the OpenShell fake use it.",
		pkgs: []string{"openshell/profile"},
		is:   []claim{only("openshell", "openshell/glob", "bundle", "internal/didyoumean"), never("openshell/validate", "openshell/decide", cue, opa, "compile", "lint", "policycue")},
	},
	{
		says: "It imports `openshell`, `openshell/glob`, `openshell/profile` and `openshell/validate` only; it must never import CUE, OPA or `openshell/decide`.",
		pkgs: []string{"openshell/profile/check"},
		is:   []claim{only("openshell", "openshell/glob", "openshell/profile", "openshell/validate"), never(cue, opa, "openshell/decide")},
	},
	{
		says: "It imports `openshell` and `openshell/glob` only; it must never import CUE, OPA, `compile` or `lint`.",
		pkgs: []string{"prover"},
		is:   []claim{only("openshell", "openshell/glob"), never(cue, opa, "compile", "lint")},
	},
	{
		says: "so it imports `bundle`, `ciout`, `gitrepo`, `openshell`, `openshell/decide`, `openshell/glob`, `openshell/profile`, `prover` and `report` and never `compile`, CUE or OPA.",
		pkgs: []string{"policydiff"},
		is:   []claim{only("bundle", "ciout", "gitrepo", "openshell", "openshell/decide", "openshell/glob", "openshell/profile", "prover", "report"), never("compile", cue, opa)},
	},
	{
		says: "It imports `ciout` only.",
		pkgs: []string{"gitrepo"},
		is:   []claim{only("ciout")},
	},
	{
		says: "It imports `bundle`, `openshell`, `openshell/decide`, `openshell/glob` and `placeholder` only; it must never import CUE, OPA, `compile` or `lint`.",
		pkgs: []string{"containment"},
		is:   []claim{only("bundle", "openshell", "openshell/decide", "openshell/glob", "placeholder"), never(cue, opa, "compile", "lint")},
	},
	{
		says: "It imports `bundle`, `containment`, `denial`, `openshell`, `openshell/decide`, `placeholder`, `cienv` and `internal/atomicfile` only; it must never import `compile`, `policycue`, `lint`, CUE or OPA (asserted with the bundle readers).",
		pkgs: []string{"suggest"},
		is:   []claim{only("bundle", "containment", "denial", "openshell", "openshell/decide", "placeholder", "cienv", "internal/atomicfile"), never("compile", "policycue", "lint", cue, opa)},
	},

	{
		says: "It imports `cienv` and the standard library only and must never import `runner`, `verify` or `report`, which it serves.",
		pkgs: []string{"ciout"},
		is:   []claim{only("cienv"), never("runner", "verify", "report")},
	},
	{
		says: "`ciout/ciouttest` holds the test oracles (a model of how the GitHub Actions runner reads a log, the GitLab forgery check, the attack names) and is imported by `_test.go` files only.",
		pkgs: []string{"ciout/ciouttest"},
		is:   []claim{onlyBy()},
	},

	{
		says: "It imports the standard library only (the runner links it inside the image), so it never links CUE, OPA, `compile`, `lint` or `policycue`.",
		pkgs: []string{"denial"},
		is:   []claim{leaf(), never(cue, opa, "compile", "lint", "policycue")},
	},

	// ## Import rules
	{
		says: "`ciout` imports `cienv` and the standard library only; it must never import `runner`, `verify` or `report`.",
		pkgs: []string{"ciout"},
		is:   []claim{only("cienv"), never("runner", "verify", "report")},
	},
	{
		says: "Each sentence of this document that says what a package imports, must never import, links or is a leaf is a row of the rules table in `internal/archtest` (`rules_test.go`), checked against the graph `go list` reports, test files not counted.",
	},
	{
		says: "\"Imports only\" is checked against direct imports: this module's packages and the three libraries the document names (`cuelang.org/go`, `github.com/open-policy-agent/opa`, `github.com/sigstore/cosign`); other libraries are not listed.",
	},
	{
		says: "\"Must never import\" and \"links\" are checked against every transitive dependency.",
	},
	{
		says: "`runner`, `image`, `spawn`, `publish`, `bundle`, `cienv`, `openshell`, `openshell/profile`, `openshell/profile/check`, `openshell/validate`, `openshell/decide`, `openshell/glob`, `placeholder`, `report`, `prover`, `policydiff`, `suggest`, `denial` and `agentdef` depend on neither `cuelang.org/go` nor `github.com/open-policy-agent/opa`, nor on `compile`, `policycue` or `lint`.",
		pkgs: []string{"runner", "image", "spawn", "publish", "bundle", "cienv", "openshell", "openshell/profile", "openshell/profile/check", "openshell/validate", "openshell/decide", "openshell/glob", "placeholder", "report", "prover", "policydiff", "suggest", "denial", "agentdef"},
		is:   []claim{never(cue, opa, "compile", "policycue", "lint")},
	},
	{
		says: "`bundle`, `cienv`, `secretscan` and `denial` depend on the standard library only.",
		pkgs: []string{"bundle", "cienv", "secretscan", "denial"},
		is:   []claim{leaf()},
	},
	{
		says: "`compile` depends on neither `github.com/open-policy-agent/opa` nor `lint`: the lint check is injected from `compile/lintcheck`.",
		pkgs: []string{"compile"},
		is:   []claim{never(opa, "lint")},
	},
	{
		says: "Only `cmd/fullsend` and `compile/lintcheck` import `compile`.",
		pkgs: []string{"compile"},
		is:   []claim{onlyBy("cmd/fullsend", "compile/lintcheck")},
	},
	{
		says: "Only `cmd/fullsend` imports `compile/lintcheck`.",
		pkgs: []string{"compile/lintcheck"},
		is:   []claim{onlyBy("cmd/fullsend")},
	},
	{
		says: "Only `sign` imports `github.com/sigstore/cosign` (`verify`, `publish` and the CLI link it through `sign`).",
		pkgs: []string{cosign},
		is:   []claim{onlyBy("sign")},
	},
	{
		says: "data flows down the pipeline and no stage imports a later one (`agentdef`, `compile`, `image`, `sign`, `publish`, `verify`, `runner` in that order;",
		pkgs: []string{"agentdef", "compile", "image", "sign", "publish", "verify", "runner"},
		is:   []claim{ordered()},
	},
	{
		says: "`bundle`, `placeholder`, `cienv`, `denial`, `openshell/glob` and `internal/{atomicfile,didyoumean,parallel,version}` import nothing of this module;",
		pkgs: []string{"bundle", "placeholder", "cienv", "denial", "openshell/glob", "internal/atomicfile", "internal/didyoumean", "internal/parallel", "internal/version"},
		is:   []claim{only()},
	},
	{
		says: "no package imports `cmd/fullsend`.",
		pkgs: []string{"cmd/fullsend"},
		is:   []claim{onlyBy()},
	},
}
