package runner

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/fullsend-ai/agent-sandbox/cienv"
	"github.com/fullsend-ai/agent-sandbox/handover"
)

// ErrUnverifiedImage reports a sandbox image that is not exactly an image
// the verify step verified and handed over. It also matches ErrPolicy.
var ErrUnverifiedImage = fmt.Errorf("%w: sandbox image not verified", ErrPolicy)

// VerifiedImages is the hand-over of the verify step that ran in the job
// before `fullsend run`: the images `fullsend verify` verified, exactly as it
// printed them (REPO@sha256:...). Only the job's trusted wiring sets them
// (GitHub: the verify job's outputs; GitLab: its artifact file), never the
// agent, which runs later, nor the checkout, which the runner never reads
// them from.
type VerifiedImages struct {
	// Image is the job's own image: FULLSEND_IMAGE, the ref output.
	Image string
	// SandboxImage is the separate sandbox image verified with `fullsend
	// verify --sandbox-image`: FULLSEND_VERIFIED_SANDBOX_IMAGE, the
	// sandbox-ref output; empty when none was.
	SandboxImage string
}

// sandboxChoice is the image every sandbox of a run is created from.
type sandboxChoice struct {
	image  string
	detail string
	// unverified: no hand-over at all, allowed outside CI only.
	unverified bool
}

// chooseSandboxImage picks the image `sandbox create --from` gets and
// checks it against the verify step's hand-over. The configured image
// (Options.SandboxImage) wins; without one it is the verified sandbox
// image, else the job's own verified image. It must be pinned by digest
// (ErrPreflight otherwise) and be exactly one of the verified refs
// (ErrUnverifiedImage otherwise: a digest or a repository that differs, a
// hand-over that is not a pinned ref). Outside CI only, an image with no
// hand-over at all is used and the run says it is unverified. It returns
// the failure's next step with the error.
func chooseSandboxImage(configured string, v VerifiedImages, inCI bool) (sandboxChoice, string, error) {
	if fix, err := checkHandover(v); err != nil {
		return sandboxChoice{}, fix, err
	}
	img := cmp.Or(configured, v.SandboxImage, v.Image)
	switch {
	case img == "":
		return sandboxChoice{}, "pass the image fullsend verify printed: --verified-image REPO@sha256:... (" + handover.Image + ", the " + handover.ImageOutput + " output)",
			fmt.Errorf("%w: no sandbox image: without --from OpenShell runs its default, unpinned image", ErrPreflight)
	case !PinnedImage(img):
		return sandboxChoice{}, "use the REPO@sha256:... that fullsend verify printed",
			fmt.Errorf("%w: sandbox image %q is not pinned by digest", ErrPreflight, img)
	case img == v.SandboxImage:
		return sandboxChoice{image: img, detail: img + ": the sandbox image fullsend verify verified"}, "", nil
	case img == v.Image:
		return sandboxChoice{image: img, detail: img + ": the job's own verified image"}, "", nil
	case v.Image == "" && v.SandboxImage == "" && !inCI:
		return sandboxChoice{image: img, unverified: true,
			detail: img + ": not verified, no fullsend verify hand-over (allowed outside CI only)"}, "", nil
	}
	fix, err := unverifiedImage(img, v)
	return sandboxChoice{}, fix, err
}

// checkHandover refuses a hand-over that is not a pinned ref.
func checkHandover(v VerifiedImages) (fix string, err error) {
	for _, h := range []struct{ name, ref string }{{"the verified image", v.Image}, {"the verified sandbox image", v.SandboxImage}} {
		if h.ref != "" && !PinnedImage(h.ref) {
			return "pass the REPO@sha256:... that fullsend verify printed, unchanged",
				fmt.Errorf("%w: %s handed over by the verify step, %q, is not REPO@sha256:<64 hex>", ErrUnverifiedImage, h.name, h.ref)
		}
	}
	return "", nil
}

// unverifiedImage is the failure of img, a pinned image that is none of
// the verified ones: none was handed over, or one of the same repository
// has another digest, or no verified image is of its repository.
func unverifiedImage(img string, v VerifiedImages) (fix string, err error) {
	fix = "verify it in the job before the run (fullsend verify --sandbox-image " + img +
		") and hand its " + handover.VerifiedSandboxImageOutput + " over (--verified-sandbox-image, " + handover.VerifiedSandboxImage +
		"), or drop --sandbox-image (" + handover.SandboxImage + ") to use the verified image"
	if v.Image == "" && v.SandboxImage == "" {
		return fix, fmt.Errorf("%w: sandbox image %s: in CI only an image the verify step verified may run, and none was handed over (%s, %s)", ErrUnverifiedImage, img, handover.Image, handover.VerifiedSandboxImage)
	}
	repo, digest, _ := strings.Cut(img, "@")
	var verified []string
	for _, h := range []string{v.SandboxImage, v.Image} {
		if h == "" {
			continue
		}
		verified = append(verified, h)
		if hrepo, hdigest, _ := strings.Cut(h, "@"); hrepo == repo {
			return fix, fmt.Errorf("%w: sandbox image %s: digest %s differs from the verified %s", ErrUnverifiedImage, img, digest, hdigest)
		}
	}
	return fix, fmt.Errorf("%w: sandbox image %s is not an image the verify step verified (%s)", ErrUnverifiedImage, img, strings.Join(verified, ", "))
}

// sandboxImage is chooseSandboxImage for this runner's options.
func (r *Runner) sandboxImage() (sandboxChoice, string, error) {
	inCI := cienv.Detect(r.opts.Env.Getenv.value).IsCI()
	return chooseSandboxImage(r.opts.SandboxImage, r.opts.Verified, inCI)
}
