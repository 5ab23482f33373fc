package templates

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/fullsend-ai/agent-sandbox/internal/testtool"
)

const (
	diffMarker  = "<!-- fullsend-policy-diff project=. -->"
	diffComment = diffMarker + "\n### fullsend policy diff: highest risk high\n"
	headSHA     = "0123456789abcdef0123456789abcdef01234567"
)

// curlStub records its arguments; a GET prints STUB_NOTES, a write keeps
// the --data file in STUB_DIR/body.
const curlStub = `#!/bin/sh
printf '%s\n' "$*" >> "$STUB_DIR/calls"
case "$*" in
*--request*)
  for a in "$@"; do case "$a" in @*) cp "${a#@}" "$STUB_DIR/body" ;; esac; done ;;
*) printf '%s' "$STUB_NOTES" ;;
esac
`

// TestPolicyDiffNoteScript runs the GitLab note job's script with a stub
// curl and the real jq: one note per project, updated in place.
func TestPolicyDiffNoteScript(t *testing.T) {
	sh := testtool.Find(t, "sh", "the base system (a POSIX sh)")
	testtool.Find(t, "jq", "apt-get install jq")
	docs := decodeAll(t, readAll(t, "gitlab", "fullsend-policy-diff.gitlab-ci.yml"))
	script := strings.Join(toStrings(asList(asMap(docs[1]["fullsend-policy-diff-note"])["script"])), "\n")
	other := `{"id":5,"body":"looks fine"}`
	mine := `{"id":8,"body":` + jsonQuote(diffComment) + `}`
	for _, tc := range []struct {
		name, token, mr, notes string
		off                    bool // mr-note left at its default
		code                   int
		want                   string
	}{
		{name: "no token: only says so", mr: `{"mr":7,"sha":"` + headSHA + `"}`},
		{name: "not opted in: no note, even with a token", token: "glpat-x", off: true, mr: `{"mr":7,"sha":"` + headSHA + `"}`, notes: "[" + other + "]"},
		{name: "creates the note", token: "glpat-x", mr: `{"mr":7,"sha":"` + headSHA + `"}`, notes: "[" + other + "]", want: "--request POST"},
		{name: "updates the marked note", token: "glpat-x", mr: `{"mr":7,"sha":"` + headSHA + `"}`, notes: "[" + other + "," + mine + "]", want: "--request PUT"},
		{name: "another merge request's artifacts", token: "glpat-x", mr: `{"mr":8,"sha":"` + headSHA + `"}`, code: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			os.WriteFile(filepath.Join(dir, "curl"), []byte(curlStub), 0o755)
			os.MkdirAll(filepath.Join(dir, "fullsend-policy-diff"), 0o755)
			os.WriteFile(filepath.Join(dir, "fullsend-policy-diff", "merge-request.json"), []byte(tc.mr+"\n"), 0o644)
			os.WriteFile(filepath.Join(dir, "fullsend-policy-diff", "comment.md"), []byte(diffComment), 0o644)
			cmd := exec.Command(sh, "-c", script)
			cmd.Dir = dir
			cmd.Env = []string{"PATH=" + dir + string(os.PathListSeparator) + os.Getenv("PATH"), "STUB_DIR=" + dir, "STUB_NOTES=" + tc.notes,
				"CI_JOB_IMAGE=registry.example/curl-jq@sha256:" + strings.Repeat("1", 64), "CI_API_V4_URL=https://gitlab.example/api/v4",
				"CI_PROJECT_ID=3", "CI_MERGE_REQUEST_IID=7", "CI_COMMIT_SHA=" + headSHA, "FULLSEND_MR_NOTE_TOKEN=" + tc.token,
				"FULLSEND_MR_NOTE=" + strconv.FormatBool(!tc.off)}
			out, err := cmd.CombinedOutput()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			calls, _ := os.ReadFile(filepath.Join(dir, "calls"))
			if code != tc.code {
				t.Fatalf("exit %d, want %d\n%s\n%s", code, tc.code, out, calls)
			}
			writes := 0
			for _, c := range strings.Split(string(calls), "\n") {
				if strings.Contains(c, "--request") {
					writes++
					if !strings.Contains(c, tc.want) || tc.want == "--request PUT" && !strings.Contains(c, "/notes/8") {
						t.Errorf("write %s, want %s", c, tc.want)
					}
				}
			}
			if (writes == 1) != (tc.want != "") || writes > 1 {
				t.Fatalf("%d writes\n%s", writes, calls)
			}
			if tc.want != "" {
				var note struct{ Body string }
				b, _ := os.ReadFile(filepath.Join(dir, "body"))
				if json.Unmarshal(b, &note) != nil || note.Body != diffComment {
					t.Errorf("note body %q", b)
				}
			}
		})
	}
}

