package templates

import (
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/fullsend-ai/agent-sandbox/handover"
)

// templateOwn are the FULLSEND_ variables the templates define and read
// themselves (the GitLab component's inputs as job variables, the CI/CD
// variables a user sets, the GitHub workflow's install step): no fullsend
// command reads them, so they are not hand-over names.
var templateOwn = []string{
	"FULLSEND_POLICY_DIFF_FAIL_ON",     // policy diff jobs: --fail-on
	"FULLSEND_MR_NOTE_TOKEN",           // GitLab MR note job: the token that posts the note
	"FULLSEND_MR_NOTE",                 // GitLab MR note job: the mr-note input (opt-in)
	"FULLSEND_AGENT",                   // GitLab run job: the agent argument
	"FULLSEND_SET",                     // GitLab run job: the --set values
	"FULLSEND_VERSION",                 // the release `go install` fetches
	"FULLSEND_VERIFY_IMAGE",            // GitLab verify job: the image to verify
	"FULLSEND_VERIFY_SANDBOX_IMAGE",    // GitLab verify job: its --sandbox-image
	"FULLSEND_VERIFIED_IMAGE",          // GitLab: the dotenv report's image for image:
	"FULLSEND_COSIGN_PUBLIC_KEY",       // user CI/CD variable: --key
	"FULLSEND_CERTIFICATE_IDENTITY",    // user CI/CD variable: --certificate-identity
	"FULLSEND_CERTIFICATE_OIDC_ISSUER", // user CI/CD variable: --certificate-oidc-issuer
}

var (
	fullsendVar   = regexp.MustCompile(`\bFULLSEND_[A-Z0-9_]*[A-Z0-9]`)
	verifyOutput  = regexp.MustCompile(`\bsteps\.verify\.outputs\.([A-Za-z0-9_-]+)`)
	neededOutput  = regexp.MustCompile(`\bneeds\.verify\.outputs\.([A-Za-z0-9_-]+)`)
	dotenvCaseArm = regexp.MustCompile(`(?m)^\s*(FULLSEND_[A-Z0-9_]+)\)`)
)

// kindText returns every template of one kind, concatenated.
func kindText(t *testing.T, kind string) string {
	t.Helper()
	names, err := List(kind)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, n := range names {
		b.Write(readAll(t, kind, n))
		b.WriteByte('\n')
	}
	return b.String()
}

// TestTemplatesUseTheHandOverNames keeps the templates and the commands on
// one set of names (package handover): every FULLSEND_ variable of a
// template is a hand-over name or one the templates own; the GitHub verify
// job re-exports every output `fullsend verify` writes and the run job
// and composite action set every variable `fullsend run` reads; the GitLab
// run job reads each of those from verify's dotenv file.
func TestTemplatesUseTheHandOverNames(t *testing.T) {
	known := slices.Clone(templateOwn)
	outputs := map[string]string{}
	for _, v := range handover.Verified() {
		known = append(known, v.Env)
		outputs[v.Output] = v.Env
	}
	known = append(known, handover.RunSettings()...)

	used := map[string]bool{}
	for _, kind := range Kinds() {
		text := kindText(t, kind)
		for _, name := range fullsendVar.FindAllString(text, -1) {
			used[name] = true
			if !slices.Contains(known, name) {
				t.Errorf("%s templates use %s, which is no hand-over name (package handover) and not one the templates own (templateOwn)", kind, name)
			}
		}
		for _, re := range []*regexp.Regexp{verifyOutput, neededOutput} {
			for _, m := range re.FindAllStringSubmatch(text, -1) {
				if _, ok := outputs[m[1]]; !ok {
					t.Errorf("%s templates read the verify output %q, which fullsend verify does not write (handover.Verified)", kind, m[1])
				}
			}
		}
	}
	for _, name := range templateOwn {
		if !used[name] {
			t.Errorf("templateOwn lists %s, which no template uses", name)
		}
	}

	github := string(readAll(t, "github", "workflows/fullsend.yml"))
	for _, v := range handover.Verified() {
		if !strings.Contains(github, v.Output+": ${{ steps.verify.outputs."+v.Output+" }}") {
			t.Errorf("the GitHub verify job does not re-export the %s output (%s)", v.Output, v.Env)
		}
	}
	for _, env := range handover.RunInputs() {
		var out string
		for o, e := range outputs {
			if e == env {
				out = o
			}
		}
		if !strings.Contains(github, env+": ${{ needs.verify.outputs."+out+" }}") {
			t.Errorf("the GitHub run job does not set %s from the verify job's %s output", env, out)
		}
		action := string(readAll(t, "github", "actions/fullsend-run/action.yml"))
		if !regexp.MustCompile(`(?m)^\s+` + env + `: \$\{\{ inputs\.[a-z-]+ \}\}$`).MatchString(action) {
			t.Errorf("the fullsend-run action does not set %s from an input", env)
		}
	}

	var arms []string
	for _, m := range dotenvCaseArm.FindAllStringSubmatch(string(readAll(t, "gitlab", "fullsend.gitlab-ci.yml")), -1) {
		arms = append(arms, m[1])
	}
	want := slices.Clone(handover.RunInputs())
	sort.Strings(arms)
	sort.Strings(want)
	if !slices.Equal(arms, want) {
		t.Errorf("the GitLab run job reads %v from verify's dotenv file, want %v (handover.RunInputs)", arms, want)
	}
}
