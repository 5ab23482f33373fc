package runner

import (
	"bytes"
	"errors"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
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
		if got := escapeGitHub(in); got != want {
			t.Errorf("escapeGitHub(%q) = %q, want %q", in, got, want)
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
		if got := escapeText(in); got != want {
			t.Errorf("escapeText(%q) = %q, want %q", in, got, want)
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
		if got := defuseGitLab(in); got != want {
			t.Errorf("defuseGitLab(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestRunLogEscapesEveryArgument: whatever the verb and the type, no
// argument reaches the log raw, and two arguments cannot make a command
// together.
func TestRunLogEscapesEveryArgument(t *testing.T) {
	for _, ci := range []CIKind{CIGitHub, CIGitLab, CILocal} {
		var out bytes.Buffer
		m := &masker{}
		m.Add("s3cr3t-value")
		l := newRunLog(ci, m, &out)
		for _, name := range attackNames {
			l.Printf("removed %s from downloaded %s", name, "/sandbox/out")
			l.Printf("%s", name)
			l.Printf("%v", errors.New("download: "+name))
			l.Printf("%q %10s %x", name, name, name)
		}
		l.Printf("%s%s", ":", ":error::joined")
		l.Printf("%s%s%s", "#", "#", "[error]joined")
		l.Printf("%d %v %s", 42, []string{"\n::error::in a slice"}, "key s3cr3t-value")
		_ = l.Flush()
		log := out.String()
		if strings.Contains(log, "s3cr3t-value") {
			t.Errorf("%s: secret in the log", ci)
		}
		if strings.Count(log, "\n") != 4*len(attackNames)+3 {
			t.Errorf("%s: a value broke a line:\n%s", ci, log)
		}
		switch ci {
		case CIGitHub:
			g := &ghRunner{}
			g.feed(log)
			if len(g.executed) > 0 {
				t.Errorf("executed %q:\n%s", g.executed, log)
			}
		default:
			if strings.ContainsAny(log, "\x1b\r") {
				t.Errorf("%s: control characters in the log:\n%q", ci, log)
			}
		}
	}
}

func TestLineFilter(t *testing.T) {
	var out bytes.Buffer
	f, _ := newLineFilters(&out, &out, func(s string) string { return "<" + s + ">" })
	f.Write([]byte("a\nb"))
	f.Write([]byte("c\n\nd"))
	f.Write(bytes.Repeat([]byte("x"), maxLine+1))
	f.Write([]byte("tail"))
	f.Close()
	want := "<a>\n<bc>\n<>\n<d" + strings.Repeat("x", maxLine+1) + ">\n<tail>\n"
	if got := out.String(); got != want {
		t.Errorf("got %.80q", got)
	}
}

// TestGitHubFenceToken: a fresh token per fence, never a command name, and
// the agent's streams are defused inside it.
func TestGitHubFenceToken(t *testing.T) {
	var log, stdout bytes.Buffer
	rep := NewReporter(CIGitHub, &log, "")
	seen := map[string]bool{}
	for i := 0; i < 3; i++ {
		w, ew, end := rep.Untrusted(&stdout, &log)
		w.Write([]byte("::error::out\nno newline"))
		ew.Write([]byte("x\r::warning::err"))
		end()
		lines := strings.Split(strings.TrimSpace(log.String()), "\n")
		token := strings.TrimPrefix(lines[len(lines)-3], "::stop-commands::")
		if !hexToken.MatchString(token) || seen[token] || lines[len(lines)-1] != "::"+token+"::" {
			t.Fatalf("fence %d:\n%s", i, log.String())
		}
		seen[token] = true
	}
	if !strings.Contains(stdout.String(), "%3A:error::out\nno newline\n") || !strings.Contains(log.String(), "x\r%3A:warning::err\n") {
		t.Errorf("streams not defused:\nstdout %q\nlog %q", stdout.String(), log.String())
	}
}

func TestSummaryMarkdownInjection(t *testing.T) {
	md := summaryMarkdown(&Result{Agent: "tri`age", ExitCode: 75, Sandbox: "fs-a",
		Error:        "download failed: [click](https://evil.example) <img src=x onerror=alert(1)> | cell\nnext ![i](u) www.evil.example",
		Placeholders: map[string]string{"OWNER": "a|b`c"}, PlaceholderFrom: map[string]string{"OWNER": "--set"}})
	for _, bad := range []string{"[click]", "](", " | cell", "www.evil", "a|b"} {
		if strings.Contains(md, bad) {
			t.Errorf("%q survived in the summary:\n%s", bad, md)
		}
	}
	for _, want := range []string{"### fullsend run ``tri`age``: failed (exit 75)", `\<img src\=x`, "<br>next", "``a\\|b`c``", "fs\\-a", "\\| cell"} {
		if !strings.Contains(md, want) {
			t.Errorf("no %q in the summary:\n%s", want, md)
		}
	}
}

var regexpSGR = regexp.MustCompile("\x1b\\[[0-9;]*m")

// percentDecode decodes every %XX; escapeGitHub output has no other %.
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
	return strings.HasPrefix(strings.TrimLeftFunc(line, ignorable), ":")
}

// FuzzEscapeLog checks the escaping functions for any input: escapeGitHub
// leaves no CR, LF, ESC or other hidden character, no line starting with
// `:` and no `##[` (also when two escaped values are joined), GitHub's data
// decoding gives the input back when it needed only the three data
// escapes, and a percent-decoder always does; escapeText leaves no hidden
// character and strconv.Unquote gives the input back; the line filters of
// the agent's output leave no command on GitHub and no CR or non-SGR ESC
// on GitLab.
func FuzzEscapeLog(f *testing.F) {
	for _, name := range attackNames {
		f.Add(name, ":x")
	}
	f.Add("100%25 \xff", "#[")
	f.Add("\u200b:\u00ad:", "##")
	f.Fuzz(func(t *testing.T, s, s2 string) {
		checkEscapeGitHub(t, s, s2)
		checkEscapeText(t, s)
	})
}

func checkEscapeGitHub(t *testing.T, s, s2 string) {
	gh := escapeGitHub(s)
	line := defuseGitHub(gh + escapeGitHub(s2))
	for _, out := range []string{gh, line} {
		if strings.ContainsFunc(out, hidden) || !utf8.ValidString(out) {
			t.Fatalf("escapeGitHub(%q) = %q keeps a hidden character", s, out)
		}
		if startsWithColon(out) || strings.Contains(out, "##[") {
			t.Fatalf("escapeGitHub(%q) = %q reads as a command", s, out)
		}
	}
	if percentDecode(t, gh) != s {
		t.Fatalf("escapeGitHub(%q) = %q does not percent-decode back", s, gh)
	}
	visible := strings.Map(func(r rune) rune {
		if ignorable(r) {
			return -1
		}
		return r
	}, s)
	plain := !strings.ContainsFunc(s, hidden) && utf8.ValidString(s) && !startsWithColon(s) && !strings.Contains(visible, "##[")
	if plain && ghUnescapeData(gh) != s {
		t.Fatalf("GitHub decodes escapeGitHub(%q) = %q to %q", s, gh, ghUnescapeData(gh))
	}
	g := &ghRunner{}
	g.feed(line)
	fence := &bytes.Buffer{}
	w, ew, end := NewReporter(CIGitHub, fence, "").Untrusted(fence, fence)
	w.Write([]byte(s))
	ew.Write([]byte(s2))
	end()
	g.feed(fence.String())
	if len(foreignCommands(g.executed)) > 0 || g.stopped {
		t.Fatalf("%q, %q: executed %q", s, s2, g.executed)
	}
}

func checkEscapeText(t *testing.T, s string) {
	txt := escapeText(s)
	if strings.ContainsFunc(txt, hidden) {
		t.Fatalf("escapeText(%q) = %q keeps a hidden character", s, txt)
	}
	if back, err := strconv.Unquote(`"` + strings.ReplaceAll(txt, `"`, `\"`) + `"`); err != nil || back != s {
		t.Fatalf("escapeText(%q) = %q unquotes to %q, %v", s, txt, back, err)
	}
	gl := defuseGitLab(s)
	if strings.ContainsRune(strings.TrimSuffix(gl, "\r"), '\r') ||
		strings.Contains(regexpSGR.ReplaceAllString(gl, ""), "\x1b") ||
		strings.ContainsFunc(gl, func(r rune) bool { return r != '\x1b' && r != '\r' && control(r) }) {
		t.Fatalf("defuseGitLab(%q) = %q", s, gl)
	}
}
