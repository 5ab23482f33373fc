package main

import (
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fullsend-ai/agent-sandbox/templates"
)

func TestTemplatesWriteDir(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    func(dir string) []string
		want    string // file expected under dir
		wantErr string
	}{
		{name: "github positional DIR", args: func(d string) []string { return []string{"github", d} },
			want: "workflows/fullsend.yml"},
		{name: "gitlab positional DIR", args: func(d string) []string { return []string{"gitlab", d} },
			want: "fullsend.gitlab-ci.yml"},
		{name: "github --out", args: func(d string) []string { return []string{"github", "--out", d} },
			want: "actions/fullsend-run/action.yml"},
		{name: "DIR and the same --out", args: func(d string) []string { return []string{"gitlab", d, "--out", d} },
			want: "fullsend.gitlab-ci.yml"},
		{name: "DIR and another --out", args: func(d string) []string { return []string{"gitlab", d, "--out", d + "x"} },
			wantErr: "directory given twice"},
		{name: "too many arguments", args: func(d string) []string { return []string{"gitlab", d, d} },
			wantErr: "3 arguments, at most 2 (usage: fullsend templates write github|gitlab [DIR] [flags])"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			stdout, _, err := runFullsend(t, append([]string{"templates", "write"}, tc.args(dir)...)...)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(dir, filepath.FromSlash(tc.want))
			if _, err := os.Stat(p); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(stdout, p) {
				t.Errorf("stdout %q does not list %s", stdout, p)
			}
		})
	}
}

// TestTemplatesWriteLikeInit: github goes into .github by default, and a
// second write keeps an edited file, saying so, unless --force.
func TestTemplatesWriteLikeInit(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	if _, _, err := runFullsend(t, "templates", "write", "github"); err != nil {
		t.Fatal(err)
	}
	wf := filepath.Join(".github", "workflows", "fullsend.yml")
	if err := os.WriteFile(wf, []byte("# edited\n"), 0o644); err != nil {
		t.Fatalf("github did not default to .github: %v", err)
	}
	_, stderr, err := runFullsend(t, "templates", "write", "github")
	if err != nil || !strings.Contains(stderr, "skipped "+wf) || !strings.Contains(stderr, "--force") {
		t.Fatalf("second write: %v, stderr %q; want %s skipped with a line", err, stderr, wf)
	}
	if got, _ := os.ReadFile(wf); string(got) != "# edited\n" {
		t.Errorf("edited workflow replaced: %q", got)
	}
	if _, _, err := runFullsend(t, "templates", "write", "github", "--force"); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(wf); string(got) == "# edited\n" {
		t.Error("--force kept the edited workflow")
	}
}

// TestTemplatesWriteHelpNamesEveryFile: `templates write --help` names
// every file `templates list` prints for each CI system, in its description
// and (by file name) in its example.
func TestTemplatesWriteHelpNamesEveryFile(t *testing.T) {
	cmd := newTemplatesWriteCmd()
	for _, kind := range templates.Kinds() {
		names, err := templates.List(kind)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range names {
			if !strings.Contains(cmd.Long, n) {
				t.Errorf("templates write --help does not name %s template %s", kind, n)
			}
			if !strings.Contains(cmd.Example, path.Base(n)) {
				t.Errorf("templates write --help example does not name %s template %s", kind, n)
			}
		}
	}
}
