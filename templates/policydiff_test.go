package templates

import (
	"reflect"
	"strings"
	"testing"
)

// checkEvidenceUpload: the run's evidence is uploaded on every run, not
// only on failure.
func checkEvidenceUpload(t *testing.T, sts []map[string]any) {
	t.Helper()
	for _, st := range sts {
		if st["name"] != "Upload run evidence" {
			continue
		}
		with := asMap(st["with"])
		if !strings.HasPrefix(asString(st["uses"]), "actions/upload-artifact@") || st["if"] != "always()" ||
			!strings.HasSuffix(asString(with["path"]), "/fullsend-diag") {
			t.Errorf("evidence upload %v, want upload-artifact of fullsend-diag if always()", st)
		}
		return
	}
	t.Error("no step uploads the run evidence")
}

// TestPolicyDiffTemplates: the pull-request job runs the base branch's
// pinned fullsend with read permissions only; the comment job has
// pull-requests: write, checks out nothing, reads nothing of the run that
// triggered it and recomputes the diff; no template uses
// pull_request_target.
func TestPolicyDiffTemplates(t *testing.T) {
	for _, kind := range Kinds() {
		names, _ := List(kind)
		for _, name := range names {
			if strings.Contains(uncommented(readAll(t, kind, name)), "pull_request_target") {
				t.Errorf("%s/%s uses pull_request_target", kind, name)
			}
		}
	}
	diff := decodeAll(t, readAll(t, "github", "workflows/fullsend-policy-diff.yml"))[0]
	comment := decodeAll(t, readAll(t, "github", "workflows/fullsend-policy-diff-comment.yml"))[0]
	for _, doc := range []map[string]any{diff, comment} {
		if p := asMap(doc["permissions"]); p == nil || len(p) != 0 {
			t.Errorf("%s: workflow permissions %v, want {}", doc["name"], doc["permissions"])
		}
		for _, s := range steps(doc) {
			checkStep(t, s)
		}
	}
	if on := asMap(diff["on"]); len(on) != 1 || on["pull_request"] == nil {
		t.Errorf("diff workflow triggers %v, want pull_request only", diff["on"])
	}
	job := asMap(asMap(diff["jobs"])["diff"])
	if !reflect.DeepEqual(asMap(job["permissions"]), map[string]any{"contents": "read"}) {
		t.Errorf("diff job permissions %v, want contents: read only", job["permissions"])
	}
	var script string
	for _, s := range steps(diff) {
		env := asMap(s["env"])
		script += asString(s["run"])
		if b, ok := env["BASE_SHA"]; ok && b != "${{ github.event.pull_request.base.sha }}" {
			t.Errorf("BASE_SHA %v", b)
		}
		if h, ok := env["HEAD_SHA"]; ok && h != "${{ github.sha }}" {
			t.Errorf("HEAD_SHA %v", h)
		}
		for k, v := range env {
			if strings.Contains(asString(v), "secrets.") {
				t.Errorf("diff job reads secret %s", k)
			}
		}
		if strings.HasPrefix(asString(s["uses"]), "actions/upload-artifact@") && (s["if"] != "always() && steps.install.outputs.skip != 'true'" || asMap(s["with"])["name"] != "fullsend-policy-diff") {
			t.Errorf("diff upload %v", s)
		}
	}
	for _, want := range []string{
		`git show "$BASE_SHA:.fullsend-version"`, // the base branch's pin
		`go install "github.com/fullsend-ai/agent-sandbox/cmd/fullsend@${version}"`,
		`policy diff "git:$BASE_SHA" "git:$HEAD_SHA" -o json`,
		`--summary-file "$GITHUB_STEP_SUMMARY"`, `--comment-file "$out/comment.md"`,
	} {
		if !strings.Contains(script, want) {
			t.Errorf("diff job lacks %s", want)
		}
	}
	if wr := asMap(asMap(comment["on"])["workflow_run"]); len(asMap(comment["on"])) != 1 ||
		!reflect.DeepEqual(toStrings(asList(wr["workflows"])), []string{asString(diff["name"])}) {
		t.Errorf("comment workflow triggers %v, want workflow_run of %q", comment["on"], diff["name"])
	}
	checkCommentJob(t, asMap(asMap(comment["jobs"])["comment"]))

	gl := decodeAll(t, readAll(t, "gitlab", "fullsend-policy-diff.gitlab-ci.yml"))
	if len(gl) != 2 {
		t.Fatalf("%d documents", len(gl))
	}
	jobs := gl[1]
	d, n := asMap(jobs["fullsend-policy-diff"]), asMap(jobs["fullsend-policy-diff-note"])
	for name, j := range map[string]map[string]any{"diff": d, "note": n} {
		rules := asList(j["rules"])
		if len(rules) != 1 || !strings.HasPrefix(asString(asMap(rules[0])["if"]), `$CI_PIPELINE_SOURCE == "merge_request_event"`) {
			t.Errorf("%s job rules %v", name, j["rules"])
		}
	}
	dscript := strings.Join(toStrings(asList(d["script"])), "\n")
	for _, want := range []string{`git show "$CI_MERGE_REQUEST_DIFF_BASE_SHA:.fullsend-version"`,
		`policy diff "git:$CI_MERGE_REQUEST_DIFF_BASE_SHA" "git:$CI_COMMIT_SHA" -o json`, `-o gitlab > gl-code-quality-report.json`} {
		if !strings.Contains(dscript, want) {
			t.Errorf("diff job lacks %s", want)
		}
	}
	if strings.Contains(dscript, "TOKEN") {
		t.Error("the diff job must hold no token")
	}
	if asMap(asMap(d["artifacts"])["reports"])["codequality"] != "gl-code-quality-report.json" {
		t.Errorf("no Code Quality report: %v", d["artifacts"])
	}
	if asMap(n["variables"])["GIT_STRATEGY"] != "none" {
		t.Error("the note job must fetch no source")
	}
	nscript := strings.Join(toStrings(asList(n["script"])), "\n")
	for _, want := range []string{`"$CI_MERGE_REQUEST_IID $CI_COMMIT_SHA"`, `"<!-- fullsend-policy-diff project="*" -->"`, `--request PUT`} {
		if !strings.Contains(nscript, want) {
			t.Errorf("note job lacks %s", want)
		}
	}
}

