package main

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/time/rate"

	"github.com/fullsend-ai/agent-sandbox/bundle"
	"github.com/fullsend-ai/agent-sandbox/cienv"
	"github.com/fullsend-ai/agent-sandbox/forge"
	"github.com/fullsend-ai/agent-sandbox/handover"
	"github.com/fullsend-ai/agent-sandbox/runner"
	"github.com/fullsend-ai/agent-sandbox/spawn"
)

// newServeCmd groups the host-side services sandboxes talk to.
func newServeCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the host-side forge proxy and subagent-spawning services",
		Example: `  GITHUB_TOKEN=... fullsend serve forge --listen 127.0.0.1:0 --repo acme/widgets --issue 42 --mint summarizer:read=summarizer.token
  GITHUB_TOKEN=... fullsend serve agents . --listen 127.0.0.1:0 --forge-listen 127.0.0.1:0 --repo acme/widgets --runner "fullsend run"`,
		Args: cobra.NoArgs,
	}
	cmd.AddCommand(newServeForgeCmd(), newServeAgentsCmd())
	return cmd
}

// forgeFlags are the flags of the forge proxy, shared by both commands.
type forgeFlags struct {
	kind, upstream, tokenEnv, tokenFile, gitlabHeader string
	repo                                              string
	issue, maxComment, maxWrites                      int
	labels                                            []string
	listen, audit, agentTokens                        string
	output                                            outputFormat
	upstreamTimeout                                   time.Duration
}

func (f *forgeFlags) register(cmd *cobra.Command, listenFlag string) {
	fs := cmd.Flags()
	fs.StringVar(&f.kind, "forge", "github", "forge kind: github or gitlab")
	fs.StringVar(&f.upstream, "upstream", "", "forge API base URL (default https://api.github.com or https://gitlab.com/api/v4)")
	fs.StringVar(&f.tokenEnv, "token-env", "", "environment variable holding the forge token (default GITHUB_TOKEN, or GITLAB_TOKEN)")
	fs.StringVar(&f.tokenFile, "token-file", "", "file holding the forge token (instead of --token-env)")
	fs.StringVar(&f.gitlabHeader, "gitlab-token-header", "PRIVATE-TOKEN", "GitLab auth header: PRIVATE-TOKEN or JOB-TOKEN")
	fs.StringVar(&f.repo, "repo", os.Getenv("GITHUB_REPOSITORY"), "the only repository served, owner/repo (default $GITHUB_REPOSITORY)")
	fs.IntVar(&f.issue, "issue", 0, "the only issue number writes may target (0 refuses all writes)")
	fs.StringArrayVar(&f.labels, "label", nil, "a label agents may add (repeatable; none refuses label writes)")
	fs.IntVar(&f.maxComment, "max-comment-bytes", 65536, "largest comment body")
	fs.IntVar(&f.maxWrites, "max-writes", 20, "writes (comments, label calls) forwarded over the proxy's lifetime")
	fs.StringVar(&f.listen, listenFlag, forge.DefaultListen, "address the forge proxy listens on")
	fs.StringVar(&f.audit, "audit", "-", "audit log file (JSON lines, appended); - for stderr")
	fs.StringVar(&f.agentTokens, "agent-tokens", "", "file of agent token hashes (JSON lines: agent, tier, sha256)")
	fs.DurationVar(&f.upstreamTimeout, "upstream-timeout", 30*time.Second, "timeout of one forge API call")
	addOutputFlag(cmd, &f.output)
}

