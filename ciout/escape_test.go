package ciout

import (
	"bytes"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/fullsend-ai/agent-sandbox/cienv"
	"github.com/fullsend-ai/agent-sandbox/ciout/ciouttest"
)

func TestEscapeGitHub(t *testing.T) {
	for in, want := range map[string]string{
		"plain name.txt":              "plain name.txt",
		"\n::add-mask::x":             "%0A::add-mask::x",
		"%0A::error::pwn":             "%250A::error::pwn",
		"::error::pwn":                "%3A:error::pwn",
		"  ::error::pwn":              "  %3A:error::pwn",
		"\u200b::error::pwn":          "%E2%80%8B::error::pwn",
		"a ##[error]pwn":              "a ##%5Berror]pwn",
		"a #\u200b#[error]pwn":        "a #%E2%80%8B#[error]pwn",
		"\u0301::error::pwn":          "\u0301%3A:error::pwn",
		"a #\u0301#[error]pwn":        "a #\u0301#%5Berror]pwn",
		"ok\x1b[0Kfake":               "ok%1B[0Kfake",
		"section_start:1:x\r\x1b[0K":  "section_start:1:x%0D%1B[0K",
		"tab\tkept":                   "tab\tkept",
		"bad \xff byte":               "bad %FF byte",
		"rtl \u202e override":         "rtl %E2%80%AE override",
		"line\u2028separator":         "line%E2%80%A8separator",
		"mid: colon, #[not] legacy":   "mid: colon, #[not] legacy",
		"100% of c:\\path":            "100%25 of c:\\path",
		"\x1b]8;;https:e\x1b\\link\a": "%1B]8;;https:e%1B\\link%07",
	} {
		if got := EscapeGitHub(in); got != want {
			t.Errorf("EscapeGitHub(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestEscapeText(t *testing.T) {
	for in, want := range map[string]string{
		"plain name.txt":             "plain name.txt",
		"\n::add-mask::x":            `\n::add-mask::x`,
		"section_start:1:x\r\x1b[0K": `section_start:1:x\r\x1b[0K`,
		`back\slash`:                 `back\\slash`,
		"tab\tkept":                  "tab\tkept",
		"bad \xff byte":              `bad \xff byte`,
		"rtl \u202e override":        `rtl \u202e override`,
		"nel \u0085":                 `nel \u0085`,
	} {
		if got := EscapeText(in); got != want {
			t.Errorf("EscapeText(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestDefuseGitLab(t *testing.T) {
	for in, want := range map[string]string{
		"plain":                                 "plain",
		"\x1b[32mgreen\x1b[0m":                  "\x1b[32mgreen\x1b[0m",
		"\x1b[1;31mbold red\x1b[m":              "\x1b[1;31mbold red\x1b[m",
		"section_start:1:x[collapsed]\r\x1b[0K": `section_start:1:x[collapsed]\r\x1b[0K`,
		"ok\x1b[2K\x1b[1Afake":                  `ok\x1b[2K\x1b[1Afake`,
		"windows line\r":                        "windows line\r",
		"osc \x1b]8;;u\x1b\\":                   `osc \x1b]8;;u\x1b\`,
		"bell\a":                                `bell\x07`,
	} {
		if got := DefuseGitLab(in); got != want {
			t.Errorf("DefuseGitLab(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestEscapeDataProperty: the command encodings of actions/toolkit
// (core/src/command.ts escapeData, escapeProperty).
func TestEscapeDataProperty(t *testing.T) {
	for _, tc := range []struct{ in, data, prop string }{
		{"plain", "plain", "plain"},
		{"100% a:b,c", "100%25 a:b,c", "100%25 a%3Ab%2Cc"},
		{"line1\r\nline2", "line1%0D%0Aline2", "line1%0D%0Aline2"},
		{"%0A", "%250A", "%250A"},
		{"::error::x", "::error::x", "%3A%3Aerror%3A%3Ax"},
	} {
		if got := EscapeData(tc.in); got != tc.data {
			t.Errorf("EscapeData(%q) = %q, want %q", tc.in, got, tc.data)
		}
		if got := EscapeProperty(tc.in); got != tc.prop {
			t.Errorf("EscapeProperty(%q) = %q, want %q", tc.in, got, tc.prop)
		}
	}
}

// TestEscapeByKind: GitHub Actions takes EscapeGitHub, GitLab CI and a
// terminal EscapeText; Lines keeps the line breaks and escapes the rest of
// each line, a CR included.
func TestEscapeByKind(t *testing.T) {
	in := "a\n::error::x\r\x1b[0Kb"
	for _, tc := range []struct {
		kind       cienv.Kind
		one, lines string
	}{
		{cienv.GitHubActions, "a%0A::error::x%0D%1B[0Kb", "a\n%3A:error::x%0D%1B[0Kb"},
		{cienv.GitLabCI, `a\n::error::x\r\x1b[0Kb`, "a\n::error::x\\r\\x1b[0Kb"},
		{cienv.Local, `a\n::error::x\r\x1b[0Kb`, "a\n::error::x\\r\\x1b[0Kb"},
		{"", `a\n::error::x\r\x1b[0Kb`, "a\n::error::x\\r\\x1b[0Kb"},
	} {
		if got := Escape(tc.kind, in); got != tc.one {
			t.Errorf("Escape(%q) = %q, want %q", tc.kind, got, tc.one)
		}
		if got := Lines(tc.kind, in); got != tc.lines {
			t.Errorf("Lines(%q) = %q, want %q", tc.kind, got, tc.lines)
		}
	}
}

var regexpSGR = regexp.MustCompile("\x1b\\[[0-9;]*m")

// percentDecode decodes every %XX; EscapeGitHub output has no other %.
func percentDecode(t *testing.T, s string) string {
	d, err := url.PathUnescape(s)
	if err != nil {
		t.Fatalf("percent-decoding %q: %v", s, err)
	}
	return d
}

// startsWithColon reports whether s starts, after characters GitHub
// may skip, with ':'.
func startsWithColon(line string) bool {
	return strings.HasPrefix(strings.TrimLeftFunc(line, Ignorable), ":")
}

// FuzzEscapeLog checks the escaping functions for any input: EscapeGitHub
// leaves no CR, LF, ESC or other hidden character, no line starting with
// `:` and no `##[` (also when two escaped values are joined), GitHub's data
// decoding gives the input back when it needed only the three data
// escapes, and a percent-decoder always does; EscapeText leaves no hidden
// character and strconv.Unquote gives the input back; the line filters of
// the agent's output leave no command on GitHub and no CR or non-SGR ESC
// on GitLab.
func FuzzEscapeLog(f *testing.F) {
	for _, name := range ciouttest.AttackNames() {
		f.Add(name, ":x")
	}
	f.Add("100%25 \xff", "#[")
	f.Add("\u200b:\u00ad:", "##")
	f.Fuzz(func(t *testing.T, s, s2 string) {
		checkEscapeGitHub(t, s, s2)
		checkEscapeText(t, s)
		checkEscapeData(t, s)
		checkLines(t, s)
	})
}

// checkEscapeData: GitHub decodes EscapeData back exactly, and neither
// encoding leaves a line break; a property value has no `:` or `,` left.
func checkEscapeData(t *testing.T, s string) {
	d, p := EscapeData(s), EscapeProperty(s)
	if ciouttest.UnescapeData(d) != s || strings.ContainsAny(d, "\r\n") {
		t.Fatalf("EscapeData(%q) = %q", s, d)
	}
	if strings.ContainsAny(p, "\r\n:,") {
		t.Fatalf("EscapeProperty(%q) = %q", s, p)
	}
}

// checkLines: Lines keeps exactly the LFs of s, and each line it gives is
// the line's Escape.
func checkLines(t *testing.T, s string) {
	for _, kind := range []cienv.Kind{cienv.GitHubActions, cienv.GitLabCI} {
		got := strings.Split(Lines(kind, s), "\n")
		want := strings.Split(s, "\n")
		if len(got) != len(want) {
			t.Fatalf("Lines(%s, %q) has %d lines, want %d", kind, s, len(got), len(want))
		}
		for i := range got {
			if got[i] != Escape(kind, want[i]) {
				t.Fatalf("Lines(%s, %q) line %d = %q", kind, s, i, got[i])
			}
		}
	}
}

func checkEscapeGitHub(t *testing.T, s, s2 string) {
	gh := EscapeGitHub(s)
	line := DefuseGitHub(gh + EscapeGitHub(s2))
	for _, out := range []string{gh, line} {
		if strings.ContainsFunc(out, Hidden) || !utf8.ValidString(out) {
			t.Fatalf("EscapeGitHub(%q) = %q keeps a hidden character", s, out)
		}
		if startsWithColon(out) || strings.Contains(out, "##[") {
			t.Fatalf("EscapeGitHub(%q) = %q reads as a command", s, out)
		}
	}
	if percentDecode(t, gh) != s {
		t.Fatalf("EscapeGitHub(%q) = %q does not percent-decode back", s, gh)
	}
	visible := strings.Map(func(r rune) rune {
		if Ignorable(r) {
			return -1
		}
		return r
	}, s)
	plain := !strings.ContainsFunc(s, Hidden) && utf8.ValidString(s) && !startsWithColon(s) && !strings.Contains(visible, "##[")
	if plain && ciouttest.UnescapeData(gh) != s {
		t.Fatalf("GitHub decodes EscapeGitHub(%q) = %q to %q", s, gh, ciouttest.UnescapeData(gh))
	}
	g := &ciouttest.GitHubRunner{}
	g.Feed(line)
	fence := &bytes.Buffer{}
	w, ew, end := NewReporter(cienv.GitHubActions, fence, "").Untrusted(fence, fence)
	w.Write([]byte(s))
	ew.Write([]byte(s2))
	end()
	g.Feed(fence.String())
	if len(ciouttest.ForeignCommands(g.Executed)) > 0 || g.Stopped {
		t.Fatalf("%q, %q: executed %q", s, s2, g.Executed)
	}
}

func checkEscapeText(t *testing.T, s string) {
	txt := EscapeText(s)
	if strings.ContainsFunc(txt, Hidden) {
		t.Fatalf("EscapeText(%q) = %q keeps a hidden character", s, txt)
	}
	if back, err := strconv.Unquote(`"` + strings.ReplaceAll(txt, `"`, `\"`) + `"`); err != nil || back != s {
		t.Fatalf("EscapeText(%q) = %q unquotes to %q, %v", s, txt, back, err)
	}
	gl := DefuseGitLab(s)
	if strings.ContainsRune(strings.TrimSuffix(gl, "\r"), '\r') ||
		strings.Contains(regexpSGR.ReplaceAllString(gl, ""), "\x1b") ||
		strings.ContainsFunc(gl, func(r rune) bool { return r != '\x1b' && r != '\r' && control(r) }) {
		t.Fatalf("DefuseGitLab(%q) = %q", s, gl)
	}
}
