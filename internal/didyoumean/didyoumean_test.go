package didyoumean

import (
	"strings"
	"testing"
)

func TestClosest(t *testing.T) {
	known := []string{"allowed-tools", "description", "disallowedTools", "name", "permissionMode"}
	tests := []struct{ in, want string }{
		{"allowed_tools", "allowed-tools"},
		{"disallowed-tools", "disallowedTools"},
		{"descripton", "description"},
		{"nme", "name"},
		{"permisionMode", "permissionMode"},
		{"colour", ""},
		{"nmae", "name"}, // a swap of neighbours is one edit
		{"descriptoin", "description"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := Closest(tt.in, known); got != tt.want {
			t.Errorf("Closest(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestDistance(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"a", "", 1}, {"kitten", "sitting", 3}, {"flaw", "lawn", 2},
		{"naïve", "naive", 1}, // runes, not bytes
		{strings.Repeat("a", 65), "a", 1 << 30},
	}
	for _, tt := range tests {
		if got := Distance(tt.a, tt.b); got != tt.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}
