package stage

import (
	"bytes"
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

// FuzzScanner: whatever a workspace file holds, the scanner never panics,
// never reports a value (a finding names a kind), and always finds one of
// the job's own values placed anywhere in it (across a chunk boundary:
// TestTokenScanner).
func FuzzScanner(f *testing.F) {
	const tok = "glpat-FuzzScannerJobToken0123"
	f.Add([]byte("hello"), uint32(0))
	f.Add([]byte("ghp_"+strings.Repeat("A", 36)), uint32(3))
	f.Add([]byte(base64.StdEncoding.EncodeToString([]byte("x-access-token:"+tok))), uint32(7))
	s := NewScanner(mapEnv(map[string]string{"CI_JOB_TOKEN": tok}), []string{"CI_JOB_TOKEN"})
	f.Fuzz(func(t *testing.T, data []byte, at uint32) {
		got, err := s.scan(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range got {
			if strings.Contains(f.What, tok) || len(f.What) > 80 {
				t.Errorf("a finding holds data: %q", f.What)
			}
		}
		pos := int(at % uint32(len(data)+1))
		with := append(append(append([]byte(nil), data[:pos]...), tok...), data[pos:]...)
		got, err = s.scan(bytes.NewReader(with))
		if err != nil {
			t.Fatal(err)
		}
		exact := false
		for _, f := range got {
			exact = exact || f.Exact
		}
		if !exact {
			t.Errorf("the job's value at %d not found", pos)
		}
	})
}