// checkCommentJob: the comment job reads nothing of the triggering run
// (no artifact, no checkout), fetches GitHub's merge commit as objects,
// checks its second parent, runs the base's pinned fullsend without the
// token, and runs no action but setup-go.
func checkCommentJob(t *testing.T, cjob map[string]any) {
	t.Helper()
	if !reflect.DeepEqual(asMap(cjob["permissions"]), map[string]any{"contents": "read", "pull-requests": "write"}) {
		t.Errorf("comment job permissions %v, want contents: read and pull-requests: write", cjob["permissions"])
	}
	var script string
	for _, st := range asList(cjob["steps"]) {
		s := asMap(st)
		if u := asString(s["uses"]); u != "" && !strings.HasPrefix(u, "actions/setup-go@") {
			t.Errorf("comment job runs action %s: it must check out and download nothing", u)
		}
		run := asString(s["run"])
		script += run
		if strings.Contains(run, `fullsend" policy diff`) {
			for k, v := range asMap(s["env"]) {
				if strings.Contains(asString(v), "token") || strings.Contains(asString(v), "secrets.") {
					t.Errorf("the step that runs fullsend gets %s", k)
				}
			}
		}
	}
	for _, bad := range []string{"run download", "download-artifact", "actions/checkout"} {
		if strings.Contains(script, bad) {
			t.Errorf("comment job reads the triggering run (%s)", bad)
		}
	}
	for _, want := range []string{`"+refs/pull/$pr/merge:refs/fullsend/$pr"`, `"refs/fullsend/$pr^2"`, `[ "$head" != "$RUN_HEAD_SHA" ]`,
		`git show "$base:.fullsend-version"`, `policy diff "git:$base" "git:$merge"`, `GIT_CONFIG_VALUE_0="AUTHORIZATION: basic $auth"`,
		`"<!-- fullsend-policy-diff project="*" -->"`, `-F "body=@$comment"`, `--method PATCH`} {
		if !strings.Contains(script, want) {
			t.Errorf("comment job lacks %s", want)
		}
	}
}

// TestPolicyDiffNoteIsOptIn: the GitLab note job used FULLSEND_MR_NOTE_TOKEN
// in every merge request pipeline, whose configuration the merge request's
// branch supplies, so the token had to be an unprotected variable its
// author could read. The verdict is now the Code Quality report and the
// diff job's exit status (fail-on high by default); the note runs only
// when the includer sets mr-note, and the template states the risk.
func TestPolicyDiffNoteIsOptIn(t *testing.T) {
	data := readAll(t, "gitlab", "fullsend-policy-diff.gitlab-ci.yml")
	docs := decodeAll(t, data)
	inputs := asMap(asMap(docs[0]["spec"])["inputs"])
	if in := asMap(inputs["mr-note"]); in["type"] != "boolean" || in["default"] != false {
		t.Errorf("input mr-note %v, want a boolean defaulting to false", inputs["mr-note"])
	}
	if in := asMap(inputs["note-image"]); in == nil || in["default"] != "" {
		t.Errorf("input note-image %v, want optional (only the opt-in note needs it)", inputs["note-image"])
	}
	if f := asString(asMap(inputs["fail-on"])["default"]); f == "none" || f == "" {
		t.Errorf("fail-on defaults to %q: without the note the exit status must carry the verdict", f)
	}
	n := asMap(docs[1]["fullsend-policy-diff-note"])
	if asMap(n["variables"])["FULLSEND_MR_NOTE"] != "$[[ inputs.mr-note ]]" {
		t.Errorf("note job variables %v lack FULLSEND_MR_NOTE from the mr-note input", n["variables"])
	}
	for _, r := range asList(n["rules"]) {
		if !strings.Contains(asString(asMap(r)["if"]), `$FULLSEND_MR_NOTE == "true"`) {
			t.Errorf("note job rule %v runs without the opt-in", r)
		}
	}
	header := strings.ReplaceAll(string(data[:strings.Index(string(data), "spec:")]), "\n# ", " ")
	for _, want := range []string{"UNPROTECTED variable", "configuration comes from the merge request's branch", "can push a branch can then read the token", "Opt in only"} {
		if !strings.Contains(header, want) {
			t.Errorf("the header does not state the note's risk: lacks %q", want)
		}
	}
	d := asMap(docs[1]["fullsend-policy-diff"])
	if asMap(asMap(d["artifacts"])["reports"])["codequality"] != "gl-code-quality-report.json" {
		t.Error("the diff job writes no Code Quality report")
	}
}
