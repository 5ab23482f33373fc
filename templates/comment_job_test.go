package templates

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/fullsend-ai/agent-sandbox/internal/testtool"
)

// ghAPIStub stands in for the gh CLI: it records every call in
// STUB_DIR/calls and answers `gh api` with the JSON of STUB_PULLS (the
// pull request list), STUB_PR (one pull request) or STUB_COMMENTS, through
// the real jq and the call's --jq filter, as gh does; a write keeps the
// body in STUB_DIR/body. Nothing else (`gh run download`) answers.
const ghAPIStub = `#!/bin/sh
printf '%s\n' "$*" >> "$STUB_DIR/calls"
[ "$1" = api ] || exit 1
filter=. data= write=
prev=
for a in "$@"; do
  [ "$prev" = --jq ] && filter=$a
  case "$a" in
  repos/*/pulls) data=$STUB_PULLS ;;
  repos/*/pulls/[0-9]*) data=$STUB_PR ;;
  repos/*/issues/*/comments) data=$STUB_COMMENTS ;;
  PATCH|POST) write=1 ;;
  body=@*) [ -n "$write" ] && cp "${a#body=@}" "$STUB_DIR/body" ;;
  esac
  prev=$a
done
[ -n "$write" ] && exit 0
printf '%s' "$data" | jq -r "$filter"
`

// goStub stands in for `go install`: it writes into $GOBIN a fullsend that
// records its arguments, directory and environment and writes a comment
// naming the revisions it was given (or fails with STUB_FULLSEND_FAIL).
const goStub = `#!/bin/sh
printf 'GOBIN=%s %s\n' "$GOBIN" "$*" >> "$STUB_DIR/go.calls"
mkdir -p "$GOBIN"
cat > "$GOBIN/fullsend" <<'STUB'
#!/bin/sh
printf '%s\n' "$*" >> "$STUB_DIR/fullsend.calls"
env > "$STUB_DIR/fullsend.env"
[ -n "$STUB_FULLSEND_FAIL" ] && exit 1
sides="$3 $4"
while [ $# -gt 0 ]; do [ "$1" = --comment-file ] && file=$2; shift; done
printf '%s\n%s\n' '<!-- fullsend-policy-diff project=. -->' "### diff of $sides" > "$file"
echo '{}'
STUB
chmod +x "$GOBIN/fullsend"
`

// commentRepo is a served repository ("origin") with a base commit on
// main, a pull request's head and GitHub's merge commit of the two at
// refs/pull/12/merge, plus a stale merge ref at refs/pull/13/merge whose
// second parent is an older head.
type commentRepo struct {
	server, base, head, merge, oldHead string
}

