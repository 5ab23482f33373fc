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
