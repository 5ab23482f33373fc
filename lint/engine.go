package lint

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/fullsend-ai/agent-sandbox/bundle"
	"github.com/fullsend-ai/agent-sandbox/report"
	"github.com/fullsend-ai/agent-sandbox/secretscan"
	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/loader"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/storage"
	"github.com/open-policy-agent/opa/v1/storage/inmem"
	"golang.org/x/sync/errgroup"
)

// ErrLintFailed is returned (wrapped) by callers that turn findings at or
// above the fail-on severity into an error.
var ErrLintFailed = errors.New("lint findings")

// Options configures an Engine.
type Options struct {
	// RuleDirs are extra directories of *.rego rules (conftest shape); files
	// ending in _test.rego are skipped.
	RuleDirs []fs.FS
	// DataPaths are JSON or YAML data files or directories, loaded like
	// `conftest --data` / `opa eval --data` (a file's content at data's root).
	DataPaths []string
	// Waivers accept individual findings with a reason; they are added to
	// the waivers listed in data.fullsend.waivers.
	Waivers []Waiver
	// NoBuiltin drops the embedded rule set (only RuleDirs are run).
	NoBuiltin bool
}

// Engine evaluates the rule set. It is safe for concurrent use: the query is
// prepared once in New and only evaluated afterwards.
type Engine struct {
	rules       []report.Rule
	byRef       map[string]*report.Rule // "namespace.rule" -> info
	dataContext ast.Value               // data.fullsend.context from data files, if any
	waivers     []Waiver
	// prepare makes a session: the lint query prepared over a store of its
	// own holding the data. Sessions are pooled, one per concurrent Lint
	// worker, because each eval writes the policy's context and facts into
	// its store in a transaction it then aborts (an inmem store takes one
	// writer at a time). That is much cheaper than `with` overrides of
	// input and data, which cost OPA's evaluator some 40% per policy.
	prepare  func(context.Context) (*session, error)
	sessions sync.Pool
}

// session is one prepared query and the store it evaluates against.
type session struct {
	store storage.Store
	query rego.PreparedEvalQuery
}

// New loads and compiles the rules and data and prepares the lint query.
func New(ctx context.Context, opts Options) (*Engine, error) {
	secretRules := startSecretRules(opts)
	modules, err := loadModules(opts)
	if err != nil {
		_, _ = secretRules() // the conversion finishes before New returns
		return nil, err
	}
	compiler, err := compileRules(opts, modules)
	if err != nil {
		return nil, err
	}
	e := &Engine{byRef: map[string]*report.Rule{}}
	exceptions := e.collectRules(compiler)
	data, err := e.readData(opts, secretRules)
	if err != nil {
		return nil, err
	}
	q, err := e.buildQuery(exceptions)
	if err != nil {
		return nil, err
	}
	dataValue, err := storeValue(data)
	if err != nil {
		return nil, err
	}
	e.prepare = preparer(q, compiler, dataValue)
	first, err := e.prepare(ctx)
	if err != nil {
		return nil, err
	}
	e.sessions.Put(first)
	return e, nil
}

// preparer returns the function that makes a session: query q of the
// compiled rules prepared over a store of its own holding data.
func preparer(q ast.Body, compiler *ast.Compiler, data ast.Value) func(context.Context) (*session, error) {
	return func(ctx context.Context) (*session, error) {
		store := inmem.NewFromObjectWithOpts(map[string]any{}, inmem.OptReturnASTValuesOnRead(true))
		if err := storage.WriteOne(ctx, store, storage.AddOp, storage.RootPath, data); err != nil {
			return nil, fmt.Errorf("loading lint data: %w", err)
		}
		pq, err := rego.New(rego.ParsedQuery(q), rego.Compiler(compiler), rego.Store(store)).PrepareForEval(ctx)
		if err != nil {
			return nil, fmt.Errorf("preparing lint query: %w", err)
		}
		return &session{store: store, query: pq}, nil
	}
}

// startSecretRules starts, unless the builtin rule set is off, the work the
// secret rules need on other goroutines while the Rego parses and
// compiles: the scanner's compilation (the facts' scan, FS018), which
// secretscan.Default waits for when used, and the conversion of the rules'
// data, which the returned function waits for. Together they keep two
// cores busy for the whole start-up.
func startSecretRules(opts Options) func() (map[string]any, error) {
	if opts.NoBuiltin {
		return func() (map[string]any, error) { return nil, nil }
	}
	go secretscan.Default()
	var rules map[string]any
	var err error
	done := make(chan struct{})
	go func() {
		defer close(done)
		rules, err = secretRulesData()
	}()
	return func() (map[string]any, error) {
		<-done
		return rules, err
	}
}

