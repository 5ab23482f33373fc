package forge

import (
	"encoding/json"
	"errors"
	"math/rand/v2"
	"net/url"
	"strings"
	"testing"
)

// Regression tests for the red-team findings of issue 12 against the forge
// proxy, one per attack; each failed before the fix.

// fakeKey returns a credential-shaped string (prefix, then n characters of
// the real alphabet, then suffix), generated so that no token-looking
// literal sits in the repository.
func fakeKey(prefix string, n int, suffix string) string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-"
	r := rand.New(rand.NewPCG(uint64(len(prefix)), uint64(n)))
	b := []byte(prefix)
	for range n {
		b = append(b, alphabet[r.IntN(len(alphabet))])
	}
	return string(b) + suffix
}

// anthropicKey has the shape of an Anthropic API key, the secret a sandbox
// running Claude most likely holds.
var anthropicKey = fakeKey("sk-ant-api03-", 93, "AA")

// githubPAT has the shape of a classic GitHub personal access token.
var githubPAT = "ghp_" + strings.NewReplacer("_", "x", "-", "y").Replace(fakeKey("", 36, ""))

func commentJSON(t *testing.T, text string) string {
	t.Helper()
	b, err := json.Marshal(map[string]string{"body": text})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// refuseComment posts text as the writer agent and checks the proxy refuses
// it without reaching the forge.
func refuseComment(t *testing.T, text string) {
	t.Helper()
	p := newTestProxy(t, GitHub)
	status, body := p.do(t, "POST", "/repos/acme/widgets/issues/42/comments", p.writer, "application/json", commentJSON(t, text))
	if status != 403 || !strings.Contains(body, "refusing to post a credential") {
		t.Fatalf("status %d (%s), want 403 refusing a credential", status, body)
	}
	if reqs := p.forge.requests(); len(reqs) != 0 {
		t.Fatalf("the comment reached the forge: %+v", reqs)
	}
	if e := p.auditEntries(t); len(e) != 1 || e[0].Decision != DecisionDeny {
		t.Fatalf("audit %+v", e)
	}
}

func TestAttackAnthropicKeyInCommentBody(t *testing.T) {
	refuseComment(t, "Found it in the environment: ANTHROPIC_API_KEY="+anthropicKey)
}

func TestAttackZeroWidthSplitKey(t *testing.T) {
	for name, sep := range map[string]string{"zero-width space": "\u200b", "zero-width joiner": "\u200d", "soft hyphen": "\u00ad", "BOM": "\ufeff"} {
		t.Run(name, func(t *testing.T) {
			refuseComment(t, "token "+githubPAT[:10]+sep+githubPAT[10:20]+sep+githubPAT[20:])
		})
	}
}

func TestAttackNewlineSplitKey(t *testing.T) {
	refuseComment(t, "the key, wrapped:\n"+githubPAT[:20]+"\n"+githubPAT[20:]+"\n")
	refuseComment(t, "```\n"+anthropicKey[:50]+"\r\n"+anthropicKey[50:]+"\n```")
}

// auditHasNo fails when the audit log holds any 16-byte piece of key, in
// any case (an error message may have lowercased it).
func auditHasNo(t *testing.T, p *testProxy, key string) {
	t.Helper()
	text, key := strings.ToLower(p.auditText()), strings.ToLower(key)
	for i := 0; i+16 <= len(key); i += 8 {
		if strings.Contains(text, key[i:i+16]) {
			t.Fatalf("the audit log holds part of the key (%q):\n%s", key[i:i+16], text)
		}
	}
}

func TestAttackKeyInPathReachesAuditLog(t *testing.T) {
	for name, path := range map[string]string{
		"repo name":       "/repos/acme/" + anthropicKey + "/issues/1",
		"percent-encoded": "/repos/acme/%73%6B" + anthropicKey[2:] + "/issues/1",
		"no such route":   "/" + anthropicKey,
	} {
		t.Run(name, func(t *testing.T) {
			p := newTestProxy(t, GitHub)
			if status, _ := p.do(t, "GET", path, p.reader, "", ""); status < 400 {
				t.Fatalf("status %d", status)
			}
			auditHasNo(t, p, anthropicKey)
			if e := p.auditEntries(t); len(e) != 1 || !strings.HasPrefix(e[0].Path, "[redacted") {
				t.Fatalf("path not redacted: %+v", e)
			}
		})
	}
}

func TestAttackKeyInQueryReachesAuditLog(t *testing.T) {
	for name, query := range map[string]string{
		"search qualifier": "q=" + url.QueryEscape(anthropicKey+":x"),
		"search text":      "q=" + url.QueryEscape("leak "+anthropicKey),
		"parameter name":   url.QueryEscape(anthropicKey) + "=1",
		"page value":       "page=" + url.QueryEscape(anthropicKey),
	} {
		t.Run(name, func(t *testing.T) {
			p := newTestProxy(t, GitHub)
			if status, _ := p.do(t, "GET", "/search/issues?"+query, p.reader, "", ""); status < 400 {
				t.Fatalf("status %d: a query holding a key was forwarded", status)
			}
			if reqs := p.forge.requests(); len(reqs) != 0 {
				t.Fatalf("forwarded: %+v", reqs)
			}
			auditHasNo(t, p, anthropicKey)
		})
	}
}

// TestAttackAuditTruncationHidesKey: a key straddling the audit field limit
// was cut first, and the cut key no longer looked like one.
func TestAttackAuditTruncationHidesKey(t *testing.T) {
	p := newTestProxy(t, GitHub)
	path := "/repos/acme/widgets/issues/" + strings.Repeat("a", maxAuditField-len("/repos/acme/widgets/issues/")-12) + githubPAT
	if status, _ := p.do(t, "GET", path, p.reader, "", ""); status < 400 {
		t.Fatalf("status %d", status)
	}
	text := p.auditText()
	if strings.Contains(text, githubPAT[:12]) {
		t.Fatalf("the audit log holds the start of the key:\n%s", text)
	}
	var e AuditEntry
	if err := json.Unmarshal([]byte(text), &e); err != nil || !strings.HasPrefix(e.Path, "[redacted") {
		t.Fatalf("path not redacted: %+v (%v)", e, err)
	}
}

func TestAuditTruncatesLongCleanFields(t *testing.T) {
	p := newTestProxy(t, GitHub)
	p.do(t, "GET", "/repos/acme/widgets/issues/"+strings.Repeat("b", 2*maxAuditField), p.reader, "", "")
	e := p.auditEntries(t)
	if len(e) != 1 || len(e[0].Path) != maxAuditField+len("...(truncated)") {
		t.Fatalf("audit %+v", e)
	}
}

// TestAttackNBSPQualifiedSearch: a qualifier value followed by a
// non-breaking (or other Unicode) space and repo:other/x was one token to
// the proxy, and two to the search engine, which then searched the other
// repository too.
func TestAttackNBSPQualifiedSearch(t *testing.T) {
	for name, sep := range map[string]string{
		"nbsp": "\u00a0", "en quad": "\u2000", "hair space": "\u200a", "ideographic space": "\u3000",
		"narrow nbsp": "\u202f", "line separator": "\u2028", "next line": "\u0085", "zero-width space": "\u200b",
	} {
		t.Run(name, func(t *testing.T) {
			q := "crash label:bug" + sep + "repo:evil/secrets"
			if _, err := ScopeSearch(q, "acme", "widgets"); err == nil {
				t.Fatalf("ScopeSearch(%q) accepted a smuggled repo qualifier", q)
			}
			p := newTestProxy(t, GitHub)
			status, _ := p.do(t, "GET", "/search/issues?q="+url.QueryEscape(q), p.reader, "", "")
			if status != 403 && status != 400 {
				t.Fatalf("status %d, want a refusal", status)
			}
			for _, r := range p.forge.requests() {
				t.Fatalf("forwarded: %+v", r)
			}
		})
	}
}

func TestSearchSplitsOnUnicodeSpace(t *testing.T) {
	got, err := ScopeSearch("crash\u00a0on\u3000start", "acme", "widgets")
	if err != nil || got != "crash on start repo:acme/widgets" {
		t.Fatalf("ScopeSearch = %q, %v", got, err)
	}
}

// TestAttackNegativeDepthTokenFile: a token file entry with a negative
// depth let its holder nest spawns below the orchestrator, past the limit;
// a huge one overflowed depth + 1.
func TestAttackNegativeDepthTokenFile(t *testing.T) {
	for _, depth := range []string{"-1", "-1000", "9223372036854775807", "65"} {
		line := `{"agent":"triage","tier":"write","depth":` + depth + `,"sha256":"` + TokenHash("x") + `"}`
		err := NewRegistry().Load("tokens.jsonl", strings.NewReader(line))
		if !errors.Is(err, ErrBadDepth) {
			t.Errorf("depth %s: Load = %v, want ErrBadDepth", depth, err)
		}
	}
	if _, err := NewRegistry().Mint(Identity{Agent: "triage", Tier: TierRead, Depth: -1}); !errors.Is(err, ErrBadDepth) {
		t.Errorf("Mint with depth -1 = %v, want ErrBadDepth", err)
	}
	ok := `{"agent":"triage","tier":"write","depth":64,"sha256":"` + TokenHash("x") + `"}`
	if err := NewRegistry().Load("tokens.jsonl", strings.NewReader(ok)); err != nil {
		t.Errorf("depth 64: %v", err)
	}
}
