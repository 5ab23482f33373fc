package stage

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fullsend-ai/agent-sandbox/internal/testtool"
)

func TestParseGitConfig(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []string // section/subsection/key=value, "key" alone without value
		bad      bool
	}{
		{name: "sections and values", in: "[core]\n\tbare = false\n[remote \"origin\"]\n\turl = https://h/r\n",
			want: []string{"core//bare=false", "remote/origin/url=https://h/r"}},
		{name: "legacy dotted subsection is lower-cased", in: "[Branch.Main]\nremote=origin\n", want: []string{"branch/main/remote=origin"}},
		{name: "variable on the header line", in: "[core] bare = true\n", want: []string{"core//bare=true"}},
		{name: "boolean without value", in: "[core]\nbare\n", want: []string{"core//bare"}},
		{name: "quotes, escapes, comments", in: "[a]\nk = \" x ;y\" # c\nl = a\\tb\\\\c\\\"d ; c\nm = \"p\"q\"r\"\n",
			want: []string{"a//k= x ;y", "a//l=a\tb\\c\"d", "a//m=pqr"}},
		{name: "continuation and inner blanks", in: "[a]\nk = one \\\n  two  three  \n", want: []string{"a//k=one   two  three"}},
		{name: "CRLF", in: "[a]\r\nk = v\r\n", want: []string{"a//k=v"}},
		{name: "quoted subsection escapes", in: "[url \"https://x\\\"y\"]\ninsteadOf = z\n", want: []string{"url/https://x\"y/insteadof=z"}},
		{name: "keys are case-insensitive", in: "[Core]\nHooksPath = /x\n", want: []string{"core//hookspath=/x"}},
		{name: "unterminated quote", in: "[a]\nk = \"x\n", bad: true},
		{name: "variable before any section", in: "k = v\n", bad: true},
		{name: "bad escape", in: "[a]\nk = \\q\n", bad: true},
		{name: "unterminated header", in: "[a\n", bad: true},
		{name: "blanks before a quoted subsection", in: "[a \t \"b\"]\nk ; boolean, then a comment\n", want: []string{"a/b/k"}},
		{name: "subsection not quoted", in: "[a b]\n", bad: true},
		{name: "text after a quoted subsection", in: "[a \"b\"x]\n", bad: true},
		{name: "newline in a quoted subsection", in: "[a \"b\n\"]\n", bad: true},
		{name: "escaped newline in a quoted subsection", in: "[a \"b\\\n\"]\n", bad: true},
		{name: "blank before the section name", in: "[ a]\n", bad: true},
		{name: "dotted header without a section", in: "[.b]\n", bad: true},
		{name: "text after a variable name", in: "[a]\nk x\n", bad: true},
		{name: "backslash at the end of the file", in: "[a]\nk = \\", bad: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseGitConfig([]byte(tc.in))
			if tc.bad {
				if err == nil {
					t.Fatalf("parsed %+v, want an error", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var s []string
			for _, e := range got {
				x := e.section + "/" + e.subsection + "/" + e.key
				if e.hasValue {
					x += "=" + e.value
				}
				s = append(s, x)
			}
			if !slices.Equal(s, tc.want) {
				t.Errorf("got %q, want %q", s, tc.want)
			}
		})
	}
}

func TestSanitizeGitConfig(t *testing.T) {
	in := "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n" +
		"[extensions]\n\tobjectformat = sha1\n" +
		"[remote \"origin\"]\n\turl = https://gitlab-ci-token:secret@gitlab.example.com/g/p.git?private_token=secret#x\n" +
		"\tfetch = +refs/heads/*:refs/remotes/origin/*\n\tpushurl = ssh://git:secret@h/p\n" +
		"[branch \"main\"]\n\tremote = origin\n\tmerge = refs/heads/main\n" +
		"[submodule \"lib\"]\n\turl = git@github.com:o/lib.git\n\tactive = true\n" +
		strings.Join(gitConfigVectors, "")
	out, dropped := sanitizeGitConfig([]byte(in))
	got, err := parseGitConfig(out)
	if err != nil {
		t.Fatalf("the rewrite does not parse: %v\n%s", err, out)
	}
	var s []string
	for _, e := range got {
		s = append(s, e.section+"/"+e.subsection+"/"+e.key+"="+e.value)
	}
	want := []string{"core//repositoryformatversion=0", "core//filemode=true", "core//bare=false",
		"extensions//objectformat=sha1",
		"remote/origin/url=https://gitlab.example.com/g/p.git", "remote/origin/fetch=+refs/heads/*:refs/remotes/origin/*",
		"remote/origin/pushurl=ssh://git@h/p", "branch/main/remote=origin", "branch/main/merge=refs/heads/main",
		"submodule/lib/url=git@github.com:o/lib.git", "submodule/lib/active=true"}
	if !slices.Equal(s, want) {
		t.Errorf("kept %q\nwant %q\n%s", s, want, out)
	}
	if bytes.Contains(out, []byte("secret")) || bytes.Contains(out, []byte("eC1hY2")) {
		t.Errorf("a credential survived:\n%s", out)
	}
	for _, d := range dropped {
		if strings.Contains(d, "github.com") || strings.Contains(d, "secret") {
			t.Errorf("a dropped name shows a subsection: %q", d)
		}
	}
	for _, want := range []string{"http.<...>.extraheader", "include.path", "includeif.<...>.path", "core.fsmonitor",
		"remote.<...>.url (credentials or query removed)"} {
		if !slices.Contains(dropped, want) {
			t.Errorf("dropped %q lacks %q", dropped, want)
		}
	}
	if out2, _ := sanitizeGitConfig([]byte("[a\n")); !bytes.Contains(out2, []byte("repositoryformatversion")) {
		t.Errorf("an unparsable config is not replaced by a minimal one:\n%s", out2)
	}
}

// gitConfigVectors are the config entries that carry a credential or run a
// command; none may survive the rewrite.
var gitConfigVectors = []string{
	"[http \"https://github.com/\"]\n\textraheader = AUTHORIZATION: basic eC1hY2Nlc3MtdG9rZW46c2VjcmV0\n",
	"[http]\n\textraHeader = PRIVATE-TOKEN: secret\n\tproxy = http://u:p@proxy\n",
	"[url \"https://x-access-token:secret@github.com/\"]\n\tinsteadOf = https://github.com/\n",
	"[credential]\n\thelper = store --file=/tmp/creds\n[credential \"https://h\"]\n\tusername = u\n",
	"[include]\n\tpath = /github/runner_temp/git-credentials.config\n",
	"[includeIf \"gitdir:/github/workspace/.git\"]\n\tpath = /github/runner_temp/git-credentials.config\n",
	"[core]\n\tsshCommand = ssh -i /tmp/key\n\thooksPath = /tmp/hooks\n\tfsmonitor = /tmp/x\n\tpager = sh -c x\n\teditor = x\n\taskPass = x\n\tworktree = /elsewhere\n",
	"[filter \"lfs\"]\n\tsmudge = sh -c x\n[diff \"x\"]\n\tcommand = x\n[merge \"x\"]\n\tdriver = x\n[alias]\n\tst = !sh -c x\n",
	"[uploadpack]\n\tpackObjectsHook = x\n[submodule \"s\"]\n\tupdate = !sh -c x\n[lfs]\n\turl = https://u:secret@h/lfs\n",
	"[remote \"evil\"]\n\turl = ext::sh -c x\n\tpushurl = file:///etc\n\ttagopt = --upload-pack=x\n",
}

// TestSanitizedGitConfigRealGit has real git read each vector's rewrite
// (includes followed): it parses, and git finds only what was kept.
func TestSanitizedGitConfigRealGit(t *testing.T) {
	git := testtool.Find(t, "git", ".ci/install.d/00-apt.sh")
	for i, v := range gitConfigVectors {
		out, _ := sanitizeGitConfig([]byte("[core]\n\tbare = false\n" + v))
		f := filepath.Join(t.TempDir(), "config")
		os.WriteFile(f, out, 0o600)
		cmd := exec.Command(git, "config", "--file", f, "--list", "--includes")
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+t.TempDir())
		b, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("vector %d: git config: %v\n%s\n%s", i, err, b, out)
		}
		if strings.TrimSpace(string(b)) != "core.bare=false" {
			t.Errorf("vector %d: git still reads:\n%s", i, b)
		}
	}
}