// compileRules compiles the rule modules.
func compileRules(opts Options, modules map[string]*ast.Module) (*ast.Compiler, error) {
	compiler := ast.NewCompiler().WithEnablePrintStatements(false)
	if !opts.NoBuiltin && len(opts.RuleDirs) == 0 {
		// Only the embedded rules, which TestBuiltinRulesPassEveryCheck
		// compiles with every stage: skip the stages that only check.
		compiler = compiler.WithSkipStages(builtinCheckStages...)
	}
	if compiler.Compile(modules); compiler.Failed() {
		return nil, fmt.Errorf("compiling lint rules: %w", compiler.Errors)
	}
	return compiler, nil
}

// readData loads the data files, takes the waivers and the default context
// from them, and adds the secret rules' data unless the builtin rule set
// is off.
func (e *Engine) readData(opts Options, secretRules func() (map[string]any, error)) (map[string]any, error) {
	data, err := loadData(opts.DataPaths)
	if err != nil {
		return nil, err
	}
	if err := e.useData(data, opts.Waivers); err != nil {
		return nil, err
	}
	rules, err := secretRules()
	if err != nil {
		return nil, err
	}
	if !opts.NoBuiltin {
		if err := addSecretRules(data, rules); err != nil {
			return nil, err
		}
	}
	return data, nil
}

// storeValue is data as the value every session's store starts from, with
// data.fullsend the object where the context and facts go; the facts are
// the engine's to write.
func storeValue(data map[string]any) (ast.Value, error) {
	if _, ok := data["fullsend"]; !ok {
		data["fullsend"] = map[string]any{} // where the context and facts go
	}
	if _, ok := data["fullsend"].(map[string]any); !ok {
		return nil, errors.New("lint data: data.fullsend is not an object")
	}
	if _, ok := lookup(data, "fullsend", "facts"); ok {
		return nil, errors.New("lint data: data.fullsend.facts is reserved for the facts the engine computes")
	}
	v, err := ast.InterfaceToValue(data)
	if err != nil {
		return nil, fmt.Errorf("lint data: %w", err)
	}
	return v, nil
}

// loadData loads the data files, like `conftest --data`.
func loadData(paths []string) (map[string]any, error) {
	if len(paths) == 0 {
		return map[string]any{}, nil
	}
	res, err := loader.NewFileLoader().Filtered(paths, func(_ string, info fs.FileInfo, _ int) bool {
		return !info.IsDir() && !isDataFile(info.Name())
	})
	if err != nil {
		return nil, fmt.Errorf("loading lint data: %w", err)
	}
	return res.Documents, nil
}

// useData takes the waivers (data.fullsend.waivers, then extra) and the
// default context (data.fullsend.context) from data.
func (e *Engine) useData(data map[string]any, extra []Waiver) error {
	waivers, err := waiversFromData(data)
	if err != nil {
		return err
	}
	e.waivers = append(waivers, extra...)
	if c, ok := lookup(data, "fullsend", "context"); ok {
		v, err := ast.InterfaceToValue(c)
		if err != nil {
			return fmt.Errorf("data.fullsend.context: %w", err)
		}
		e.dataContext = v
	}
	return nil
}

func isDataFile(name string) bool {
	switch path.Ext(name) {
	case ".json", ".yaml", ".yml":
		return true
	}
	return false
}

// buildQuery evaluates every rule set and exception in one query, with the
// policy document as input (the fullsend context and facts are written into
// the session's store for each evaluation):
//
//	r := {"ns": {"deny_x": data.ns.deny_x, ..., "exception": data.ns.exception}}
func (e *Engine) buildQuery(exceptions map[string]bool) (ast.Body, error) {
	byNS := e.queryRules(exceptions)
	entries := make([]string, 0, len(byNS))
	for _, ns := range slices.Sorted(maps.Keys(byNS)) {
		entries = append(entries, nsQuery(ns, byNS[ns]))
	}
	q, err := ast.ParseBodyWithOpts("r := {"+strings.Join(entries, ", ")+"}", ast.ParserOptions{RegoVersion: ast.RegoV1})
	if err != nil {
		return nil, fmt.Errorf("building lint query: %w", err)
	}
	return q, nil
}

