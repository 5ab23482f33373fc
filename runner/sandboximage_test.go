package runner

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Images of the sandbox image tests: the job's own (testSandboxImage), a
// separate sandbox image, and another digest of that repository.
const (
	sepImage   = "registry.example/acme/sandbox@sha256:3333333333333333333333333333333333333333333333333333333333333333"
	sepImage2  = "registry.example/acme/sandbox@sha256:4444444444444444444444444444444444444444444444444444444444444444"
	otherImage = "registry.example/evil/sandbox@sha256:5555555555555555555555555555555555555555555555555555555555555555"
)

// TestChooseSandboxImage: the image `sandbox create --from` gets is the
// configured one, else the verified sandbox image, else the job's own
// verified image, and only ever one the verify step handed over (outside CI,
// with no hand-over at all, an unverified one is flagged).
func TestChooseSandboxImage(t *testing.T) {
	job := VerifiedImages{Image: testSandboxImage}
	both := VerifiedImages{Image: testSandboxImage, SandboxImage: sepImage}
	for _, tc := range []struct {
		name       string
		configured string
		verified   VerifiedImages
		local      bool
		want       string // the image chosen
		unverified bool
		is         error  // the refusal
		msg        string // in the refusal
	}{
		{name: "default: the job's own verified image", verified: job, want: testSandboxImage},
		{name: "default with a verified sandbox image", verified: both, want: sepImage},
		{name: "configured, matches the verified sandbox image", configured: sepImage, verified: both, want: sepImage},
		{name: "configured, matches the job's own image", configured: testSandboxImage, verified: both, want: testSandboxImage},
		{name: "configured, matches the job's own image only", configured: testSandboxImage, verified: job, want: testSandboxImage},
		{name: "nothing at all", is: ErrPreflight, msg: "default, unpinned image"},
		{name: "tag only", configured: "registry.example/acme/sandbox:v1", verified: both, is: ErrPreflight, msg: "not pinned by digest"},
		{name: "digest mismatch", configured: sepImage2, verified: both, is: ErrUnverifiedImage,
			msg: "digest sha256:4444444444444444444444444444444444444444444444444444444444444444 differs from the verified sha256:3333333333333333333333333333333333333333333333333333333333333333"},
		{name: "unverified: another repository", configured: otherImage, verified: both, is: ErrUnverifiedImage,
			msg: "not an image the verify step verified (" + sepImage + ", " + testSandboxImage + ")"},
		{name: "unverified: only the job image verified", configured: sepImage, verified: job, is: ErrUnverifiedImage,
			msg: "not an image the verify step verified (" + testSandboxImage + ")"},
		{name: "unverified: no hand-over in CI", configured: sepImage, is: ErrUnverifiedImage, msg: "none was handed over"},
		{name: "no hand-over outside CI: flagged", configured: sepImage, local: true, want: sepImage, unverified: true},
		{name: "a hand-over outside CI still binds", configured: otherImage, verified: both, local: true, is: ErrUnverifiedImage, msg: "not an image the verify step verified"},
		{name: "hand-over by tag", verified: VerifiedImages{Image: testSandboxImage, SandboxImage: "registry.example/acme/sandbox:v1"},
			is: ErrUnverifiedImage, msg: "the verified sandbox image handed over by the verify step"},
		{name: "job hand-over by tag", configured: sepImage, verified: VerifiedImages{Image: "registry.example/acme/agents:v1", SandboxImage: sepImage},
			is: ErrUnverifiedImage, msg: "the verified image handed over"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, fix, err := chooseSandboxImage(tc.configured, tc.verified, !tc.local)
			if tc.is != nil {
				if !errors.Is(err, tc.is) || !strings.Contains(err.Error(), tc.msg) {
					t.Fatalf("error %v, want %v containing %q", err, tc.is, tc.msg)
				}
				if fix == "" {
					t.Error("a refusal without its next step")
				}
				if got.image != "" {
					t.Errorf("a refusal chose %q", got.image)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.image != tc.want || got.unverified != tc.unverified {
				t.Errorf("chose %+v, want %s (unverified %v)", got, tc.want, tc.unverified)
			}
		})
	}
}

// TestSandboxImagePreflight runs against the openshell fake: a refused
// sandbox image stops the run in preflight with the cause and the next step
// (exit 78 for an unverified one, 69 for one not pinned) and nothing is
// created or started; an accepted one is what `sandbox create --from` gets
// and what the fake reports creating the sandbox from.
func TestSandboxImagePreflight(t *testing.T) {
	for _, tc := range []struct {
		name       string
		ci         CIKind
		configured string
		verified   VerifiedImages
		want       int    // exit code
		msg        string // in the error, or the --from of an accepted run
	}{
		{name: "default: the job's own verified image", ci: CIGitHub, verified: VerifiedImages{Image: testSandboxImage}, msg: testSandboxImage},
		{name: "the verified sandbox image", ci: CIGitLab, verified: VerifiedImages{Image: testSandboxImage, SandboxImage: sepImage}, msg: sepImage},
		{name: "configured and verified", ci: CIGitHub, configured: sepImage, verified: VerifiedImages{Image: testSandboxImage, SandboxImage: sepImage}, msg: sepImage},
		{name: "unverified", ci: CIGitHub, configured: otherImage, verified: VerifiedImages{Image: testSandboxImage, SandboxImage: sepImage},
			want: ExitPolicy, msg: "not an image the verify step verified"},
		{name: "unverified, no hand-over", ci: CIGitLab, configured: sepImage, want: ExitPolicy, msg: "none was handed over"},
		{name: "digest mismatch", ci: CIGitHub, configured: sepImage2, verified: VerifiedImages{Image: testSandboxImage, SandboxImage: sepImage},
			want: ExitPolicy, msg: "differs from the verified"},
		{name: "tag only", ci: CIGitHub, configured: "registry.example/acme/sandbox:v1", verified: VerifiedImages{Image: testSandboxImage, SandboxImage: sepImage},
			want: ExitPreflight, msg: "not pinned by digest"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, tc.ci)
			h.opts.SandboxImage, h.opts.Verified = tc.configured, tc.verified
			res, err := h.run(context.Background(), Request{})
			if got := ExitCode(err); got != tc.want {
				t.Fatalf("exit %d, want %d: %v\n%s", got, tc.want, err, h.log.String())
			}
			if tc.want != 0 {
				if !strings.Contains(res.Error, tc.msg) || !strings.Contains(res.Error, "next:") {
					t.Errorf("error %q does not say %q and what to do next", res.Error, tc.msg)
				}
				if n := h.count("openshell sandbox create"); n != 0 {
					t.Errorf("%d sandbox create calls after a refused sandbox image", n)
				}
				if n := h.count("openshell provider create"); n != 0 {
					t.Errorf("%d provider create calls after a refused sandbox image", n)
				}
				if _, err := os.Stat(filepath.Join(h.state, "gateway.pid")); err == nil {
					t.Error("a gateway was started for a refused sandbox image")
				}
				return
			}
			var from []string
			for _, c := range h.calls() {
				if strings.HasPrefix(c.String(), "openshell sandbox create") {
					from = append(from, flagValue(c.Argv, "--from"))
				}
			}
			if len(from) != 1 || from[0] != tc.msg || res.SandboxImage != tc.msg {
				t.Errorf("sandbox create --from %v, result %q; want %s", from, res.SandboxImage, tc.msg)
			}
			if !strings.Contains(h.log.String(), "(image "+tc.msg+")") {
				t.Errorf("the fake did not report creating the sandbox from %s:\n%s", tc.msg, h.log.String())
			}
		})
	}
}

