package profile

import "testing"

// TestCanonicalType holds normalize_provider_type's table (lib.rs:188-207 @
// v0.0.111 with inference.rs:219-231).
func TestCanonicalType(t *testing.T) {
	tests := []struct {
		in, want  string
		ok, alias bool
	}{
		{"gh", "github", true, true},
		{" GH ", "github", true, true},
		{"github", "github", true, false},
		{"glab", "gitlab", true, true},
		{"claude", "claude-code", true, true},
		{"claude_code", "claude-code", true, true},
		{"gcp", "google-cloud", true, true},
		{"vertex", "google-vertex-ai", true, true},
		{"gcp-vertex", "google-vertex-ai", true, true},
		{"anthropic", "anthropic", true, false},
		{"fullsend-github-ro", "fullsend-github-ro", false, false},
		{"", "", false, false},
	}
	for _, tt := range tests {
		id, ok := CanonicalType(tt.in)
		if id != tt.want || ok != tt.ok || IsAlias(tt.in) != tt.alias {
			t.Errorf("CanonicalType(%q) = %q, %v (alias %v); want %q, %v (alias %v)", tt.in, id, ok, IsAlias(tt.in), tt.want, tt.ok, tt.alias)
		}
	}
}