// build returns the forge proxy configuration and the audit file to close.
func (f *forgeFlags) build(errw io.Writer) (forge.Config, io.Closer, error) {
	var cfg forge.Config
	cfg.Kind = forge.Kind(f.kind)
	owner, repo, err := forge.ParseRepo(f.repo)
	if err != nil {
		return cfg, nil, usageErrorf("--repo: %v", err)
	}
	cfg.Scope = forge.Scope{Owner: owner, Repo: repo, Issue: f.issue, Labels: f.labels, MaxCommentBytes: f.maxComment}
	if cfg.Credential, err = f.credential(cfg.Kind); err != nil {
		return cfg, nil, err
	}
	cfg.Upstream, cfg.GitLabTokenHeader, cfg.UpstreamTimeout = f.upstream, f.gitlabHeader, f.upstreamTimeout
	cfg.MaxWrites = f.maxWrites
	cfg.Registry = forge.NewRegistry()
	if err := f.loadAgentTokens(cfg.Registry); err != nil {
		return cfg, nil, err
	}
	cfg.ErrorLog = log.New(errw, "fullsend serve: ", log.LstdFlags)
	w, closer, err := f.auditLog(errw)
	if err != nil {
		return cfg, nil, err
	}
	cfg.Audit = forge.NewAudit(w)
	return cfg, closer, nil
}

// credential reads the forge token from --token-file or --token-env
// (default GITLAB_TOKEN for GitLab, else GITHUB_TOKEN).
func (f *forgeFlags) credential(kind forge.Kind) (forge.Credential, error) {
	switch {
	case f.tokenFile != "" && f.tokenEnv != "":
		return forge.Credential{}, usageErrorf("--token-file and --token-env are exclusive")
	case f.tokenFile != "":
		return forge.CredentialFromFile(f.tokenFile)
	}
	env := cmp.Or(f.tokenEnv, map[forge.Kind]string{forge.GitLab: "GITLAB_TOKEN"}[kind], "GITHUB_TOKEN")
	return forge.CredentialFromEnv(env)
}

// loadAgentTokens loads the --agent-tokens file, if any, into reg.
func (f *forgeFlags) loadAgentTokens(reg *forge.Registry) error {
	if f.agentTokens == "" {
		return nil
	}
	tf, err := os.Open(f.agentTokens)
	if err != nil {
		return fmt.Errorf("--agent-tokens: %w", err)
	}
	defer tf.Close()
	return reg.Load(f.agentTokens, tf)
}

// auditLog is where the audit goes: errw for "-", else the --audit file
// (appended), which the caller closes.
func (f *forgeFlags) auditLog(errw io.Writer) (io.Writer, io.Closer, error) {
	if f.audit == "-" {
		return errw, io.NopCloser(nil), nil
	}
	af, err := os.OpenFile(f.audit, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, nil, fmt.Errorf("--audit: %w", err)
	}
	return af, af, nil
}

// mintFlag is one --mint AGENT[:TIER]=FILE.
type mintFlag struct{ agent, tier, file string }

func parseMints(vals []string, tierRequired bool) ([]mintFlag, error) {
	var out []mintFlag
	for _, v := range vals {
		who, file, ok := strings.Cut(v, "=")
		agent, tier, hasTier := strings.Cut(who, ":")
		if !ok || file == "" || agent == "" || (tierRequired && !hasTier) {
			form := "AGENT[:TIER]=FILE"
			if tierRequired {
				form = "AGENT:TIER=FILE"
			}
			return nil, usageErrorf("--mint %q: want %s", v, form)
		}
		out = append(out, mintFlag{agent, tier, file})
	}
	return out, nil
}

func listen(addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listening on %s: %w (hint: host.docker.internal resolves inside containers; on the host pass --listen with the docker bridge address, e.g. 172.17.0.1:8081)", addr, err)
	}
	return ln, nil
}

