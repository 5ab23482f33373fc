package redact

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"
)

// writeChunks writes input to a fresh Writer in pieces of the given
// sizes (the last piece takes the rest), flushes it and returns what came
// out.
func writeChunks(t testing.TB, m *Masker, input string, sizes []int) string {
	t.Helper()
	var out bytes.Buffer
	w := &Writer{m: m, w: &out}
	rest := input
	for _, n := range sizes {
		n = min(n, len(rest))
		if _, err := w.Write([]byte(rest[:n])); err != nil {
			t.Fatal(err)
		}
		rest = rest[n:]
	}
	if _, err := w.Write([]byte(rest)); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// short keeps a failure message readable: long runs of one byte are
// counted, not printed.
func short(s string) string {
	if len(s) <= 200 {
		return s
	}
	return s[:60] + fmt.Sprintf("...(%d bytes)...", len(s)-120) + s[len(s)-60:]
}

// oldLineCut is where the writer used to cut a line: 64 KiB.
const oldLineCut = 64 << 10

// TestMaskWriterEverySplit is the regression test of "Writer can miss a
// secret split across its buffer boundary": the writer cut a line at 64
// KiB and wrote a multi-line secret line by line, so a secret across that
// cut, or across a line break, came out whole. For every secret set and
// text of the table, the text is written in two pieces at every byte
// position, in three at every pair of positions, and byte by byte; each
// time the output must be what masking the whole text at once gives, and
// hold no secret.
func TestMaskWriterEverySplit(t *testing.T) {
	long := strings.Repeat("x", oldLineCut-3) // puts a secret across the old 64 KiB cut
	pem := "-----BEGIN KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END KEY-----"
	for _, tc := range []struct {
		name    string
		secrets []string
		input   string
		want    string
		noSplit bool // too long to try every pair of positions
	}{
		{name: "one secret mid-line", secrets: []string{"sk-ant-0123456789"},
			input: "key=sk-ant-0123456789 abc\nnext", want: "key=*** abc\nnext"},
		{name: "secret at the start and the end", secrets: []string{"ghs_TOKEN42"},
			input: "ghs_TOKEN42 and ghs_TOKEN42", want: "*** and ***"},
		{name: "a near miss stays", secrets: []string{"ghs_TOKEN42"},
			input: "ghs_TOKEN4 ghs_TOKEN42", want: "ghs_TOKEN4 ***"},
		{name: "overlapping occurrences of one secret", secrets: []string{"aaaa"},
			input: "baaaaaab aaaa", want: "b***b ***"},
		{name: "touching occurrences stay two", secrets: []string{"abab"},
			input: "abababab", want: "***"},
		{name: "overlapping secrets leave no part readable", secrets: []string{"abcdef", "defghi"},
			input: "0abcdefghi1", want: "0***1"},
		{name: "a secret inside another", secrets: []string{"token", "my-token-value"},
			input: "token my-token-value", want: "*** ***"},
		{name: "multi-line secret and each of its lines", secrets: []string{pem},
			input: "key:\n" + pem + "\nand a line of it: MIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n",
			want:  "key:\n***\nand a line of it: ***\n"},
		{name: "secret across the old 64 KiB line cut", secrets: []string{"sk-ant-0123456789"},
			input: long + "sk-ant-0123456789\n", want: long + "***\n", noSplit: true},
		{name: "no secrets", input: "plain text\n", want: "plain text\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &Masker{}
			for _, s := range tc.secrets {
				m.Add(s)
			}
			if got := m.String(tc.input); got != tc.want {
				t.Fatalf("String = %q, want %q", got, tc.want)
			}
			check := func(sizes []int) {
				t.Helper()
				got := writeChunks(t, m, tc.input, sizes)
				if got != tc.want {
					t.Fatalf("written in pieces %v: %q, want %q", sizes, short(got), short(tc.want))
				}
				for _, s := range tc.secrets {
					if strings.Contains(got, s) {
						t.Fatalf("written in pieces %v: secret %q in %q", sizes, s, short(got))
					}
				}
			}
			if tc.noSplit {
				// Every position around the secret.
				at := strings.Index(tc.input, tc.secrets[0])
				for i := at - 2; i <= at+len(tc.secrets[0])+2; i++ {
					check([]int{i})
				}
				check([]int{at + 3, oldLineCut, 1})
				return
			}
			for i := 0; i <= len(tc.input); i++ {
				check([]int{i})
				for j := 0; j <= len(tc.input)-i; j++ {
					check([]int{i, j})
				}
			}
			ones := make([]int, len(tc.input))
			for i := range ones {
				ones[i] = 1
			}
			check(ones)
		})
	}
}

