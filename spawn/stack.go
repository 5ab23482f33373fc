package spawn

import (
	"context"
	"errors"
	"fmt"
	"net"

	"golang.org/x/sync/errgroup"

	"github.com/fullsend-ai/agent-sandbox/forge"
)

// Stack is what `fullsend serve agents` runs: the spawn service and the
// forge proxy its sandboxes call, in one process. The two share one token
// registry and one audit log, so the proxy knows every token the service
// mints for a subagent.
type Stack struct {
	proxy   *forge.Server
	service *Service
}

// StackConfig configures a Stack.
type StackConfig struct {
	// Forge configures the proxy. Its Registry, Audit and ErrorLog are the
	// service's too (Service's own are ignored).
	Forge forge.Config
	// Service configures the spawn service. An empty ForgeURL or SpawnURL
	// defaults to http:// and ForgeListen or Listen.
	Service Config
	// ForgeListen and Listen are the addresses the proxy and the service
	// will listen on, as given; they only fill the default URLs.
	ForgeListen, Listen string
	// Mints are tokens minted before serving, each for a manifest agent at
	// its manifest tier.
	Mints []Mint
}

// Mint asks for one agent's token, written to File (mode 0600).
type Mint struct {
	Agent string
	File  string
}

// ErrNotInManifest is a Mint for an agent the manifest does not hold.
var ErrNotInManifest = errors.New("not in the manifest")

// MintError is a Mint the service refused; Err is ErrNotInManifest or the
// registry's refusal.
type MintError struct {
	Agent string
	Err   error
}

func (e *MintError) Error() string { return fmt.Sprintf("mint %s: %v", e.Agent, e.Err) }
func (e *MintError) Unwrap() error { return e.Err }

// NewStack builds the proxy and the service from cfg and mints cfg.Mints.
// A token file is written only after both were built.
func NewStack(cfg StackConfig) (*Stack, error) {
	proxy, err := forge.New(cfg.Forge)
	if err != nil {
		return nil, err
	}
	sc := cfg.Service
	sc.Registry, sc.Audit, sc.ErrorLog = cfg.Forge.Registry, cfg.Forge.Audit, cfg.Forge.ErrorLog
	if sc.ForgeURL == "" {
		sc.ForgeURL = "http://" + cfg.ForgeListen
	}
	if sc.SpawnURL == "" {
		sc.SpawnURL = "http://" + cfg.Listen
	}
	svc, err := New(sc)
	if err != nil {
		return nil, err
	}
	for _, m := range cfg.Mints {
		if err := mint(sc, m); err != nil {
			return nil, err
		}
	}
	return &Stack{proxy: proxy, service: svc}, nil
}

// mint writes m's token: the agent's identity with its manifest tier.
func mint(sc Config, m Mint) error {
	entry, ok := sc.Manifest.Agents[m.Agent]
	if !ok {
		return &MintError{Agent: m.Agent, Err: fmt.Errorf("%w (have %v)", ErrNotInManifest, sc.Manifest.AgentNames())}
	}
	tok, err := sc.Registry.Mint(forge.Identity{Agent: m.Agent, Tier: forge.TierFromManifest(entry.Tier)})
	if err != nil {
		return &MintError{Agent: m.Agent, Err: err}
	}
	return forge.WriteTokenFile(m.File, tok)
}

// Serve serves the proxy on forgeLn and the service on spawnLn until ctx is
// cancelled or either fails; the other is then stopped too. It returns once
// both have shut down (running subagents included).
func (s *Stack) Serve(ctx context.Context, forgeLn, spawnLn net.Listener) error {
	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error { return s.proxy.Serve(ctx, forgeLn) })
	g.Go(func() error { return s.service.Serve(ctx, spawnLn) })
	return g.Wait()
}