func jsonQuote(s string) string { b, _ := json.Marshal(s); return string(b) }

// TestPolicyDiffInstallsBasePin runs the install step of both diff jobs in
// a real git repository whose pull request bumps .fullsend-version: the
// base's pin is installed; without one the job is skipped; a malformed one
// fails.
func TestPolicyDiffInstallsBasePin(t *testing.T) {
	bash := testtool.Find(t, "bash", "the base system")
	git := testtool.Find(t, "git", "apt-get install git")
	var ghInstall string
	for _, s := range steps(decodeAll(t, readAll(t, "github", "workflows/fullsend-policy-diff.yml"))[0]) {
		if s["id"] == "install" {
			ghInstall = asString(s["run"])
		}
	}
	gl := decodeAll(t, readAll(t, "gitlab", "fullsend-policy-diff.gitlab-ci.yml"))
	glScript := toStrings(asList(asMap(gl[1]["fullsend-policy-diff"])["script"]))
	glInstall := glScript[1] // after the image pin check
	for _, tc := range []struct {
		name, base string // "" = no .fullsend-version at the base
		code       int
		install    string // the go install argument, "" for none
	}{
		{name: "the base's pin, not the pull request's", base: "v0.1.0\n", install: "github.com/fullsend-ai/agent-sandbox/cmd/fullsend@v0.1.0"},
		{name: "no pin: skipped", base: ""},
		{name: "malformed pin", base: "latest\n", code: 78},
	} {
		for _, ci := range []string{"github", "gitlab"} {
			t.Run(ci+"/"+tc.name, func(t *testing.T) {
				repo, bin := t.TempDir(), t.TempDir()
				os.WriteFile(filepath.Join(bin, "go"), []byte("#!/bin/sh\nprintf '%s\\n' \"$*\" >> \"$STUB_DIR/go.calls\"\n"), 0o755)
				run := func(args ...string) string {
					cmd := exec.Command(git, args...)
					cmd.Dir = repo
					cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
					out, err := cmd.CombinedOutput()
					if err != nil {
						t.Fatalf("git %v: %v\n%s", args, err, out)
					}
					return strings.TrimSpace(string(out))
				}
				run("init", "-q")
				os.WriteFile(filepath.Join(repo, "README"), []byte("x\n"), 0o644)
				if tc.base != "" {
					os.WriteFile(filepath.Join(repo, ".fullsend-version"), []byte(tc.base), 0o644)
				}
				run("add", "-A")
				run("commit", "-qm", "base")
				base := run("rev-parse", "HEAD")
				os.WriteFile(filepath.Join(repo, ".fullsend-version"), []byte("v9.9.9\n"), 0o644) // the pull request's own pick
				run("add", "-A")
				run("commit", "-qm", "head")
				out := filepath.Join(t.TempDir(), "out")
				script, shell := ghInstall, bash
				env := []string{"BASE_SHA=" + base, "GITHUB_OUTPUT=" + out, "GITHUB_STEP_SUMMARY=" + filepath.Join(t.TempDir(), "summary")}
				if ci == "gitlab" {
					script, shell = glInstall, "sh"
					env = []string{"CI_MERGE_REQUEST_DIFF_BASE_SHA=" + base}
				}
				cmd := exec.Command(shell, "-c", script)
				cmd.Dir = repo
				cmd.Env = append(env, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "STUB_DIR="+bin, "HOME="+t.TempDir())
				o, err := cmd.CombinedOutput()
				code := 0
				if ee, ok := err.(*exec.ExitError); ok {
					code = ee.ExitCode()
				} else if err != nil {
					t.Fatal(err)
				}
				if code != tc.code {
					t.Fatalf("exit %d, want %d\n%s", code, tc.code, o)
				}
				got, _ := os.ReadFile(filepath.Join(bin, "go.calls"))
				if want := "install " + tc.install + "\n"; tc.install != "" && string(got) != want || tc.install == "" && len(got) != 0 {
					t.Errorf("go %q, want install %q", got, tc.install)
				}
				if ci == "github" && tc.base == "" {
					if b, _ := os.ReadFile(out); string(b) != "skip=true\n" {
						t.Errorf("GITHUB_OUTPUT %q, want skip=true", b)
					}
				}
			})
		}
	}
}
