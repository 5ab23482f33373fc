package runner

import "testing"

func TestSecretEnvName(t *testing.T) {
	tests := []struct {
		name   string
		secret bool
	}{
		{"FULLSEND_AGENT_TOKEN", true},
		{"GITHUB_TOKEN", true},
		{"ANTHROPIC_API_KEY", true},
		{"KEY", true},
		{"AWS_SECRET_ACCESS_KEY", true},
		{"DB_PASSWORD", true},
		{"GOOGLE_APPLICATION_CREDENTIALS", true},
		{"BASIC_AUTH", true},
		{"FULLSEND_AGENT", false},
		{"FULLSEND_RUN_ID", false},
		{"FULLSEND_FORGE_URL", false},
		{"FULLSEND_SPAWN_URL", false},
		{"MONKEY_BUSINESS", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := secretEnvName.MatchString(tt.name); got != tt.secret {
				t.Fatalf("secretEnvName(%q) = %v, want %v", tt.name, got, tt.secret)
			}
		})
	}
}
