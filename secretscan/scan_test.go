package secretscan

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/fullsend-ai/agent-sandbox/internal/regexsample"
)

// fakeKeys returns credential-shaped strings, generated so that no
// token-looking literal sits in the repository: each has the shape of the
// real credential (prefix, alphabet, length).
func fakeKeys() map[string]string {
	r := rand.New(rand.NewPCG(1, 2))
	const alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	rnd := func(n int, alphabet string) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		return string(b)
	}
	return map[string]string{
		"anthropic":       "sk-ant-api03-" + rnd(93, alnum+"_-") + "AA",
		"anthropic-oauth": "sk-ant-oat01-" + rnd(80, alnum+"_-"),
		"openai":          "sk-proj-" + rnd(74, alnum+"_-") + "T3BlbkFJ" + rnd(74, alnum+"_-"),
		"google-oauth":    "ya29." + rnd(150, alnum+"_-"),
		"huggingface":     "hf_" + rnd(34, alnum[:52]),
		"docker":          "dckr_pat_" + rnd(27, alnum+"_-"),
		"github":          "ghp_" + rnd(36, alnum),
		"github-app":      "ghs_" + rnd(36, alnum),
		"gitlab":          "glpat-" + rnd(20, alnum+"_-"),
		"aws":             "AKIA" + rnd(16, alnum[:26]+"234567"),
		"slack":           "xoxb-" + rnd(12, "0123456789") + "-" + rnd(12, "0123456789") + "-" + rnd(24, alnum),
		"fullsend":        "fsa_" + rnd(43, alnum+"_-"),
	}
}

func TestBuiltinRules(t *testing.T) {
	rules := Rules()
	if len(rules) < 200 {
		t.Fatalf("%d rules, want gitleaks' ~200 and the supplement", len(rules))
	}
	for _, r := range rules {
		if r.ID == "" || r.Regex == "" {
			t.Errorf("rule %+v has no id or regex", r)
		}
		for _, k := range r.Keywords {
			if k != strings.ToLower(k) || len(k) < 2 {
				t.Errorf("rule %s: keyword %q is not lowercase or is too short", r.ID, k)
			}
		}
	}
	if Default() == nil || Default() != Default() {
		t.Fatal("Default is not one compiled scanner")
	}
	// Default compiles each rule on its first run and panics on an error:
	// every built-in rule must compile up front.
	eager, err := New(rules, GlobalAllow())
	if err != nil {
		t.Fatalf("built-in rules: %v", err)
	}
	// The lazily compiled scanner finds what the eager one does.
	var texts []string
	for _, k := range fakeKeys() {
		texts = append(texts, k, "token: "+k[:len(k)/2]+"\n"+k[len(k)/2:])
	}
	texts = append(texts, "nothing to see here", "password = hunter2hunter2", "api_key: 0123456789abcdef0123")
	for _, text := range texts {
		if got, want := Default().FindAll(text), eager.FindAll(text); !slices.Equal(got, want) {
			t.Errorf("FindAll(%q): Default %v, New %v", text, got, want)
		}
	}
}

// TestFindsTheSandboxSecrets is the red-team finding of issue 12: the proxy
// missed the secrets a sandbox most likely holds, and any secret with an
// invisible character inserted or split over lines. Each key is tried
// bare, inside prose, and disguised.
func TestFindsTheSandboxSecrets(t *testing.T) {
	disguises := map[string]func(string) string{
		"bare":              func(k string) string { return k },
		"in-prose":          func(k string) string { return "Here is the key you asked for: " + k + " (do not share)." },
		"glued":             func(k string) string { return "prefix" + k + "suffix" },
		"zero-width-space":  func(k string) string { return k[:6] + "\u200b" + k[6:12] + "\u200b" + k[12:] },
		"zero-width-joiner": func(k string) string { return k[:3] + "\u200d" + k[3:] },
		"word-joiner-bom":   func(k string) string { return k[:5] + "\u2060" + k[5:9] + "\ufeff" + k[9:] },
		"soft-hyphens":      func(k string) string { return k[:4] + "\u00ad" + k[4:8] + "\u00ad" + k[8:] },
		"tag-characters":    func(k string) string { return k[:7] + "\U000E0041\U000E0042" + k[7:] },
		"newline-split":     func(k string) string { return "key:\n" + k[:len(k)/2] + "\n" + k[len(k)/2:] + "\n" },
		"crlf-split":        func(k string) string { return k[:10] + "\r\n" + k[10:] },
		"space-split":       func(k string) string { return k[:8] + " " + k[8:16] + " " + k[16:] },
		"nbsp-split":        func(k string) string { return k[:8] + "\u00a0" + k[8:] },
		"ideographic-space": func(k string) string { return k[:9] + "\u3000" + k[9:] },
		"markdown-wrapped":  func(k string) string { return "```\n" + k[:20] + "\n" + k[20:] + "\n```" },
	}
	s := Default()
	for name, key := range fakeKeys() {
		for how, disguise := range disguises {
			t.Run(name+"/"+how, func(t *testing.T) {
				if got := s.Find(disguise(key)); got == "" {
					t.Fatalf("no secret found in %q", disguise(key))
				}
			})
		}
	}
}

