package lint

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/fullsend-ai/agent-sandbox/report"
	"github.com/open-policy-agent/opa/v1/ast"
)

// This file is the rule set: the embedded rules and those of --rules
// directories, parsed and compiled, and what each deny/warn/violation rule
// is (report.Rule: namespace, id, severity, title, position).

// rules/secretrules.rego is the secretscan rule set as Rego data, for FS018.
//go:generate go run ../secretscan/internal/genrego -o rules/secretrules.rego

//go:embed rules/*.rego
var builtinRules embed.FS

// BuiltinRules returns the embedded rule set (rules/*.rego, tests included),
// for tools that want to run it elsewhere, e.g. under conftest.
func BuiltinRules() fs.FS {
	sub, err := fs.Sub(builtinRules, "rules")
	if err != nil {
		panic(err) // the embed pattern guarantees the directory
	}
	return sub
}

// ruleName is a rule head conftest reports: deny, violation or warn, with
// an optional _suffix.
var ruleName = regexp.MustCompile(`^(deny|violation|warn)(_[a-zA-Z0-9_]+)*$`)

// builtinCheckStages are the compiler stages that only look for mistakes
// (types, safety of rule heads, recursion, conflicts, undefined functions,
// imports, keywords, capabilities) and change nothing the evaluator uses:
// a fifth of compiling the embedded rules, which need no checking at every
// start of the binary. Safety of rule bodies stays: it also orders them for
// evaluation. (Stage list: NewCompiler in OPA's v1/ast/compile.go.)
var builtinCheckStages = []ast.StageID{
	ast.StageCheckUnusedImports,
	ast.StageCheckKeywordOverrides,
	ast.StageCheckDuplicateImports,
	ast.StageCheckVoidCalls,
	ast.StageCheckRuleConflicts,
	ast.StageCheckUndefinedFuncs,
	ast.StageCheckSafetyRuleHeads,
	ast.StageCheckRecursion,
	ast.StageCheckTypes,
	ast.StageCheckUnsafeBuiltins,
	ast.StageCheckDeprecatedBuiltins,
	ast.StageBuildRequiredCapabilities,
}

// loadModules parses the builtin rules (unless turned off) and those of the
// rule directories.
func loadModules(opts Options) (map[string]*ast.Module, error) {
	modules := map[string]*ast.Module{}
	if !opts.NoBuiltin {
		if err := parseRules(builtinRules, "rules", "builtin:", modules); err != nil {
			return nil, err
		}
	}
	for i, dir := range opts.RuleDirs {
		if err := parseRules(dir, ".", fmt.Sprintf("rules%d:", i), modules); err != nil {
			return nil, err
		}
	}
	if len(modules) == 0 {
		return nil, errors.New("no lint rules: the builtin set is off and no rule directory holds *.rego files")
	}
	return modules, nil
}

// collectRules records the compiled deny/violation/warn rules with their
// metadata, and returns the namespaces that define exceptions.
func (e *Engine) collectRules(compiler *ast.Compiler) map[string]bool {
	exceptions := map[string]bool{}
	seen := map[string]bool{}
	for _, name := range slices.Sorted(maps.Keys(compiler.Modules)) {
		mod := compiler.Modules[name]
		ns := strings.TrimPrefix(mod.Package.Path.String(), "data.")
		for _, r := range mod.Rules {
			head := r.Head.Ref().String()
			if head == "exception" {
				exceptions[ns] = true
				continue
			}
			// A rule may have several bodies (or files): the first one found
			// in module order carries its metadata.
			if !ruleName.MatchString(head) || seen[ns+"."+head] {
				continue
			}
			seen[ns+"."+head] = true
			e.rules = append(e.rules, ruleInfo(compiler, name, ns, head, r))
		}
	}
	e.indexRules()
	return exceptions
}

// indexRules maps each rule's reference (namespace.rule) to its info.
func (e *Engine) indexRules() {
	for i := range e.rules {
		e.byRef[e.rules[i].Namespace+"."+e.rules[i].Name] = &e.rules[i]
	}
}

// ruleInfo describes rule r (head) of namespace ns in module name, with the
// title, description and id of its annotations.
func ruleInfo(compiler *ast.Compiler, name, ns, head string, r *ast.Rule) report.Rule {
	info := report.Rule{Namespace: ns, Name: head, ID: ns + "." + head, Severity: prefixSeverity(head),
		File: strings.SplitN(name, ":", 2)[1], Line: r.Location.Row}
	for _, a := range compiler.GetAnnotationSet().GetRuleScope(r) {
		info.Title, info.Description = a.Title, strings.TrimSpace(a.Description)
		if id, ok := a.Custom["id"].(string); ok && id != "" {
			info.ID = id
		}
	}
	return info
}

// parseRules parses every non-test *.rego file under dir of fsys, the files
// concurrently (parsing is a good part of the engine's start-up).
func parseRules(fsys fs.FS, dir, prefix string, into map[string]*ast.Module) error {
	files, err := readRuleFiles(fsys, dir, prefix)
	if err != nil {
		return err
	}
	var wg sync.WaitGroup
	for _, f := range files {
		wg.Go(func() {
			f.mod, f.err = ast.ParseModuleWithOpts(f.rel, string(f.src), ast.ParserOptions{
				ProcessAnnotation: true, RegoVersion: ast.RegoV1,
			})
		})
	}
	wg.Wait()
	for _, f := range files { // the first error in walk order, whatever finished first
		if f.err != nil {
			return fmt.Errorf("parsing lint rule %s: %w", f.rel, f.err)
		}
		into[prefix+f.rel] = f.mod
	}
	return nil
}

// ruleFile is one rule file: its path under the rule directory, its
// source, and the module parsed from it or the error.
type ruleFile struct {
	rel string
	src []byte
	mod *ast.Module
	err error
}

// readRuleFiles reads the non-test *.rego files under dir of fsys in walk
// order (for the builtin set, but its secret rules, which are stored as
// data instead: see secretRulesData).
func readRuleFiles(fsys fs.FS, dir, prefix string) ([]*ruleFile, error) {
	var files []*ruleFile
	err := fs.WalkDir(fsys, dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("reading lint rules: %w", err)
		}
		if !isRuleFile(p, d) || (prefix == "builtin:" && p == dir+"/"+secretRulesFile) {
			return nil
		}
		src, err := fs.ReadFile(fsys, p)
		if err != nil {
			return fmt.Errorf("reading lint rules: %w", err)
		}
		files = append(files, &ruleFile{rel: strings.TrimPrefix(strings.TrimPrefix(p, dir), "/"), src: src})
		return nil
	})
	return files, err
}

// isRuleFile reports whether a walked entry is a rule file: *.rego, not
// *_test.rego.
func isRuleFile(p string, d fs.DirEntry) bool {
	return !d.IsDir() && strings.HasSuffix(p, ".rego") && !strings.HasSuffix(p, "_test.rego")
}

func prefixSeverity(rule string) string {
	if strings.HasPrefix(rule, "warn") {
		return report.SeverityWarn
	}
	return report.SeverityDeny
}
