package templates

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/fullsend-ai/agent-sandbox/internal/testtool"
)

var (
	shaPinned = regexp.MustCompile(`^[A-Za-z0-9_.-]+/[A-Za-z0-9_./-]+@[0-9a-f]{40}$`)
	verifyRef = regexp.MustCompile(`^\$\{\{ needs\.([A-Za-z0-9_-]+)\.outputs\.ref \}\}$`)
)

func readAll(t *testing.T, kind, name string) []byte {
	t.Helper()
	fsys, err := FS(kind)
	if err != nil {
		t.Fatal(err)
	}
	b, err := fs.ReadFile(fsys, name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// decodeAll decodes every YAML document of a file strictly into maps.
func decodeAll(t *testing.T, data []byte) []map[string]any {
	t.Helper()
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var docs []map[string]any
	for {
		var m map[string]any
		err := dec.Decode(&m)
		if errors.Is(err, io.EOF) {
			return docs
		}
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, m)
	}
}

func asMap(v any) map[string]any { m, _ := v.(map[string]any); return m }
func asList(v any) []any         { l, _ := v.([]any); return l }
func asString(v any) string      { s, _ := v.(string); return s }

// steps returns the steps of every job of a workflow, or of a composite action.
func steps(doc map[string]any) []map[string]any {
	var out []map[string]any
	collect := func(l []any) {
		for _, s := range l {
			out = append(out, asMap(s))
		}
	}
	for _, j := range asMap(doc["jobs"]) {
		collect(asList(asMap(j)["steps"]))
	}
	collect(asList(asMap(doc["runs"])["steps"]))
	return out
}

func TestGitHubTemplates(t *testing.T) {
	names, err := List("github")
	if err != nil {
		t.Fatal(err)
	}
	if len(names) != 4 {
		t.Fatalf("github templates: %v", names)
	}
	for _, name := range names {
		if strings.HasPrefix(name, "workflows/fullsend-policy-diff") {
			continue // TestPolicyDiffTemplates
		}
		t.Run(name, func(t *testing.T) {
			data := readAll(t, "github", name)
			docs := decodeAll(t, data)
			if len(docs) != 1 {
				t.Fatalf("%d documents", len(docs))
			}
			doc := docs[0]
			sts := steps(doc)
			if len(sts) == 0 {
				t.Fatal("no steps")
			}
			for _, s := range sts {
				checkStep(t, s)
			}
			if strings.Contains(uncommented(data), "docker.sock") {
				t.Error("template mounts docker.sock")
			}
			checkNoSandboxOverride(t, sts)
			checkEvidenceUpload(t, sts)
			if name != "workflows/fullsend.yml" {
				checkActionHandOver(t, doc, sts)
				checkOutputsUpload(t, name, asList(asMap(doc["runs"])["steps"]))
				return
			}
			if in := asMap(asMap(asMap(doc["on"])["workflow_call"])["inputs"])["sandbox-image"]; in == nil || asMap(in)["required"] != false {
				t.Errorf("input sandbox-image must exist and be optional: %v", in)
			}
			if p := asMap(doc["permissions"]); p == nil || len(p) != 0 {
				t.Errorf("workflow-level permissions must be {} (least privilege), got %v", doc["permissions"])
			}
			jobs := asMap(doc["jobs"])
			sawContainer := false
			for jn, j := range jobs {
				job := asMap(j)
				perms := asMap(job["permissions"])
				if perms == nil {
					t.Errorf("job %s has no explicit permissions", jn)
				}
				for scope, level := range perms {
					if level != "read" && level != "none" {
						t.Errorf("job %s: permission %s: %v (want read or none)", jn, scope, level)
					}
				}
				if checkContainerJob(t, jobs, jn, job) {
					sawContainer = true
				}
			}
			if !sawContainer {
				t.Error("no job runs in the verified container")
			}
		})
	}
}

// checkVerifyToken checks that the verify step can read a private ghcr.io
// image: GITHUB_TOKEN from github.token, with packages: read on the job.
func checkVerifyToken(t *testing.T, name string, job map[string]any) {
	t.Helper()
	if asMap(job["permissions"])["packages"] != "read" {
		t.Errorf("job %s: permissions %v lack packages: read", name, job["permissions"])
	}
	for _, s := range asList(job["steps"]) {
		st := asMap(s)
		if strings.Contains(asString(st["run"]), "fullsend\" verify") &&
			asString(asMap(st["env"])["GITHUB_TOKEN"]) != "${{ github.token }}" {
			t.Errorf("job %s: the verify step gets no GITHUB_TOKEN (private ghcr.io images)", name)
		}
	}
}

// checkOutputsUpload checks that the run's outputs are uploaded whatever the
// outcome, without the private staging directory or hidden files.
func checkOutputsUpload(t *testing.T, name string, steps []any) {
	t.Helper()
	found := false
	for _, s := range steps {
		st := asMap(s)
		with := asMap(st["with"])
		if !strings.HasPrefix(asString(st["uses"]), "actions/upload-artifact@") || !strings.Contains(asString(with["name"]), "-outputs") {
			continue
		}
		found = true
		if st["if"] != "always()" {
			t.Errorf("job %s: outputs upload if %q, want always(): declared outputs come without download:", name, st["if"])
		}
		if !strings.Contains(asString(with["path"]), "!fullsend-out/.fullsend-download-*") {
			t.Errorf("job %s: outputs upload does not exclude the staging directory: %q", name, with["path"])
		}
		if _, ok := with["include-hidden-files"]; ok {
			t.Errorf("job %s: outputs upload must keep skipping hidden files", name)
		}
	}
	if !found {
		t.Errorf("job %s uploads no outputs", name)
	}
}

// checkStep checks one step's hygiene: pinned actions, no expression in a
// script, exec'd fullsend run, no tracing, no secret printed.
func checkStep(t *testing.T, s map[string]any) {
	t.Helper()
	if u := asString(s["uses"]); u != "" && !shaPinned.MatchString(u) {
		t.Errorf("uses %q is not pinned by a full commit SHA", u)
	}
	run := asString(s["run"])
	if strings.Contains(run, "${{") {
		t.Errorf("step %q interpolates an expression into its script; pass it through env:", s["name"])
	}
	if strings.Contains(run, "fullsend run ") && !lastCommandExecs(run) {
		t.Errorf("step %q: fullsend run must be exec'd as the step's last command", s["name"])
	}
	if strings.Contains(run, "set -x") {
		t.Errorf("step %q traces its commands (would print secrets)", s["name"])
	}
	for k, v := range asMap(s["env"]) {
		if !strings.Contains(asString(v), "secrets.") {
			continue
		}
		for _, line := range strings.Split(run, "\n") {
			if regexp.MustCompile(`\b(echo|printf|cat)\b`).MatchString(line) && strings.Contains(line, "$"+k) ||
				strings.Contains(line, "${"+k+"}") && !strings.Contains(line, "${"+k+":-}") {
				t.Errorf("step %q may print secret %s: %s", s["name"], k, line)
			}
		}
	}
}

// checkContainerJob checks a job that runs in a container: the verified
// digest, a verify job that pins fullsend and verifies, the privileges the
// gateway needs, and fullsend run with the verified policies digest. It
// reports whether the job runs in a container.
func checkContainerJob(t *testing.T, jobs map[string]any, jn string, job map[string]any) bool {
	t.Helper()
	c := asMap(job["container"])
	if c == nil {
		return false
	}
	img := asString(c["image"])
	m := verifyRef.FindStringSubmatch(img)
	if m == nil && !strings.Contains(img, "@sha256:") {
		t.Fatalf("job %s: container image %q is neither digest-pinned nor the verify job's output", jn, img)
	}
	verifyJob := m[1]
	if !contains(asList(job["needs"]), verifyJob) && asString(job["needs"]) != verifyJob {
		t.Errorf("job %s uses %s's output but does not need it", jn, verifyJob)
	}
	vj := asMap(jobs[verifyJob])
	if !strings.Contains(asString(asMap(vj["outputs"])["ref"]), "steps.verify.outputs.ref") {
		t.Errorf("job %s: ref output does not come from the verify step", verifyJob)
	}
	verified, pinned := false, false
	for _, s := range asList(vj["steps"]) {
		script := asString(asMap(s)["run"])
		verified = verified || strings.Contains(script, "fullsend\" verify")
		pinned = pinned || strings.Contains(script, "go install") && strings.Contains(script, `'^v[0-9]+\.[0-9]+\.[0-9]+$'`)
	}
	if !pinned {
		t.Errorf("job %s installs fullsend without requiring a release tag", verifyJob)
	}
	if !verified {
		t.Errorf("job %s does not run fullsend verify", verifyJob)
	}
	opts := asString(c["options"])
	if !strings.Contains(opts, "--privileged") && !strings.Contains(opts, "NET_ADMIN") {
		t.Errorf("job %s: container lacks the privileges the OpenShell gateway needs: %q", jn, opts)
	}
	ran := false
	for _, s := range asList(job["steps"]) {
		script := asString(asMap(s)["run"])
		if strings.Contains(script, "fullsend run") {
			ran = true
			if !lastCommandExecs(script) {
				t.Errorf("job %s: fullsend run must be exec'd as the step's last command", jn)
			}
			if !strings.Contains(script, `[ -z "$FULLSEND_POLICIES_DIGEST" ]`) ||
				!strings.Contains(asString(asMap(asMap(s)["env"])["FULLSEND_POLICIES_DIGEST"]), "needs."+verifyJob+".outputs.policies-digest") {
				t.Errorf("job %s: fullsend run must get, and require, the verified policies digest", jn)
			}
		}
	}
	if !ran {
		t.Errorf("job %s does not run fullsend run", jn)
	}
	checkOutputsUpload(t, jn, asList(job["steps"]))
	checkVerifyToken(t, verifyJob, vj)
	checkSandboxHandOver(t, verifyJob, vj, job)
	return true
}

// checkSandboxHandOver checks the sandbox image's path through the
// workflow: the verify step verifies the sandbox-image input, its job
// exports sandbox-ref from that step, and the run step takes the job's
// image and the sandbox image only from the verify job's outputs (and
// refuses an input the verify job did not hand over).
func checkSandboxHandOver(t *testing.T, verifyJob string, vj, run map[string]any) {
	t.Helper()
	if !strings.Contains(asString(asMap(vj["outputs"])["sandbox-ref"]), "steps.verify.outputs.sandbox-ref") {
		t.Errorf("job %s: sandbox-ref output does not come from the verify step", verifyJob)
	}
	verified := false
	for _, s := range asList(vj["steps"]) {
		st := asMap(s)
		if strings.Contains(asString(st["run"]), `--sandbox-image "$SANDBOX_IMAGE"`) &&
			asString(asMap(st["env"])["SANDBOX_IMAGE"]) == "${{ inputs.sandbox-image }}" {
			verified = true
		}
	}
	if !verified {
		t.Errorf("job %s does not verify the sandbox-image input", verifyJob)
	}
	for _, s := range asList(run["steps"]) {
		st := asMap(s)
		script := asString(st["run"])
		if !strings.Contains(script, "fullsend run") {
			continue
		}
		env := asMap(st["env"])
		if asString(env["FULLSEND_IMAGE"]) != "${{ needs."+verifyJob+".outputs.ref }}" ||
			asString(env["FULLSEND_VERIFIED_SANDBOX_IMAGE"]) != "${{ needs."+verifyJob+".outputs.sandbox-ref }}" {
			t.Errorf("fullsend run does not get the verify job's hand-over: %v", env)
		}
		if !strings.Contains(script, `[ -n "$SANDBOX_IMAGE" ] && [ -z "$FULLSEND_VERIFIED_SANDBOX_IMAGE" ]`) {
			t.Error("the run step does not refuse a sandbox-image input the verify job did not hand over")
		}
	}
}

// checkActionHandOver checks the composite action: fullsend run gets the
// verify outputs the caller passes (image: ref, sandbox-image: sandbox-ref).
func checkActionHandOver(t *testing.T, doc map[string]any, sts []map[string]any) {
	t.Helper()
	if in := asMap(asMap(doc["inputs"])["sandbox-image"]); in == nil || in["required"] != false {
		t.Errorf("input sandbox-image must exist and be optional: %v", in)
	}
	for _, st := range sts {
		if !strings.Contains(asString(st["run"]), "fullsend run") {
			continue
		}
		env := asMap(st["env"])
		if asString(env["FULLSEND_IMAGE"]) != "${{ inputs.image }}" || asString(env["FULLSEND_VERIFIED_SANDBOX_IMAGE"]) != "${{ inputs.sandbox-image }}" {
			t.Errorf("fullsend run does not get the verify outputs as its hand-over: %v", env)
		}
	}
}

// checkNoSandboxOverride: no step configures FULLSEND_SANDBOX_IMAGE, which
// would name the sandbox image beside the verify hand-over.
func checkNoSandboxOverride(t *testing.T, sts []map[string]any) {
	t.Helper()
	for _, st := range sts {
		if _, ok := asMap(st["env"])["FULLSEND_SANDBOX_IMAGE"]; ok {
			t.Errorf("step %q sets FULLSEND_SANDBOX_IMAGE; the sandbox image comes from the verify hand-over", st["name"])
		}
	}
}

func contains(l []any, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

func TestGitLabTemplate(t *testing.T) {
	data := readAll(t, "gitlab", "fullsend.gitlab-ci.yml")
	docs := decodeAll(t, data)
	if len(docs) != 2 {
		t.Fatalf("want a spec document and a config document, got %d", len(docs))
	}
	inputs := asMap(asMap(docs[0]["spec"])["inputs"])
	for _, in := range []string{"image", "agent", "fullsend-version", "verifier-image"} {
		if _, ok := inputs[in]; !ok {
			t.Errorf("input %s missing", in)
		}
		if _, hasDefault := asMap(inputs[in])["default"]; hasDefault {
			t.Errorf("input %s must be given by the includer (no default)", in)
		}
	}
	jobs := docs[1]
	verify, run := asMap(jobs["fullsend-verify"]), asMap(jobs["fullsend-run"])
	if verify == nil || run == nil {
		t.Fatal("jobs fullsend-verify and fullsend-run missing")
	}
	vart := asMap(verify["artifacts"])
	if asString(asMap(vart["reports"])["dotenv"]) == "" {
		t.Error("verify job writes no dotenv report")
	}
	// A CI/CD variable can replace a dotenv value, never a file from needs:.
	if !contains(asList(vart["paths"]), verifiedFile) {
		t.Errorf("verify job must keep %s as an artifact file: %v", verifiedFile, vart["paths"])
	}
	vscript := strings.Join(toStrings(asList(verify["script"])), "\n")
	if !strings.Contains(vscript, "fullsend\" verify") || !strings.Contains(vscript, "*@sha256:*") ||
		!strings.Contains(vscript, `'^v[0-9]+\.[0-9]+\.[0-9]+$'`) {
		t.Error("verify job must run fullsend verify in a digest-pinned image (checked)")
	}
	if sb := asMap(inputs["sandbox-image"]); sb == nil || sb["default"] != "" {
		t.Errorf("input sandbox-image must exist and default to empty: %v", inputs["sandbox-image"])
	}
	if asString(asMap(verify["variables"])["FULLSEND_VERIFY_SANDBOX_IMAGE"]) != "$[[ inputs.sandbox-image ]]" ||
		!strings.Contains(vscript, `--sandbox-image "$FULLSEND_VERIFY_SANDBOX_IMAGE"`) {
		t.Error("verify job must verify the sandbox-image input")
	}
	img := asMap(run["image"])
	if asString(img["name"]) != verifiedImage {
		t.Errorf("run job image %v is not the verified digest", run["image"])
	}
	needs := asMap(asList(run["needs"])[0])
	if needs["job"] != "fullsend-verify" || needs["artifacts"] != true {
		t.Errorf("run job must need fullsend-verify with artifacts: %v", run["needs"])
	}
	checkGitLabRun(t, data, vart, run)
	for name, j := range jobs {
		job := asMap(j)
		if job == nil {
			continue
		}
		img := asString(job["image"])
		if img == "" {
			img = asString(asMap(job["image"])["name"])
		}
		if img != verifiedImage && img != "$[[ inputs.verifier-image ]]" && !strings.Contains(img, "@sha256:") {
			t.Errorf("job %s: image %q is neither digest-pinned nor verified", name, img)
		}
		for _, line := range toStrings(asList(job["script"])) {
			if regexp.MustCompile(`(?i)\b(echo|printf)\b[^\n]*\$\{?[A-Z_]*(KEY|TOKEN|SECRET|PASSWORD)`).MatchString(line) {
				t.Errorf("job %s may print a secret: %s", name, line)
			}
		}
	}
	if body := uncommented(data); strings.Contains(body, "docker.sock") || strings.Contains(body, "dind") {
		t.Error("template uses docker.sock or Docker-in-Docker")
	}
}

const (
	verifiedImage = "$FULLSEND_VERIFIED_IMAGE"
	verifiedFile  = "fullsend-verified.env"
)

// lastCommandExecs reports whether the last command of a shell script is
// `exec fullsend run ...`, so that a cancellation signal reaches fullsend.
func lastCommandExecs(script string) bool {
	lines := strings.Split(strings.TrimSpace(script), "\n")
	last := strings.TrimSpace(lines[len(lines)-1])
	return strings.HasPrefix(last, "exec fullsend run ") && strings.Count(script, "fullsend run ") == 1
}

// checkGitLabRun checks the run job's script and artifacts: the image and
// the policies digest come from the verify job's artifact file, fullsend run
// is exec'd, and the artifacts are kept on failure, for developers only.
func checkGitLabRun(t *testing.T, data []byte, vart, run map[string]any) {
	t.Helper()
	rscript := strings.Join(toStrings(asList(run["script"])), "\n")
	for _, want := range []string{
		"done < " + verifiedFile,                               // the check reads the artifact file,
		`[ "$CI_JOB_IMAGE" != "$verified_image" ]`,             // compares the job image with it,
		`[ -z "$verified_policies" ]`,                          // requires the signed policies digest
		`--policies-digest "$verified_policies"`,               // and pins fullsend run to it;
		"FULLSEND_VERIFIED_SANDBOX_IMAGE) verified_sandbox=$v", // the sandbox image from the file too,
		`--verified-image "$verified_image" --verified-sandbox-image "$verified_sandbox" --sandbox-image "${verified_sandbox:-$verified_image}"`, // as flags
		"for kv in $FULLSEND_SET; do set -- \"$@\" --set \"$kv\"; done",                                                                          // explicit placeholder values
	} {
		if !strings.Contains(rscript, want) {
			t.Errorf("run job script lacks %s", want)
		}
	}
	if strings.Contains(uncommented(data), "$FULLSEND_IMAGE") || strings.Contains(rscript, "$FULLSEND_POLICIES_DIGEST") ||
		strings.Contains(rscript, "$FULLSEND_VERIFIED_SANDBOX_IMAGE") || strings.Contains(rscript, "$FULLSEND_SANDBOX_IMAGE") {
		t.Error("run job trusts FULLSEND_IMAGE, FULLSEND_POLICIES_DIGEST or a sandbox image variable, which a CI/CD variable can set")
	}
	if !lastCommandExecs(rscript) {
		t.Errorf("run job: fullsend run must be exec'd as the script's last command:\n%s", rscript)
	}
	rart := asMap(run["artifacts"])
	if rart["when"] != "always" {
		t.Errorf("run job artifacts must be kept on failure too: when %v", rart["when"])
	}
	for name, art := range map[string]map[string]any{"fullsend-verify": vart, "fullsend-run": rart} {
		if art["access"] != "developer" {
			t.Errorf("job %s: artifacts access %v, want developer", name, art["access"])
		}
	}
}

// uncommented returns the YAML without comment lines.
func uncommented(data []byte) string {
	var b strings.Builder
	for _, line := range strings.Split(string(data), "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), "#") {
			b.WriteString(line + "\n")
		}
	}
	return b.String()
}

func toStrings(l []any) []string {
	out := make([]string, 0, len(l))
	for _, x := range l {
		out = append(out, asString(x))
	}
	return out
}

func TestWrite(t *testing.T) {
	for _, kind := range Kinds() {
		dir := t.TempDir()
		res, err := Write(kind, dir, false)
		if err != nil {
			t.Fatal(err)
		}
		written := res.Written
		names, _ := List(kind)
		if len(written) != len(names) {
			t.Fatalf("%s: wrote %v", kind, written)
		}
		for i, p := range written {
			got, err := os.ReadFile(p)
			if err != nil || !bytes.Equal(got, readAll(t, kind, names[i])) {
				t.Errorf("%s differs from the embedded template: %v", p, err)
			}
		}
		left, _ := filepath.Glob(filepath.Join(dir, "*", ".*tmp*"))
		if len(left) > 0 {
			t.Errorf("temp files left: %v", left)
		}
	}
	if _, err := Write("jenkins", t.TempDir(), false); !errors.Is(err, ErrUnknownKind) {
		t.Errorf("unknown kind: %v", err)
	}
}

// TestWriteKeepsEditedFiles: templates write used to overwrite an edited
// workflow; like init it keeps it (listed as skipped) unless forced.
func TestWriteKeepsEditedFiles(t *testing.T) {
	dir := t.TempDir()
	if _, err := Write("github", dir, false); err != nil {
		t.Fatal(err)
	}
	wf := filepath.Join(dir, "workflows", "fullsend.yml")
	if err := os.WriteFile(wf, []byte("# edited\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := Write("github", dir, false)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(wf); string(got) != "# edited\n" {
		t.Errorf("the edited workflow was replaced: %q", got)
	}
	if len(res.Written) != 0 || !slices.Contains(res.Skipped, wf) {
		t.Errorf("written %v, skipped %v; want %s skipped", res.Written, res.Skipped, wf)
	}
	if res, err = Write("github", dir, true); err != nil || !slices.Contains(res.Written, wf) {
		t.Fatalf("--force: %v, %v", res, err)
	}
	if got, _ := os.ReadFile(wf); string(got) == "# edited\n" {
		t.Error("force kept the edited workflow")
	}
	if DefaultDir("github") != ".github" || DefaultDir("gitlab") != "ci" {
		t.Errorf("DefaultDir: %s, %s", DefaultDir("github"), DefaultDir("gitlab"))
	}
}

// TestActionlint lints the GitHub workflow with the real actionlint
// (installed by .ci/install.d/45-actionlint.sh).
func TestActionlint(t *testing.T) {
	bin := testtool.Find(t, "actionlint", ".ci/install.d/45-actionlint.sh")
	dir := t.TempDir()
	var wfs []string
	for _, name := range []string{"fullsend.yml", "fullsend-policy-diff.yml", "fullsend-policy-diff-comment.yml"} {
		wf := filepath.Join(dir, ".github", "workflows", name)
		if err := os.MkdirAll(filepath.Dir(wf), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(wf, readAll(t, "github", "workflows/"+name), 0o644); err != nil {
			t.Fatal(err)
		}
		wfs = append(wfs, wf)
	}
	cmd := exec.Command(bin, append([]string{"-no-color"}, wfs...)...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("actionlint: %v\n%s", err, out)
	}
}

// TestGitLabRunScriptHandsOverVerifiedImages runs the GitLab run job's
// script with sh and a stub fullsend: the images it passes come from the
// verify job's artifact file, whatever the CI/CD variables say.
func TestGitLabRunScriptHandsOverVerifiedImages(t *testing.T) {
	sh := testtool.Find(t, "sh", "the base system (a POSIX sh)")
	docs := decodeAll(t, readAll(t, "gitlab", "fullsend.gitlab-ci.yml"))
	script := strings.Join(toStrings(asList(asMap(docs[1]["fullsend-run"])["script"])), "\n")
	const (
		job     = "registry.example/acme/agents@sha256:1111111111111111111111111111111111111111111111111111111111111111"
		sandbox = "registry.example/acme/sandbox@sha256:3333333333333333333333333333333333333333333333333333333333333333"
		evil    = "registry.example/evil/x@sha256:5555555555555555555555555555555555555555555555555555555555555555"
	)
	for _, tc := range []struct {
		name, file string
		want       []string // the image flags fullsend run gets
	}{
		{"job image only", "", []string{"--verified-image", job, "--verified-sandbox-image", "", "--sandbox-image", job}},
		{"separate sandbox image", "FULLSEND_VERIFIED_SANDBOX_IMAGE=" + sandbox + "\nFULLSEND_VERIFIED_SANDBOX_IMAGE_DIGEST=sha256:33\n",
			[]string{"--verified-image", job, "--verified-sandbox-image", sandbox, "--sandbox-image", sandbox}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			stub := "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done\n"
			if err := os.WriteFile(filepath.Join(dir, "fullsend"), []byte(stub), 0o755); err != nil {
				t.Fatal(err)
			}
			env := "FULLSEND_IMAGE=" + job + "\nFULLSEND_IMAGE_DIGEST=sha256:11\nFULLSEND_POLICIES_DIGEST=sha256:" + strings.Repeat("a", 64) + "\n" + tc.file
			if err := os.WriteFile(filepath.Join(dir, verifiedFile), []byte(env), 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(sh, "-c", script)
			cmd.Dir = dir
			// CI/CD variables that try to name another image.
			cmd.Env = []string{"PATH=" + dir + string(os.PathListSeparator) + os.Getenv("PATH"), "CI_JOB_IMAGE=" + job, "CI_PROJECT_DIR=" + dir,
				"FULLSEND_AGENT=triage", "FULLSEND_SET=", "FULLSEND_SANDBOX_IMAGE=" + evil, "FULLSEND_VERIFIED_SANDBOX_IMAGE=" + evil}
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			args := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
			var got []string
			for i, a := range args {
				if (a == "--verified-image" || a == "--verified-sandbox-image" || a == "--sandbox-image") && i+1 < len(args) {
					got = append(got, a, args[i+1])
				}
			}
			if strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Errorf("image flags %q, want %q", got, tc.want)
			}
		})
	}
}