// queryRules lists the rules the query evaluates by namespace: the
// deny/violation/warn rules, then "exception" where the namespace has
// rules and exceptions.
func (e *Engine) queryRules(exceptions map[string]bool) map[string][]string {
	byNS := map[string][]string{}
	for _, r := range e.rules {
		byNS[r.Namespace] = append(byNS[r.Namespace], r.Name)
	}
	for ns := range exceptions {
		if _, ok := byNS[ns]; ok {
			byNS[ns] = append(byNS[ns], "exception")
		}
	}
	return byNS
}

// nsQuery renders one namespace's entry of the query object:
// "ns": {"name": data.ns.name, ...}.
func nsQuery(ns string, names []string) string {
	refs := make([]string, len(names))
	for i, name := range names {
		refs[i] = fmt.Sprintf("%q: data.%s.%s", name, nsRef(ns), name)
	}
	return fmt.Sprintf("%q: {%s}", ns, strings.Join(refs, ", "))
}

// nsRef renders a package path as a reference, quoting non-identifier parts.
func nsRef(ns string) string {
	parts := strings.Split(ns, ".")
	var b strings.Builder
	for i, p := range parts {
		if identifier.MatchString(p) {
			if i > 0 {
				b.WriteByte('.')
			}
			b.WriteString(p)
		} else {
			fmt.Fprintf(&b, "[%q]", p)
		}
	}
	return b.String()
}