// TestMaskWriterHoldsBackOnlyWhatMayBeASecret: text that cannot start a
// secret passes at once, partial lines included (a terminal sees the
// agent's output as it comes); a possible start is held until it is decided.
func TestMaskWriterHoldsBackOnlyWhatMayBeASecret(t *testing.T) {
	m := &Masker{}
	m.Add("ghs_TOKEN42")
	var out bytes.Buffer
	w := &Writer{m: m, w: &out}
	for _, step := range []struct{ write, want string }{
		{"progress: 10%", "progress: 10%"},
		{" then gh", "progress: 10% then "},
		{"s_TOK", "progress: 10% then "},
		{"EN4", "progress: 10% then "},
		{"2!", "progress: 10% then ***!"},
		{" ghs_", "progress: 10% then ***! "},
		{"x", "progress: 10% then ***! ghs_x"},
	} {
		w.Write([]byte(step.write))
		if out.String() != step.want {
			t.Fatalf("after %q: %q, want %q", step.write, out.String(), step.want)
		}
	}
	w.Write([]byte(" ghs_TOKEN4"))
	w.Flush()
	if want := "progress: 10% then ***! ghs_x ghs_TOKEN4"; out.String() != want {
		t.Errorf("after Flush: %q, want %q", out.String(), want)
	}
}

// FuzzMaskWriter writes any text, cut into any pieces, through a Writer
// holding two secrets: the output is what masking the whole text gives, and
// no secret is left in it (unless the secret itself holds the * the mask is
// made of, when *** next to the text around it can spell it again).
func FuzzMaskWriter(f *testing.F) {
	f.Add("key=sk-ant-0123456789 abc\nnext", "sk-ant-0123456789", "abc\ndefg", []byte{4, 9, 1})
	f.Add("aaaaaaaaa", "aaaa", "aaaaa", []byte{1, 1, 1, 1, 1})
	f.Add("0abcdefghi1", "abcdef", "defghi", []byte{3, 3})
	f.Add("-----BEGIN\nKEYKEY\n-----END", "-----BEGIN\nKEYKEY\n-----END", "KEYKEY", []byte{11})
	f.Fuzz(func(t *testing.T, input, s1, s2 string, cuts []byte) {
		m := &Masker{}
		m.Add(s1)
		m.Add(s2)
		sizes := make([]int, len(cuts))
		for i, c := range cuts {
			sizes[i] = int(c % 32)
		}
		got := writeChunks(t, m, input, sizes)
		if want := m.String(input); got != want {
			t.Fatalf("written in pieces %v: %q, masked whole: %q", sizes, got, want)
		}
		for _, s := range []string{s1, s2} {
			if len(s) >= minSecretLen && !strings.Contains(s, "*") && strings.Contains(got, s) {
				t.Fatalf("secret %q left in %q", s, got)
			}
		}
	})
}

// BenchmarkMaskWriter streams 1 MiB of agent-like output in 4 KiB writes
// through a Writer holding a model key, a token and a 1.7 KiB
// multi-line key (each of whose lines is a secret too).
func BenchmarkMaskWriter(b *testing.B) {
	m := &Masker{}
	m.Add("sk-ant-api03-SECRETVALUE-0123456789")
	m.Add("ghs_SECRETTOKEN9876543210")
	m.Add("-----BEGIN PRIVATE KEY-----\n" + strings.Repeat(strings.Repeat("A", 63)+"B\n", 26) + "-----END PRIVATE KEY-----")
	line := "2026-11-28T18:00:00Z tool call: Bash(curl -s https://api.github.com/repos/o/r/issues/42) -> 200 OK\n"
	input := []byte(strings.Repeat(line, (1<<20)/len(line)))
	b.SetBytes(int64(len(input)))
	for b.Loop() {
		w := &Writer{m: m, w: io.Discard}
		for p := input; len(p) > 0; {
			n := min(4096, len(p))
			w.Write(p[:n])
			p = p[n:]
		}
		w.Flush()
	}
}

// TestMaskWriterBoundsItsHold: a secret that overlaps itself, written over
// and over, is a chain of overlapping occurrences that could be held back
// whole. The writer holds at most maxHold bytes, passes the chain on as ***
// and lets no part of the secret out.
func TestMaskWriterBoundsItsHold(t *testing.T) {
	m := &Masker{}
	m.Add("0000")
	var out bytes.Buffer
	w := &Writer{m: m, w: &out}
	chunk := []byte(strings.Repeat("0", 4096))
	for range 64 {
		w.Write(chunk)
		if len(w.buf) > maxHold+len(chunk) {
			t.Fatalf("holds %d bytes", len(w.buf))
		}
	}
	if out.Len() == 0 {
		t.Fatal("nothing written after 256 KiB")
	}
	w.Write([]byte("\nend"))
	w.Flush()
	if got := out.String(); strings.Contains(got, "0000") || !strings.HasSuffix(got, "\nend") || strings.Trim(got[:len(got)-4], "*0") != "" {
		t.Errorf("output %q", short(got))
	}
}

func TestMaskWriter(t *testing.T) {
	m := &Masker{}
	m.Add("sk-ant-0123456789")
	m.Add("abc") // too short to mask
	var out bytes.Buffer
	w := NewWriter(m, &out)
	// The secret is split across writes; it must still be masked.
	w.Write([]byte("key=sk-ant-01"))
	w.Write([]byte("23456789 abc\nnext"))
	w.Flush()
	if got := out.String(); got != "key=*** abc\nnext" {
		t.Errorf("masked output %q", got)
	}
}
