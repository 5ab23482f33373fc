package forge

import (
	"net/url"
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
