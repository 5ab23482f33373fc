package forge

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestRegistryMintLookupRevoke(t *testing.T) {
	r := NewRegistry()
	tok, err := r.Mint(Identity{Agent: "triage", Tier: TierWrite})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(tok, AgentTokenPrefix) || len(tok) < 40 {
		t.Fatalf("token %q is not a minted token", tok)
	}
	if ScanSecrets(tok) != "fullsend-agent-token" {
		t.Fatal("the secret scan does not recognise a minted token")
	}
	tok2, _ := r.Mint(Identity{Agent: "triage", Tier: TierWrite})
	if tok == tok2 {
		t.Fatal("two mints gave the same token")
	}
	id, err := r.Lookup(tok)
	if err != nil || id.Agent != "triage" || id.Tier != TierWrite {
		t.Fatalf("lookup: %+v %v", id, err)
	}
	r.Revoke(tok)
	if _, err := r.Lookup(tok); !errors.Is(err, ErrUnknownToken) {
		t.Fatalf("revoked token: %v", err)
	}
	for _, bad := range []Identity{{Agent: "Bad Name", Tier: TierRead}, {Agent: "../etc", Tier: TierRead}, {Agent: "x", Tier: "admin"}, {Agent: "", Tier: TierRead}} {
		if _, err := r.Mint(bad); err == nil {
			t.Errorf("minted for %+v", bad)
		}
	}
}

func TestRegistryLoad(t *testing.T) {
	tok := "fsa_" + strings.Repeat("q", 43)
	good := fmt.Sprintf("# comment\n\n{\"agent\":\"triage\",\"tier\":\"write\",\"sha256\":%q}\n", TokenHash(tok))
	r := NewRegistry()
	if err := r.Load("tokens.jsonl", strings.NewReader(good)); err != nil {
		t.Fatal(err)
	}
	if id, err := r.Lookup(tok); err != nil || id.Agent != "triage" {
		t.Fatalf("loaded token: %+v %v", id, err)
	}
	bad := []struct{ in, want string }{
		{`{"agent":"triage","tier":"write"`, "tokens.jsonl:1"},
		{`{"agent":"triage","tier":"write","sha256":"00","x":1}`, "unknown field"},
		{`{"agent":"Tri age","tier":"write","sha256":"00"}`, "field agent"},
		{`{"agent":"triage","tier":"root","sha256":"00"}`, "field tier"},
		{"\n{\"agent\":\"triage\",\"tier\":\"read\",\"sha256\":\"zz\"}", "tokens.jsonl:2: field sha256"},
	}
	for _, tc := range bad {
		if err := NewRegistry().Load("tokens.jsonl", strings.NewReader(tc.in)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Load(%q) = %v, want %q", tc.in, err, tc.want)
		}
	}
}

func TestCredentialNeverRenders(t *testing.T) {
	c, err := NewCredential("  " + testForgeToken + "\n")
	if err != nil {
		t.Fatal(err)
	}
	j, _ := json.Marshal(struct{ C Credential }{c})
	for _, s := range []string{fmt.Sprint(c), fmt.Sprintf("%v %+v %#v %s %q %x", c, c, c, c, c, c), string(j)} {
		if strings.Contains(s, testForgeToken) || !strings.Contains(s, redacted) {
			t.Errorf("credential rendered as %q", s)
		}
	}
	if c.reveal() != testForgeToken {
		t.Fatal("whitespace was not trimmed")
	}
	for _, bad := range []string{"", "  \n", "a b", "a\x00b"} {
		if _, err := NewCredential(bad); err == nil {
			t.Errorf("accepted %q", bad)
		}
	}
	t.Setenv("FULLSEND_TEST_TOKEN", testForgeToken)
	if c, err := CredentialFromEnv("FULLSEND_TEST_TOKEN"); err != nil || c.reveal() != testForgeToken {
		t.Fatalf("from env: %v", err)
	}
	if _, err := CredentialFromEnv("FULLSEND_TEST_TOKEN_UNSET"); err == nil {
		t.Fatal("unset env accepted")
	}
}

func TestTierFromManifest(t *testing.T) {
	for in, want := range map[string]Tier{"full": TierWrite, "network": TierRead, "read-only": TierRead, "": TierRead, "FULL": TierRead} {
		if got := TierFromManifest(in); got != want {
			t.Errorf("%q -> %q, want %q", in, got, want)
		}
	}
}
