package stage

import (
	"encoding/base64"
	"strings"
	"testing"
)

func TestTokenScanner(t *testing.T) {
	const tok = "ghs_ScannerTestToken0123456789abcdefghij"
	s := NewScanner(mapEnv(map[string]string{"GITHUB_TOKEN": tok, "SHORT": "true", "CI_JOB_TOKEN": "short"}),
		[]string{"GITHUB_TOKEN", "SHORT", "CI_JOB_TOKEN", "UNSET"})
	pad := strings.Repeat("x ", 200<<10) // longer than a chunk
	for _, tc := range []struct {
		name, in string
		exact    bool
		shape    bool
	}{
		{"clean", "hello world " + pad, false, false},
		{"raw value", "token=" + tok, true, true},
		{"value across the chunk boundary", pad[:256<<10-10] + tok + pad, true, true},
		{"basic credential", "basic " + base64.StdEncoding.EncodeToString([]byte("x-access-token:"+tok)), true, true},
		{"base64 at offset 1", base64.StdEncoding.EncodeToString([]byte("a" + tok + "b")), true, false},
		{"base64 at offset 2", base64.URLEncoding.EncodeToString([]byte("ab" + tok)), true, false},
		{"shape only", "x ghp_" + strings.Repeat("A", 36), false, true},
		{"shape too short", "ghp_short", false, false},
		{"shape inside a word", "xghp_" + strings.Repeat("A", 36), false, false},
		{"gitlab instance prefix", "acme-glcbt-" + strings.Repeat("a", 30), false, true},
		{"anthropic", "sk-ant-api03-" + strings.Repeat("a", 40), false, true},
		{"job token in a URL", "https://gitlab-ci-token:" + strings.Repeat("z", 24) + "@h/p", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := s.scan(strings.NewReader(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			exact, shape := false, false
			for _, f := range got {
				exact = exact || f.Exact
				shape = shape || !f.Exact
				if strings.Contains(f.What, tok) || strings.Contains(f.What, "AAAA") {
					t.Errorf("a finding holds the value: %q", f.What)
				}
			}
			if exact != tc.exact || shape != tc.shape {
				t.Errorf("exact %v shape %v, want %v %v: %+v", exact, shape, tc.exact, tc.shape, got)
			}
		})
	}
}
