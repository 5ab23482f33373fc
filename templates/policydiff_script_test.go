package templates

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fullsend-ai/agent-sandbox/internal/testtool"
)

const (
	diffMarker  = "<!-- fullsend-policy-diff project=. -->"
	diffComment = diffMarker + "\n### fullsend policy diff: highest risk high\n"
	headSHA     = "0123456789abcdef0123456789abcdef01234567"
)

// ghStub stands in for the gh CLI: it records every call (and MARKER) in
// STUB_DIR/calls, serves the artifact from STUB_ARTIFACT, the pull
// request's head from STUB_HEAD and an existing comment id from STUB_ID,
// and keeps a posted body in STUB_DIR/body.
const ghStub = `#!/bin/sh
printf '%s|MARKER=%s\n' "$*" "${MARKER:-}" >> "$STUB_DIR/calls"
case "$1 $2" in
"run download")
  while [ $# -gt 0 ]; do [ "$1" = --dir ] && dir=$2; shift; done
  mkdir -p "$dir" && cp -P "$STUB_ARTIFACT"/* "$dir"/ ;;
"api repos/"*) printf '%s\n' "$STUB_HEAD" ;;
"api --paginate") printf '%s' "$STUB_ID" ;;
"api --method")
  for a in "$@"; do case "$a" in body=@*) cp "${a#body=@}" "$STUB_DIR/body" ;; esac; done ;;
esac
`

// TestPolicyDiffCommentScript runs the GitHub comment job's script with a
// stub gh: it updates the one marked comment or creates it, and refuses an
// artifact that names another commit, lacks the marker or is malformed.
func TestPolicyDiffCommentScript(t *testing.T) {
	bash := testtool.Find(t, "bash", "the base system")
	doc := decodeAll(t, readAll(t, "github", "workflows/fullsend-policy-diff-comment.yml"))[0]
	script := asString(steps(doc)[0]["run"])
	for _, tc := range []struct {
		name              string
		pr, comment, head string
		existing          string
		link              bool
		code              int
		want              string // the write call, "" for none
	}{
		{name: "creates the comment", pr: `{"pr":12,"head_sha":"` + headSHA + `"}`, comment: diffComment, head: headSHA, want: "api --method POST repos/acme/widgets/issues/12/comments"},
		{name: "updates the marked comment", pr: `{"pr":12,"head_sha":"` + headSHA + `"}`, comment: diffComment, head: headSHA, existing: "99", want: "api --method PATCH repos/acme/widgets/issues/comments/99"},
		{name: "pull request not at the diffed commit", pr: `{"pr":12,"head_sha":"` + headSHA + `"}`, comment: diffComment, head: strings.Repeat("f", 40), code: 1},
		{name: "no marker", pr: `{"pr":12,"head_sha":"` + headSHA + `"}`, comment: "LGTM, no risk\n", head: headSHA, code: 1},
		{name: "malformed number", pr: `{"pr":"12; rm -rf /","head_sha":"` + headSHA + `"}`, comment: diffComment, head: headSHA, code: 1},
		{name: "a link is not a file", pr: `{"pr":12,"head_sha":"` + headSHA + `"}`, comment: diffComment, head: headSHA, link: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, art := t.TempDir(), t.TempDir()
			os.WriteFile(filepath.Join(dir, "gh"), []byte(ghStub), 0o755)
			os.WriteFile(filepath.Join(art, "pull-request.json"), []byte(tc.pr+"\n"), 0o644)
			if tc.link {
				os.WriteFile(filepath.Join(dir, "secret"), []byte(diffComment), 0o644)
				os.Symlink(filepath.Join(dir, "secret"), filepath.Join(art, "comment.md"))
			} else {
				os.WriteFile(filepath.Join(art, "comment.md"), []byte(tc.comment), 0o644)
			}
			cmd := exec.Command(bash, "-c", script)
			cmd.Env = []string{"PATH=" + dir + string(os.PathListSeparator) + os.Getenv("PATH"), "RUNNER_TEMP=" + t.TempDir(),
				"STUB_DIR=" + dir, "STUB_ARTIFACT=" + art, "STUB_HEAD=" + tc.head, "STUB_ID=" + tc.existing,
				"REPO=acme/widgets", "RUN_ID=7", "RUN_HEAD_SHA=" + headSHA, "GH_TOKEN=x"}
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
			var writes []string
			for _, c := range strings.Split(strings.TrimSpace(string(calls)), "\n") {
				if strings.HasPrefix(c, "api --method") {
					writes = append(writes, c)
				}
				if strings.HasPrefix(c, "api --paginate") && !strings.HasSuffix(c, "|MARKER="+diffMarker) {
					t.Errorf("comments looked up without the marker: %s", c)
				}
			}
			if tc.want == "" {
				if len(writes) != 0 {
					t.Errorf("wrote %v", writes)
				}
				return
			}
			if len(writes) != 1 || !strings.HasPrefix(writes[0], tc.want+" ") {
				t.Errorf("writes %v, want %s", writes, tc.want)
			}
			if body, _ := os.ReadFile(filepath.Join(dir, "body")); string(body) != tc.comment {
				t.Errorf("posted %q", body)
			}
		})
	}
}

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
		code                   int
		want                   string
	}{
		{name: "no token: only says so", mr: `{"mr":7,"sha":"` + headSHA + `"}`},
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
				"CI_PROJECT_ID=3", "CI_MERGE_REQUEST_IID=7", "CI_COMMIT_SHA=" + headSHA, "FULLSEND_MR_NOTE_TOKEN=" + tc.token}
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