// TestUnverifiedLocalSandboxImageSaysSo: outside CI a sandbox image with no
// verify hand-over runs, and the log says it was not verified.
func TestUnverifiedLocalSandboxImageSaysSo(t *testing.T) {
	h := newHarness(t, CILocal)
	h.opts.SandboxImage, h.opts.Verified = sepImage, VerifiedImages{}
	res, err := h.run(context.Background(), Request{Values: map[string]string{"OWNER": "o", "REPO_NAME": "r", "ISSUE_NUMBER": "1", "FORGE_HOST": "api.github.com"}})
	if err != nil {
		t.Fatalf("%v\n%s", err, h.log.String())
	}
	if res.SandboxImage != sepImage || !strings.Contains(h.log.String(), "warning: sandbox image "+sepImage+" was not verified") {
		t.Errorf("sandbox image %q; log:\n%s", res.SandboxImage, h.log.String())
	}
}

// flagValue returns the value after flag in argv ("" when absent).
func flagValue(argv []string, flag string) string {
	for i, a := range argv {
		if a == flag && i+1 < len(argv) {
			return argv[i+1]
		}
	}
	return ""
}

// FuzzChooseSandboxImage: whatever the configured image and the hand-over,
// a chosen image is pinned by digest, and in CI it is exactly one of the
// handed-over refs; a refusal chooses nothing and says what to do.
func FuzzChooseSandboxImage(f *testing.F) {
	f.Add(sepImage, testSandboxImage, sepImage, true)
	f.Add("", testSandboxImage, "", true)
	f.Add(sepImage2, testSandboxImage, sepImage, true)
	f.Add(otherImage, "", "", false)
	f.Add("registry.example/acme/sandbox:v1", testSandboxImage, "", true)
	f.Add(sepImage+" ", testSandboxImage, sepImage, true)
	f.Fuzz(func(t *testing.T, configured, image, sandbox string, inCI bool) {
		v := VerifiedImages{Image: image, SandboxImage: sandbox}
		got, fix, err := chooseSandboxImage(configured, v, inCI)
		if err != nil {
			if got.image != "" || fix == "" {
				t.Fatalf("refusal %v chose %q, fix %q", err, got.image, fix)
			}
			if !errors.Is(err, ErrPreflight) && !errors.Is(err, ErrUnverifiedImage) {
				t.Fatalf("refusal %v wraps neither ErrPreflight nor ErrUnverifiedImage", err)
			}
			return
		}
		if !PinnedImage(got.image) {
			t.Fatalf("chose %q, not pinned", got.image)
		}
		if configured != "" && got.image != configured {
			t.Fatalf("configured %q, chose %q", configured, got.image)
		}
		handedOver := got.image == image || got.image == sandbox
		if inCI && !handedOver {
			t.Fatalf("in CI chose %q, not handed over (%+v)", got.image, v)
		}
		if got.unverified == handedOver || got.unverified && (image != "" || sandbox != "") {
			t.Fatalf("chose %+v from %+v", got, v)
		}
	})
}
