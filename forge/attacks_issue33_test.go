package forge

import (
	"net/url"
	"strconv"
	"strings"
	"testing"
)

// Regression tests for the red-team findings of issue 33 against the forge
// proxy (reviews/redteam5-2026-12-01.md T5-2, T5-3, T5-4); each failed
// before the fix.

// TestAttackSearchQuoteDifferential (T5-2): the tokenizer took every double
// quote as a toggle and knew no backslash, so a query that a forge reading
// `\"` as an escaped quote splits differently reached the forge with a
// free-standing repo:other/x, and GitHub ORs repo qualifiers.
func TestAttackSearchQuoteDifferential(t *testing.T) {
	queries := map[string]string{
		"escaped quotes":      `label:\" repo:other/x \"`,
		"escaped in a phrase": `"a \" repo:other/x \" b"`,
		"mid-token quote":     `label:x"y repo:other/x"`,
		"quote after phrase":  `label:"a"" repo:other/x"`,
		"trailing backslash":  `crash \`,
	}
	for _, kind := range []Kind{GitHub, GitLab} {
		for name, q := range queries {
			t.Run(string(kind)+"/"+name, func(t *testing.T) {
				p := newTestProxy(t, kind)
				status, body := p.do(t, "GET", "/search/issues?q="+url.QueryEscape(q), p.reader, "", "")
				if status != 400 {
					t.Fatalf("status %d (%s), want 400", status, body)
				}
				for _, r := range p.forge.requests() {
					t.Fatalf("forwarded: %+v", r)
				}
			})
		}
	}
}

// TestAttackEscapedTokenInResponse (T5-3): the proxy withheld a forge
// answer holding the forge token by a raw byte compare, so the token with
// a JSON-escaped letter was relayed, and with --forge gitlab the converted
// body carried it in plain text.
func TestAttackEscapedTokenInResponse(t *testing.T) {
	tests := []struct {
		kind Kind
		path string
	}{
		{GitHub, "/repos/acme/widgets/issues/667"},
		{GitLab, "/repos/acme/widgets/issues/667"},
	}
	for _, tc := range tests {
		t.Run(string(tc.kind), func(t *testing.T) {
			p := newTestProxy(t, tc.kind)
			status, body := p.do(t, "GET", tc.path, p.reader, "", "")
			if status != 502 || !strings.Contains(body, "withheld") {
				t.Fatalf("status %d (%s), want 502 withheld", status, body)
			}
			for _, form := range []string{testForgeToken, escapedForgeToken, testForgeToken[1:]} {
				if strings.Contains(body, form) || strings.Contains(p.auditText(), form) {
					t.Fatalf("the response or audit log holds the token (%q): %s", form, body)
				}
			}
		})
	}
}

func TestCredentialAppearsIn(t *testing.T) {
	c, err := NewCredential("ghs_abc/def")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, body string
		want       bool
	}{
		{"plain", `{"a":"x ghs_abc/def y"}`, true},
		{"first letter escaped", `{"a":"\u0067hs_abc/def"}`, true},
		{"upper-case hex", `{"a":"\u0067\u0068\u0073\u005F\u0061bc/def"}`, true},
		{"escaped slash", `{"a":"ghs_abc\/def"}`, true},
		{"in a key", `{"\u0067hs_abc/def":1}`, true},
		{"invalid JSON", `<html>\u0067hs_abc/def`, true},
		{"escaped backslash is not an escape", `{"a":"\\u0067hs_abc/def"}`, false},
		{"surrogate pair before", `{"a":"\ud83d\ude00ghs_abc\/def"}`, true},
		{"lone surrogate", `{"a":"\ud83dghs_abc\/def"}`, true},
		{"truncated escape", `{"a":"ghs_abc/de\u00`, false},
		{"other text", `{"a":"ghs_abc/dex"}`, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := c.appearsIn([]byte(tc.body)); got != tc.want {
				t.Fatalf("appearsIn(%s) = %v, want %v", tc.body, got, tc.want)
			}
		})
	}
}

// TestAttackMarkupSplitKey (T5-4): a key split by markup that the forge's
// Markdown renderer hides was posted (201), and the rendered comment
// showed it whole: the scan removed invisible characters and white space,
// not invisible markup.
func TestAttackMarkupSplitKey(t *testing.T) {
	tests := map[string]string{
		"empty comment":        githubPAT[:10] + "<!---->" + githubPAT[10:],
		"comment with text":    githubPAT[:10] + "<!-- looks harmless -->" + githubPAT[10:],
		"empty span":           githubPAT[:10] + "<span></span>" + githubPAT[10:],
		"decimal reference":    "&#103;" + githubPAT[1:],
		"hex reference":        "&#x67;" + githubPAT[1:],
		"named reference":      githubPAT[:3] + "&lowbar;" + githubPAT[4:],
		"quoted > in a tag":    githubPAT[:10] + `<a title=">">` + githubPAT[10:20] + "</a>" + githubPAT[20:],
		"Markdown emphasis":    githubPAT[:10] + "**" + githubPAT[10:20] + "**" + githubPAT[20:],
		"every letter encoded": encodeAll(anthropicKey),
	}
	for name, text := range tests {
		t.Run(name, func(t *testing.T) {
			refuseComment(t, "the key: "+text)
		})
	}
}

// encodeAll writes every byte of s as a decimal character reference.
func encodeAll(s string) string {
	var b strings.Builder
	for i := range len(s) {
		b.WriteString("&#" + strconv.Itoa(int(s[i])) + ";")
	}
	return b.String()
}