func newCommentRepo(t *testing.T, git string, pin string) commentRepo {
	t.Helper()
	work, server := t.TempDir(), t.TempDir()
	run := func(args ...string) string {
		cmd := exec.Command(git, args...)
		cmd.Dir = work
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t",
			"GIT_COMMITTER_EMAIL=t@example.com", "HOME="+work, "GIT_CONFIG_NOSYSTEM=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	write := func(name, data string) {
		os.MkdirAll(filepath.Join(work, filepath.Dir(name)), 0o755)
		if err := os.WriteFile(filepath.Join(work, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run("init", "-q", "-b", "main")
	write("agents/a.md", "base\n")
	if pin != "" {
		write(".fullsend-version", pin)
	}
	run("add", "-A")
	run("commit", "-qm", "base")
	var r commentRepo
	r.base = run("rev-parse", "HEAD")
	run("checkout", "-qb", "feature")
	write("agents/a.md", "old head\n")
	run("commit", "-qam", "old head")
	r.oldHead = run("rev-parse", "HEAD")
	write("agents/a.md", "head\n")
	write(".fullsend-version", "v9.9.9\n") // the pull request's own pick of reviewer
	run("add", "-A")
	run("commit", "-qm", "head")
	r.head = run("rev-parse", "HEAD")
	run("checkout", "-q", "main")
	write("README", "base moved on\n")
	run("add", "-A")
	run("commit", "-qm", "main moves")
	run("merge", "-q", "--no-ff", "-m", "merge", "feature")
	r.merge = run("rev-parse", "HEAD")
	r.base = run("rev-parse", "HEAD^1")
	run("checkout", "-q", "--detach", "HEAD^1")
	run("merge", "-q", "--no-ff", "-m", "stale merge", r.oldHead)
	stale := run("rev-parse", "HEAD")
	bare := filepath.Join(server, "acme", "widgets.git")
	run("init", "-q", "--bare", bare)
	run("push", "-q", bare, r.base+":refs/heads/main", r.head+":refs/heads/feature",
		r.merge+":refs/pull/12/merge", stale+":refs/pull/13/merge")
	r.server = "file://" + server
	return r
}

// TestPolicyDiffCommentRecomputes runs the comment workflow's three steps
// with a stub gh and go, the real git and jq, against a served repository.
// The comment used to be the comment.md of the triggering run's artifact,
// which the pull request's author controls; it is now the diff the base
// branch's fullsend computes from GitHub's merge commit, and nothing of
// the triggering run is downloaded.
func TestPolicyDiffCommentRecomputes(t *testing.T) {
	bash := testtool.Find(t, "bash", "the base system")
	git := testtool.Find(t, "git", "apt-get install git")
	testtool.Find(t, "jq", "apt-get install jq")
	doc := decodeAll(t, readAll(t, "github", "workflows/fullsend-policy-diff-comment.yml"))[0]
	var scripts []string
	for _, s := range steps(doc) {
		if r := asString(s["run"]); r != "" {
			scripts = append(scripts, r)
		}
	}
	if len(scripts) != 3 {
		t.Fatalf("%d script steps, want 3 (fetch, diff, post)", len(scripts))
	}
	pr := func(n int, state, sha string) string {
		return `{"number":` + strconv.Itoa(n) + `,"state":"` + state + `","head":{"sha":"` + sha + `"}}`
	}
	mine := `{"id":99,"user":{"login":"github-actions[bot]"},"body":` + jsonQuote(diffMarker+"\nold verdict") + `}`
	forged := `{"id":98,"user":{"login":"mallory"},"body":` + jsonQuote(diffMarker+"\nno changes") + `}`
	for _, tc := range []struct {
		name, pin, pulls, single, comments string
		runHead                            func(commentRepo) string // default: the head
		fail                               bool
		say                                string // in the steps' output
		want                               string // the write call, "" for none
		body                               func(commentRepo) string
	}{
		{name: "posts the recomputed diff", pin: "v0.1.0\n", want: "api --method POST repos/acme/widgets/issues/12/comments",
			body: func(r commentRepo) string { return "### diff of git:" + r.base + " git:" + r.merge }},
		{name: "updates the bot's marked comment", pin: "v0.1.0\n", comments: "[" + forged + "," + mine + "]",
			want: "api --method PATCH repos/acme/widgets/issues/comments/99"},
		{name: "another user's marked comment is not the bot's", pin: "v0.1.0\n", comments: "[" + forged + "]",
			want: "api --method POST repos/acme/widgets/issues/12/comments"},
		{name: "a failed diff replaces the verdict", pin: "v0.1.0\n", fail: true, want: "api --method POST repos/acme/widgets/issues/12/comments",
			body: func(r commentRepo) string { return "### fullsend policy diff: failed" }},
		{name: "the merge ref is at another head", pin: "v0.1.0\n", pulls: "[" + pr(13, "open", "") + "]", say: "merge commit of pull request 13 is not at"},
		{name: "no pull request at this head", pin: "v0.1.0\n", pulls: "[]", say: "no open pull request at"},
		{name: "closed before posting", pin: "v0.1.0\n", single: "closed", say: "pull request 12 is no longer open"},
		{name: "the base pins no fullsend", pin: "", say: "the base of pull request 12 pins no fullsend"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newCommentRepo(t, git, tc.pin)
			runHead := r.head
			pulls := tc.pulls
			if pulls == "" {
				pulls = "[" + pr(11, "open", strings.Repeat("e", 40)) + "," + pr(12, "open", runHead) + "]"
			} else if tc.name == "the merge ref is at another head" {
				pulls = "[" + pr(13, "open", runHead) + "]"
			}
			single := pr(12, "open", runHead)
			if tc.single != "" {
				single = pr(12, tc.single, runHead)
			}
			if tc.comments == "" {
				tc.comments = "[]"
			}
			stub, tmp := t.TempDir(), t.TempDir()
			os.WriteFile(filepath.Join(stub, "gh"), []byte(ghAPIStub), 0o755)
			os.WriteFile(filepath.Join(stub, "go"), []byte(goStub), 0o755)
			output, summary := filepath.Join(tmp, "output"), filepath.Join(tmp, "summary")
			env := []string{"PATH=" + stub + string(os.PathListSeparator) + os.Getenv("PATH"), "HOME=" + tmp, "STUB_DIR=" + stub,
				"RUNNER_TEMP=" + tmp, "GITHUB_OUTPUT=" + output, "GITHUB_STEP_SUMMARY=" + summary,
				"STUB_PULLS=" + pulls, "STUB_PR=" + single, "STUB_COMMENTS=" + tc.comments,
				"REPO=acme/widgets", "SERVER_URL=" + r.server, "RUN_URL=https://github.example/acme/widgets/actions/runs/5",
				"RUN_HEAD_SHA=" + runHead, "RUN_HEAD_REPO=acme/widgets", "RUN_HEAD_BRANCH=feature"}
			if tc.fail {
				env = append(env, "STUB_FULLSEND_FAIL=1")
			}
			var said strings.Builder
			for i, script := range scripts {
				if i > 0 {
					if o, _ := os.ReadFile(output); !strings.Contains(string(o), "found=true") {
						break // the later steps run only when a pull request was found
					}
				}
				stepEnv := env
				if i == 0 || i == 2 {
					stepEnv = append(stepEnv, "GH_TOKEN=ghs_job_token_123")
				}
				cmd := exec.Command(bash, "-c", script)
				cmd.Dir = tmp
				cmd.Env = stepEnv
				out, err := cmd.CombinedOutput()
				said.Write(out)
				if err != nil {
					calls, _ := os.ReadFile(filepath.Join(stub, "calls"))
					t.Fatalf("step %d: %v\n%s\n%s", i+1, err, out, calls)
				}
			}
			if !strings.Contains(said.String(), tc.say) {
				t.Errorf("the steps said %q, want %q", said.String(), tc.say)
			}
			calls, _ := os.ReadFile(filepath.Join(stub, "calls"))
			var writes []string
			for _, c := range strings.Split(strings.TrimSpace(string(calls)), "\n") {
				if strings.HasPrefix(c, "run ") {
					t.Errorf("the comment job reads the triggering run: gh %s", c)
				}
				if strings.HasPrefix(c, "api --method PATCH") || strings.HasPrefix(c, "api --method POST") {
					writes = append(writes, c)
				}
			}
			if tc.want == "" {
				if len(writes) != 0 {
					t.Errorf("wrote %v", writes)
				}
				return
			}
			if len(writes) != 1 || !strings.HasPrefix(writes[0], tc.want+" ") {
				t.Fatalf("writes %v, want %s", writes, tc.want)
			}
			body, _ := os.ReadFile(filepath.Join(stub, "body"))
			if !strings.HasPrefix(string(body), diffMarker+"\n") {
				t.Errorf("posted %q without the marker", body)
			}
			if tc.body != nil && !strings.Contains(string(body), tc.body(r)) {
				t.Errorf("posted %q, want %q", body, tc.body(r))
			}
			goCalls, _ := os.ReadFile(filepath.Join(stub, "go.calls"))
			if !strings.Contains(string(goCalls), "install github.com/fullsend-ai/agent-sandbox/cmd/fullsend@v0.1.0\n") {
				t.Errorf("go %q: want the base's pin v0.1.0, not the pull request's", goCalls)
			}
			fenv, _ := os.ReadFile(filepath.Join(stub, "fullsend.env"))
			if strings.Contains(string(fenv), "ghs_job_token_123") || strings.Contains(string(fenv), "GIT_CONFIG_VALUE") {
				t.Error("fullsend runs with the job token in its environment")
			}
		})
	}
}