func newServeForgeCmd() *cobra.Command {
	var ff forgeFlags
	var mints []string
	cmd := &cobra.Command{
		Use:   "forge",
		Short: "Serve the credential-holding forge proxy sandboxes call instead of the forge API",
		Long: `Serve the forge proxy: it holds the forge token (from --token-env or --token-file),
accepts only the GitHub-shaped endpoints agents need, authenticates every sandbox by
its own minted bearer token, applies that agent's tier and the configured repository,
issue and label scope, refuses bodies that carry credentials, and audits every call.`,
		Example: `  GITHUB_TOKEN=... fullsend serve forge --repo acme/widgets --issue 42 \
      --label duplicate --label needs-info --mint summarizer:write=summarizer.token
  CI_JOB_TOKEN=... fullsend serve forge --forge gitlab --token-env CI_JOB_TOKEN --gitlab-token-header JOB-TOKEN \
      --repo acme/widgets --listen 172.17.0.1:8081 --agent-tokens tokens.jsonl`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ms, err := parseMints(mints, true)
			if err != nil {
				return err
			}
			cfg, closer, err := ff.build(cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			defer closer.Close()
			srv, err := forge.New(cfg)
			if errors.Is(err, forge.ErrNoCredential) {
				return fmt.Errorf("%w (hint: --token-env or --token-file)", err)
			}
			if err != nil {
				return err
			}
			if err := mintAll(cfg.Registry, ms); err != nil {
				return err
			}
			ln, err := listen(ff.listen)
			if err != nil {
				return err
			}
			if err := printListening(cmd.OutOrStdout(), ff.output, "forge", ln.Addr().String(), cfg); err != nil {
				ln.Close()
				return err
			}
			return srv.Serve(cmd.Context(), ln)
		},
	}
	ff.register(cmd, "listen")
	cmd.Flags().StringArrayVar(&mints, "mint", nil, "mint a token for AGENT:TIER (read or write) and write it to FILE (mode 0600); repeatable")
	return cmd
}

// agentsCmd holds the flags of serve agents.
type agentsCmd struct {
	ff                              forgeFlags
	mints, passEnv                  []string
	manifest, listenAddr, runnerCmd string
	digest                          string
	forgeURL, spawnURL              string
	maxConc, maxQueue, maxDep, brst int
	queueWait, timeout              time.Duration
	rps                             float64
}

func newServeAgentsCmd() *cobra.Command {
	var c agentsCmd
	cmd := &cobra.Command{
		Use:   "agents [DIR]",
		Short: "Serve POST /run-agent (subagents in fresh sandboxes) together with the forge proxy",
		Long: `Serve the subagent-spawning service and, in the same process, the forge proxy. An
orchestrator asks POST /run-agent {"agent":NAME,"prompt":TEXT} with its bearer token;
the service checks the policy manifest's Agent(...) list of the caller, mints the
subagent its own forge token with its own tier, runs it through --runner in a fresh
sandbox, and answers its JSON result and exit status.

The manifest is pinned by --policies-digest (FULLSEND_POLICIES_DIGEST, the digest
fullsend verify exported): its sha256 must match, and every subagent run gets the
same digest as FULLSEND_POLICIES_DIGEST. In CI (GitHub Actions, GitLab CI) the
service refuses to start without one (exit 78).`,
		Example: `  GITHUB_TOKEN=... FULLSEND_POLICIES_DIGEST="$(sha256sum policies/manifest.json | cut -c1-64)" \
      fullsend serve agents . --repo acme/widgets --issue 42 --label duplicate --runner "fullsend run" \
      --mint summarizer=summarizer.token`,
		Args: cobra.MaximumNArgs(1),
		RunE: c.run,
	}
	c.ff.register(cmd, "forge-listen")
	fs := cmd.Flags()
	fs.StringVar(&c.manifest, "manifest", "policies", "directory holding the compiled policies and manifest.json (deprecated: give the project as DIR, default .)")
	_ = fs.MarkDeprecated("manifest", "give the compiled project directory as the DIR argument (its policies/ is read)")
	fs.StringVar(&c.digest, "policies-digest", os.Getenv(handover.PoliciesDigest), "sha256 of manifest.json, as exported by fullsend verify (env FULLSEND_POLICIES_DIGEST); required in CI; every subagent run gets it")
	fs.StringVar(&c.listenAddr, "listen", spawn.DefaultListen, "address the spawn service listens on")
	fs.StringVar(&c.runnerCmd, "runner", "fullsend run", "command that runs one agent in a fresh sandbox (agent name appended, prompt on stdin, JSON result on stdout)")
	fs.StringArrayVar(&c.passEnv, "pass-env", nil, "variable passed from this environment to the runner (repeatable; default PATH HOME TMPDIR LANG)")
	fs.StringVar(&c.forgeURL, "forge-url", "", "forge proxy URL as sandboxes reach it (default http://<forge-listen>)")
	fs.StringVar(&c.spawnURL, "spawn-url", "", "spawn service URL as sandboxes reach it (default http://<listen>)")
	fs.IntVar(&c.maxConc, "max-concurrent", 4, "sandboxes running at once")
	fs.IntVar(&c.maxQueue, "max-queue", 16, "spawn requests waiting for a slot; more are refused (503)")
	fs.DurationVar(&c.queueWait, "queue-wait", 2*time.Minute, "longest wait for a slot")
	fs.DurationVar(&c.timeout, "timeout", 15*time.Minute, "longest subagent run")
	fs.IntVar(&c.maxDep, "max-depth", 1, "deepest spawn nesting (1: the orchestrator spawns, subagents do not)")
	fs.Float64Var(&c.rps, "rate", 1, "spawn requests per second, across callers")
	fs.IntVar(&c.brst, "burst", 8, "spawn request burst")
	fs.StringArrayVar(&c.mints, "mint", nil, "mint a token for AGENT (tier from the manifest) and write it to FILE (mode 0600); repeatable")
	return cmd
}