// Rules lists the rules the engine runs, sorted by id.
func (e *Engine) Rules() []report.Rule {
	out := slices.Clone(e.rules)
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

func lookup(m map[string]any, keys ...string) (any, bool) {
	var cur any = m
	for _, k := range keys {
		obj, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = obj[k]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// Lint evaluates every input and returns all findings sorted, waivers
// applied. Inputs are spread over GOMAXPROCS long-lived workers (the
// prepared query is safe for concurrent use; long-lived goroutines keep the
// deep stacks OPA's evaluator grows).
func (e *Engine) Lint(ctx context.Context, inputs []Input) (*report.Report, error) {
	per := make([][]report.Finding, len(inputs))
	agents := shareAgents(inputs)
	memo := &secretMemo{}
	next := make(chan int)
	g, gctx := errgroup.WithContext(ctx)
	for range min(runtime.GOMAXPROCS(0), len(inputs)) {
		g.Go(func() error {
			terms := newTermMemo()
			for i := range next {
				fs, err := e.lintOne(gctx, &inputs[i], agents, memo, terms)
				if err != nil {
					return err
				}
				per[i] = fs
			}
			return nil
		})
	}
	g.Go(func() error {
		defer close(next)
		for i := range inputs {
			select {
			case next <- i:
			case <-gctx.Done():
				return gctx.Err()
			}
		}
		return nil
	})
	if err := g.Wait(); err != nil {
		return nil, err
	}
	rep := &report.Report{Rules: e.Rules(), Policies: len(inputs)}
	for _, fs := range per {
		rep.Findings = append(rep.Findings, fs...)
	}
	rep.Sort()
	return rep, nil
}

func (e *Engine) lintOne(ctx context.Context, in *Input, agents sharedAgents, memo *secretMemo, terms *termMemo) ([]report.Finding, error) {
	byNS, err := e.eval(ctx, in, agents, memo, terms)
	if err != nil {
		return nil, err
	}
	var out []report.Finding
	lines := &lazyLines{raw: in.Raw}
	for ns, v := range byNS {
		out = e.namespaceFindings(out, in, ns, v, lines)
	}
	for i := range out {
		if out[i].Waived == "" {
			out[i].Waived = matchWaiver(e.waivers, &out[i])
		}
	}
	return out, nil
}

// namespaceFindings appends the findings of one rule namespace's results
// (rule name -> messages, and its exceptions) to out: each at the line of
// its policy path, waived when an exception of the namespace names its
// rule.
func (e *Engine) namespaceFindings(out []report.Finding, in *Input, ns string, v any, lines *lazyLines) []report.Finding {
	sets, _ := v.(map[string]any)
	excepted := exceptionNames(sets["exception"])
	for name, msgs := range sets {
		if name == "exception" {
			continue
		}
		info := e.byRef[ns+"."+name]
		for _, m := range asList(msgs) {
			f := e.finding(in, info, m)
			f.Line = lines.line(f.PolicyPath)
			if excepted[bareName(name)] {
				f.Waived = "exception in " + ns
			}
			out = append(out, f)
		}
	}
	return out
}

// eval runs the lint query on one input and returns its result: rule
// namespace -> rule name -> messages (and exceptions). terms, when not nil,
// is the worker's memo of context terms.
func (e *Engine) eval(ctx context.Context, in *Input, agents sharedAgents, memo *secretMemo, terms *termMemo) (map[string]any, error) {
	if in.Policy == nil {
		return nil, fmt.Errorf("linting %s: no policy", in.label())
	}
	var ctxVal ast.Value
	if !in.Context.IsZero() {
		ctxVal = in.Context.valueWith(agents, terms)
	} else if e.dataContext == nil {
		ctxVal = ast.NewObject()
	} // else: the data files' context, already in the store
	factsCtx := ctxVal
	if factsCtx == nil {
		factsCtx = e.dataContext
	}
	doc := documentValue(in.Policy, terms)
	facts := factsValue(doc, in.Policy, factsCtx, memo)
	s, err := e.session(ctx)
	if err != nil {
		return nil, err
	}
	defer e.sessions.Put(s)
	txn, err := s.store.NewTransaction(ctx, storage.WriteParams)
	if err != nil {
		return nil, fmt.Errorf("linting %s: %w", in.label(), err)
	}
	defer s.store.Abort(ctx, txn)
	if ctxVal != nil {
		if err := s.store.Write(ctx, txn, storage.AddOp, contextPath, ctxVal); err != nil {
			return nil, fmt.Errorf("linting %s: context: %w", in.label(), err)
		}
	}
	if err := s.store.Write(ctx, txn, storage.AddOp, factsPath, facts); err != nil {
		return nil, fmt.Errorf("linting %s: facts: %w", in.label(), err)
	}
	rs, err := s.query.Eval(ctx, rego.EvalParsedInput(doc), rego.EvalTransaction(txn))
	if err != nil {
		return nil, fmt.Errorf("linting %s: %w", in.label(), err)
	}
	if len(rs) != 1 {
		return nil, fmt.Errorf("linting %s: query returned %d results, want 1", in.label(), len(rs))
	}
	byNS, ok := rs[0].Bindings["r"].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("linting %s: unexpected query result %T", in.label(), rs[0].Bindings["r"])
	}
	return byNS, nil
}

var (
	contextPath = storage.MustParsePath("/fullsend/context")
	factsPath   = storage.MustParsePath("/fullsend/facts")
)

// session takes a pooled session, or prepares a new one.
func (e *Engine) session(ctx context.Context) (*session, error) {
	if s, ok := e.sessions.Get().(*session); ok {
		return s, nil
	}
	return e.prepare(ctx)
}

// exceptionNames flattens conftest's `exception contains rules` value (a set
// of arrays of rule names without the deny_/warn_ prefix).
func exceptionNames(v any) map[string]bool {
	out := map[string]bool{}
	for _, group := range asList(v) {
		for _, n := range asList(group) {
			if s, ok := n.(string); ok {
				out[s] = true
			}
		}
	}
	return out
}

// bareName strips the deny/warn/violation prefix, as conftest does when it
// matches exceptions: deny_foo -> foo.
func bareName(rule string) string {
	return strings.TrimPrefix(rulePrefix.ReplaceAllString(rule, ""), "_")
}

var rulePrefix = regexp.MustCompile(`^(deny|violation|warn)`)

var identifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func asList(v any) []any {
	if l, ok := v.([]any); ok {
		return l
	}
	return nil
}

func (e *Engine) finding(in *Input, info *report.Rule, msg any) report.Finding {
	f := report.Finding{
		RuleID: info.ID, Severity: info.Severity, Title: info.Title, Rule: info.Namespace + "." + info.Name,
		Policy: in.File, Agent: in.Name,
	}
	readMessage(&f, msg)
	if src := bundle.LookupSources(in.Context.Provenance, f.PolicyPath); len(src) > 0 && f.PolicyPath != "" {
		s := src[0]
		f.Source = &s
	}
	return f
}

// readMessage reads a rule's message into f: a string, or an object with
// msg, and optionally id (which overrides the rule's) and path (the policy
// path it is about); anything else is printed.
func readMessage(f *report.Finding, msg any) {
	switch m := msg.(type) {
	case string:
		f.Message = m
	case map[string]any:
		f.Message, _ = m["msg"].(string)
		if id, ok := m["id"].(string); ok && id != "" {
			f.RuleID = id
		}
		f.PolicyPath, _ = m["path"].(string)
	default:
		f.Message = fmt.Sprint(m)
	}
}