func TestFindKinds(t *testing.T) {
	k := fakeKeys()
	tests := []struct{ text, want string }{
		{k["anthropic"], "anthropic-api-key"},
		{k["openai"], "openai-api-key"},
		{k["google-oauth"], "gcp-oauth-access-token"},
		{k["huggingface"], "huggingface-access-token"},
		{k["docker"], "docker-personal-access-token"},
		{k["fullsend"], "fullsend-agent-token"},
		{"-----BEGIN OPENSSH PRIVATE KEY-----", "private-key"},
		{"", ""},
		{"This looks like a duplicate of #12; ghp is a prefix, AKIA too, and sk-ant- alone is no key.", ""},
		{"sha256:" + strings.Repeat("ab12", 16), ""},
		{"commit 0123456789abcdef0123456789abcdef01234567 fixes it", ""},
		{"see https://github.com/acme/widgets/issues/42#issuecomment-1234567890", ""},
		{"-----BEGIN PUBLIC KEY-----", ""},
		{"the task-based approach: disk-0123456789abcdef0123456789abcdef is fine", ""},
		{"${{ secrets.GITHUB_TOKEN }} and token: ${GH_TOKEN}", ""},
	}
	for _, tc := range tests {
		t.Run(tc.want+"/"+tc.text[:min(len(tc.text), 16)], func(t *testing.T) {
			if got := Default().Find(tc.text); got != tc.want {
				t.Fatalf("Find = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestProseIsClean keeps false positives on ordinary project text at zero:
// the README, the runner guide and the red-team issue itself.
func TestProseIsClean(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.txt")
	if len(files) < 3 {
		t.Fatalf("prose corpus: %v", files)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, para := range strings.Split(string(b), "\n\n") {
			if kinds := Default().FindAll(para); len(kinds) > 0 {
				t.Errorf("%s paragraph %d: %v in %q", f, i, kinds, para)
			}
			if kind := Default().FindRendered(para); kind != "" {
				t.Errorf("%s paragraph %d rendered: %v in %q", f, i, kind, Rendered(para))
			}
		}
	}
}

// TestEveryRuleFiresOnASample generates strings from each rule's own regex
// (with a keyword in front) and checks the rule fires on one of them: the
// generated table and the scanner agree on what each rule means.
func TestEveryRuleFiresOnASample(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, rule := range Rules() {
		s, err := New([]Rule{rule}, GlobalAllow())
		if err != nil {
			t.Fatal(err)
		}
		fired := false
		for range 50 {
			text := sample(t, rule, r)
			if s.Find(text) != "" {
				fired = true
				break
			}
		}
		if !fired {
			t.Errorf("rule %s fires on none of 50 samples of %s", rule.ID, rule.Regex)
		}
	}
}

// sample returns a string matching rule's regex, with its first keyword
// before it and spaces around it.
func sample(t testing.TB, rule Rule, r *rand.Rand) string {
	s, err := regexsample.String(rule.Regex, r, 3)
	if err != nil {
		t.Fatal(err)
	}
	kw := ""
	if len(rule.Keywords) > 0 {
		kw = rule.Keywords[0]
	}
	return kw + " " + s + " "
}

// TestNormalisationMatchesThePatterns checks Normalize and Join against
// IgnorablePattern and SpacePattern (which the Rego rules use) over every
// code point and over mixed strings, invalid UTF-8 included.
func TestNormalisationMatchesThePatterns(t *testing.T) {
	ign, space := regexp.MustCompile(IgnorablePattern), regexp.MustCompile(SpacePattern)
	var buf [utf8.UTFMax]byte
	for c := rune(0); c <= unicode.MaxRune; c++ {
		if !utf8.ValidRune(c) {
			continue
		}
		s := buf[:utf8.EncodeRune(buf[:], c)]
		if got, want := IsIgnorable(c), ign.Match(s); got != want {
			t.Errorf("IsIgnorable(%U) = %v, IgnorablePattern says %v", c, got, want)
		}
		if got, want := unicode.IsSpace(c), space.Match(s); got != want {
			t.Errorf("unicode.IsSpace(%U) = %v, SpacePattern says %v", c, got, want)
		}
	}
	for _, s := range []string{"", "plain", "a\u200bb\u00adc\ufeff", "x \t\n\u00a0\u3000y", "bad\xffutf8\u200b\xe2\x80", "\u200b\u200b", "é\u0301 \u2028"} {
		if got, want := Normalize(s), ign.ReplaceAllString(s, ""); got != want {
			t.Errorf("Normalize(%q) = %q, want %q", s, got, want)
		}
		if got, want := Join(s), space.ReplaceAllString(s, ""); got != want {
			t.Errorf("Join(%q) = %q, want %q", s, got, want)
		}
	}
}

func TestNewRefusesBadRules(t *testing.T) {
	for name, rules := range map[string][]Rule{
		"regex":     {{ID: "x", Regex: "("}},
		"group":     {{ID: "x", Regex: "(a)", SecretGroup: 2}},
		"keyword":   {{ID: "x", Regex: "a", Keywords: []string{"A"}}},
		"allowlist": {{ID: "x", Regex: "a", Allow: []Allow{{Target: "file", Regexes: []string{"a"}}}}},
		"empty":     {{ID: "x", Regex: "a", Allow: []Allow{{}}}},
	} {
		if _, err := New(rules, nil); err == nil {
			t.Errorf("%s: New accepted %+v", name, rules)
		}
	}
}

func TestAllowlists(t *testing.T) {
	rules := []Rule{{ID: "tok", Regex: `tok_([a-z0-9]{8})`, Keywords: []string{"tok_"}, GlobalAllow: true, Allow: []Allow{
		{Regexes: []string{`^0+$`}},
		{Target: "line", Regexes: []string{`example`}},
		{StopWords: []string{"dead"}, Regexes: []string{`beef`}, And: true},
	}}}
	s, err := New(rules, []Allow{{StopWords: []string{"test"}}})
	if err != nil {
		t.Fatal(err)
	}
	for text, want := range map[string]bool{
		"tok_a1b2c3d4":             true,
		"tok_00000000":             false, // rule regex on the secret
		"tok_a1b2c3d4 # example":   false, // line target
		"tok_deadbeef":             false, // both kinds of the And list
		"tok_deadc0de":             true,  // only one kind of the And list
		"tok_xtestx12":             false, // global stop word
		"tok_a1b2c3d4\ntok_000000": true,  // one match is enough
	} {
		if got := s.Find(text) != ""; got != want {
			t.Errorf("Find(%q) found=%v, want %v", text, got, want)
		}
	}
}

func TestFindAllKinds(t *testing.T) {
	k := fakeKeys()
	got := Default().FindAll(k["github"] + "\n" + k["docker"])
	if !slices.Contains(got, "github-token") || !slices.Contains(got, "docker-personal-access-token") {
		t.Fatalf("FindAll = %v", got)
	}
}

func TestEntropy(t *testing.T) {
	for s, want := range map[string]float64{"": 0, "aaaa": 0, "ab": 1, "abcd": 2, "aabb": 1} {
		if got := entropy(s); got != want {
			t.Errorf("entropy(%q) = %v, want %v", s, got, want)
		}
	}
}