func TestSanitizeRemoteURL(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"https://gitlab-ci-token:tok@gitlab.example.com/g/p.git", "https://gitlab.example.com/g/p.git"},
		{"https://x-access-token:tok@github.com/o/r", "https://github.com/o/r"},
		{"https://tok@github.com/o/r?a=b", "https://github.com/o/r"},
		{"ssh://git:pw@host:22/o/r.git", "ssh://git@host:22/o/r.git"},
		{"git@github.com:o/r.git", "git@github.com:o/r.git"},
		{"https://github.com/o/r", "https://github.com/o/r"},
		{"ext::sh -c id", ""},
		{"file:///etc/passwd", ""},
		{"/srv/git/r.git", ""},
		{"../sibling.git", ""},
		{"fd::3", ""},
	} {
		got, ok := sanitizeRemoteURL(tc.in)
		if !ok {
			got = ""
		}
		if got != tc.want {
			t.Errorf("sanitizeRemoteURL(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// FuzzSanitizeGitConfig: whatever the input, the rewrite parses, holds
// only allowlisted variables, and rewriting it again changes nothing.
func FuzzSanitizeGitConfig(f *testing.F) {
	for _, v := range gitConfigVectors {
		f.Add([]byte("[core]\n\tbare = false\n[remote \"o\"]\n\turl = https://u:p@h/r\n" + v))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		out, _ := sanitizeGitConfig(data)
		entries, err := parseGitConfig(out)
		if err != nil {
			t.Fatalf("the rewrite does not parse: %v\n%q", err, out)
		}
		for _, e := range entries {
			if keys := gitConfigAllowed[e.section]; !keys[e.key] && !keys["*"] {
				t.Fatalf("%s survived", e.name())
			}
		}
		if again, _ := sanitizeGitConfig(out); !bytes.Equal(again, out) {
			t.Fatalf("not idempotent:\n%q\n%q", out, again)
		}
	})
}
