package spawn

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fullsend-ai/agent-sandbox/forge"
)

// TestNewStack checks the serve-agents wiring: one registry shared by the
// proxy and the service, tokens minted at the manifest's tier, and nothing
// written when a mint is refused.
func TestNewStack(t *testing.T) {
	cred, err := forge.NewCredential("ghp_stacktest")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		mints   []string
		runner  Runner
		fails   bool
		wantErr error // with fails, the error it wraps (nil: any)
		written []string
	}{
		{name: "mints at manifest tiers", mints: []string{"triage", "duplicate-detector"}, runner: &okRunner{}, written: []string{"triage", "duplicate-detector"}},
		{name: "agent not in manifest", mints: []string{"nobody"}, runner: &okRunner{}, fails: true, wantErr: ErrNotInManifest},
		{name: "no runner", mints: []string{"triage"}, fails: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			m := loadManifest(t)
			reg := forge.NewRegistry()
			cfg := StackConfig{
				Forge:       forge.Config{Upstream: "https://forge.invalid", Credential: cred, Registry: reg, Scope: forge.Scope{Owner: "acme", Repo: "widgets"}},
				ForgeListen: "127.0.0.1:8081", Listen: "127.0.0.1:8082",
				Service: Config{Manifest: m, Runner: tt.runner},
			}
			for _, a := range tt.mints {
				cfg.Mints = append(cfg.Mints, Mint{Agent: a, File: filepath.Join(dir, a+".token")})
			}
			st, err := NewStack(cfg)
			switch {
			case tt.fails != (err != nil), tt.wantErr != nil && !errors.Is(err, tt.wantErr):
				t.Fatalf("NewStack: %v, want failure %v (%v)", err, tt.fails, tt.wantErr)
			case err == nil && st.service.cfg.Registry != reg:
				t.Fatal("the service does not share the proxy's registry")
			case err == nil && st.service.cfg.ForgeURL != "http://127.0.0.1:8081":
				t.Fatalf("default forge URL %q", st.service.cfg.ForgeURL)
			}
			for _, a := range tt.mints {
				b, err := os.ReadFile(filepath.Join(dir, a+".token"))
				if !slices.Contains(tt.written, a) {
					if err == nil {
						t.Errorf("%s: token file written although the stack was refused", a)
					}
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
				id, err := reg.Lookup(strings.TrimSpace(string(b)))
				if want := forge.TierFromManifest(m.Agents[a].Tier); err != nil || id.Agent != a || id.Tier != want {
					t.Errorf("%s: token resolves to %+v, %v; want tier %v", a, id, err, want)
				}
			}
		})
	}
}
