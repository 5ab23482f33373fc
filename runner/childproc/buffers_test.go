package childproc

import (
	"slices"
	"strings"
	"testing"
)

func TestCapWriter(t *testing.T) {
	tests := []struct {
		name   string
		max    int
		writes []string
		want   string
		cut    bool
	}{
		{"fits", 10, []string{"ab\n", "cd\n"}, "ab\ncd\n", false},
		{"exactly full", 6, []string{"ab\n", "cd\n"}, "ab\ncd\n", false},
		{"cut at the last whole line", 7, []string{"ab\ncd\n", "efgh\n"}, "ab\ncd\n", true},
		{"one long line kept to max", 4, []string{"abcdefgh"}, "abcd", true},
		{"nothing more after the cut", 4, []string{"ab\ncdef", "\n"}, "ab\n", true},
		{"zero", 0, []string{"x"}, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := &CapWriter{Max: tt.max}
			for _, p := range tt.writes {
				if n, err := w.Write([]byte(p)); n != len(p) || err != nil {
					t.Fatalf("Write(%q) = %d, %v: a capped writer takes everything", p, n, err)
				}
			}
			if w.String() != tt.want || string(w.Bytes()) != tt.want || w.Truncated() != tt.cut {
				t.Errorf("kept %q (cut %v), want %q (cut %v)", w.String(), w.Truncated(), tt.want, tt.cut)
			}
		})
	}
}

func TestTailBuffer(t *testing.T) {
	b := &TailBuffer{Max: 5}
	for _, p := range []string{"abc", "defg", "h"} {
		if n, err := b.Write([]byte(p)); n != len(p) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", p, n, err)
		}
	}
	if got := string(b.Bytes()); got != "defgh" {
		t.Errorf("tail = %q, want defgh", got)
	}
}

func TestLineFunc(t *testing.T) {
	var got []string
	l := NewLineFunc(func(s string) { got = append(got, s) })
	for _, p := range []string{"one\r\ntw", "o\n\nthr", "ee"} {
		if _, err := l.Write([]byte(p)); err != nil {
			t.Fatal(err)
		}
	}
	if want := []string{"one", "two"}; !slices.Equal(got, want) {
		t.Fatalf("before Close: %q, want %q (empty lines dropped, CR trimmed)", got, want)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if want := []string{"one", "two", "three"}; !slices.Equal(got, want) {
		t.Fatalf("after Close: %q, want %q", got, want)
	}
	got = nil
	long := strings.Repeat("x", 64<<10+1)
	if _, err := l.Write([]byte(long)); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0] != long {
		t.Errorf("a line over 64 KiB without its end: %d pieces, want it passed on", len(got))
	}
}