func (c *agentsCmd) run(cmd *cobra.Command, args []string) error {
	if err := c.projectArg(cmd, args); err != nil {
		return err
	}
	ms, err := parseMints(c.mints, false)
	if err != nil {
		return err
	}
	m, err := pinnedManifest(cmd.ErrOrStderr(), c.manifest, c.digest, cienv.Detect(os.Getenv))
	if err != nil {
		return err
	}
	cr := &spawn.CommandRunner{Args: strings.Fields(c.runnerCmd), PassEnv: c.passEnv, Stderr: cmd.ErrOrStderr(), PoliciesDigest: c.digest}
	if err := cr.Validate(); err != nil {
		return usageErrorf("--runner: %v", err)
	}
	cfg, closer, err := c.ff.build(cmd.ErrOrStderr())
	if err != nil {
		return err
	}
	defer closer.Close()
	sc, err := c.stackConfig(cfg, m, cr, ms)
	if err != nil {
		return err
	}
	stack, err := spawn.NewStack(sc)
	if me := (*spawn.MintError)(nil); errors.As(err, &me) {
		return usageErrorf("--mint %s: %v", me.Agent, me.Err)
	}
	if err != nil {
		return err
	}
	return c.serve(cmd, stack, cfg)
}

// projectArg takes DIR, the compiled project, whose policies directory
// --manifest (deprecated) named.
func (c *agentsCmd) projectArg(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	policies := filepath.Join(args[0], "policies")
	if cmd.Flags().Changed("manifest") && filepath.Clean(c.manifest) != policies {
		return usageErrorf("directory given twice: %q and --manifest %q", args[0], c.manifest)
	}
	c.manifest = policies
	return nil
}

// stackConfig is the configuration of the forge proxy and spawn service
// stack; a --mint tier is refused for an agent of the manifest (its tier
// comes from there).
func (c *agentsCmd) stackConfig(cfg forge.Config, m *bundle.Manifest, cr *spawn.CommandRunner, ms []mintFlag) (spawn.StackConfig, error) {
	sc := spawn.StackConfig{
		Forge: cfg, ForgeListen: c.ff.listen, Listen: c.listenAddr,
		Service: spawn.Config{
			Manifest: m, Runner: cr, ForgeURL: c.forgeURL, SpawnURL: c.spawnURL,
			MaxConcurrent: c.maxConc, MaxQueue: c.maxQueue, QueueWait: c.queueWait, Timeout: c.timeout,
			MaxDepth: c.maxDep, Rate: rate.Limit(c.rps), Burst: c.brst,
		},
	}
	for _, mt := range ms {
		if entry, ok := m.Agents[mt.agent]; ok && mt.tier != "" {
			return sc, usageErrorf("--mint %s: the tier comes from the manifest (%s); drop :%s", mt.agent, entry.Tier, mt.tier)
		}
		sc.Mints = append(sc.Mints, spawn.Mint{Agent: mt.agent, File: mt.file})
	}
	return sc, nil
}

