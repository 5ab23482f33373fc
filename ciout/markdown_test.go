package ciout

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMarkdown: a value renders as the text it is, in a table cell, and
// adds no link, image, HTML, emphasis or cell.
func TestMarkdown(t *testing.T) {
	for _, tc := range []struct{ in, text, code string }{
		{"", "", ""},
		{"plain", "plain", "`plain`"},
		{"[click](https://evil.example)", `\[click\]\(https\:\/\/evil\.example\)`, "`[click](https://evil.example)`"},
		{"<img src=x onerror=alert(1)>", `\<img src\=x onerror\=alert\(1\)\>`, "`<img src=x onerror=alert(1)>`"},
		{"a|b", `a\|b`, "`a\\|b`"},
		{"tri`age", "tri\\`age", "``tri`age``"},
		{"`edge`", "\\`edge\\`", "`` `edge` ``"},
		{"line\r\nnext\nthird", "line<br>next<br>third", "`line  next third`"},
		{"rtl \u202e bell \a", "rtl \uFFFD bell \uFFFD", "`rtl \uFFFD bell \uFFFD`"},
		{"www.evil.example", `www\.evil\.example`, "`www.evil.example`"},
		{"*bold* _em_ ~~s~~", `\*bold\* \_em\_ \~\~s\~\~`, "`*bold* _em_ ~~s~~`"},
	} {
		if got := MarkdownText(tc.in); got != tc.text {
			t.Errorf("MarkdownText(%q) = %q, want %q", tc.in, got, tc.text)
		}
		if got := MarkdownCode(tc.in); got != tc.code {
			t.Errorf("MarkdownCode(%q) = %q, want %q", tc.in, got, tc.code)
		}
	}
}

// TestAppendSummary: the job summary is appended to, created for its
// owner only when missing, and a path that cannot be written is an error.
func TestAppendSummary(t *testing.T) {
	p := filepath.Join(t.TempDir(), "summary.md")
	for _, md := range []string{"### one\n", "### two\n"} {
		if err := AppendSummary(p, md); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(p)
	if err != nil || string(b) != "### one\n### two\n" {
		t.Fatalf("summary %q, %v", b, err)
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", fi.Mode().Perm())
	}
	if err := AppendSummary(filepath.Dir(p), "x"); err == nil || !strings.Contains(err.Error(), filepath.Dir(p)) {
		t.Errorf("a directory as the summary: %v", err)
	}
}