// serve listens for the forge proxy and the spawn service, says where,
// and serves both.
func (c *agentsCmd) serve(cmd *cobra.Command, stack *spawn.Stack, cfg forge.Config) error {
	fln, err := listen(c.ff.listen)
	if err != nil {
		return err
	}
	sln, err := listen(c.listenAddr)
	if err != nil {
		fln.Close()
		return err
	}
	out := cmd.OutOrStdout()
	err = printListening(out, c.ff.output, "forge", fln.Addr().String(), cfg)
	if err == nil {
		err = printListening(out, c.ff.output, "agents", sln.Addr().String(), cfg)
	}
	if err != nil {
		fln.Close()
		sln.Close()
		return err
	}
	return stack.Serve(cmd.Context(), fln, sln)
}

// pinnedManifest reads the manifest the service authorizes spawns from.
// Pinned, its sha256 must equal digest (what the verify step exported), and
// the children get the same digest; unpinned is refused in CI and said
// elsewhere.
func pinnedManifest(errw io.Writer, dir, digest string, ci cienv.Env) (*bundle.Manifest, error) {
	if digest == "" {
		if ci.IsCI() {
			err := fmt.Errorf("%w: in CI (%s) the service spawns only the signed project the verify step checked, named by its policies digest", runner.ErrUnpinned, ci.Kind())
			return nil, exitError{code: runner.ExitPolicy, err: cliError(err, nil)}
		}
		fmt.Fprintf(errw, "fullsend serve agents: warning: policies digest not pinned: %s is used as found and subagents run unpinned (refused in CI)\n", dir)
	}
	b, err := bundle.Open(os.DirFS(dir), ".", bundle.WithDigest(digest), bundle.WithAgents())
	switch {
	case errors.Is(err, bundle.ErrDigestMismatch), errors.Is(err, bundle.ErrInvalidDigest):
		return nil, exitError{code: runner.ExitPolicy, err: fmt.Errorf("--manifest %s: %w", dir, err)}
	case err != nil:
		return nil, fmt.Errorf("--manifest: %w", err)
	}
	return b.Manifest, nil
}

// mintAll mints a token for each --mint AGENT:TIER=FILE and writes it to
// FILE.
func mintAll(reg *forge.Registry, ms []mintFlag) error {
	for _, m := range ms {
		tier, err := forge.ParseTier(m.tier)
		if err != nil {
			return usageErrorf("--mint %s: %v", m.agent, err)
		}
		if err := mintTo(reg, forge.Identity{Agent: m.agent, Tier: tier}, m.file); err != nil {
			return err
		}
	}
	return nil
}

func mintTo(reg *forge.Registry, id forge.Identity, file string) error {
	tok, err := reg.Mint(id)
	if err != nil {
		return usageErrorf("--mint: %v", err)
	}
	return forge.WriteTokenFile(file, tok)
}

func printListening(w io.Writer, output outputFormat, service, addr string, cfg forge.Config) error {
	repo := cfg.Scope.Owner + "/" + cfg.Scope.Repo
	if output == outputJSON {
		return writeJSON(w, map[string]any{"service": service, "listen": addr, "repo": repo, "issue": cfg.Scope.Issue, "routes": forge.Routes()})
	}
	_, err := fmt.Fprintf(w, "fullsend serve %s: listening on %s (repo %s, writes to issue %d)\n", service, addr, repo, cfg.Scope.Issue)
	return err
}
