// Package handover names what one fullsend job hands the next: the image
// annotation that carries the policies digest from `image build` through
// the signature to `verify`, the variables `fullsend verify` exports for
// `fullsend run` (and `doctor`, `serve agents`, and the runs `spawn`
// starts), and the run settings the image or the job sets in the
// environment. Each name is defined here once, so the writer and the reader
// of a value cannot drift apart; the CI templates use exactly these names
// (templates' TestTemplatesUseTheHandOverNames).
//
// It is a leaf (standard library only, and no code at all), so every stage
// may import it: `image` and `sign` both name the annotation without
// importing each other.
package handover

// PoliciesDigestAnnotation is the image and signature annotation whose value
// is the sha256 of policies/manifest.json: `image build` writes it into the
// image manifest, `sign` into the signed claims, `verify` requires both to
// agree, and `run` pins the bundle to it.
const PoliciesDigestAnnotation = "dev.fullsend.policies.digest"

// The verify -> run hand-over: the variables `fullsend verify` writes to a
// dotenv file (GitLab CI) and, under the Output names, to the step outputs
// (GitHub Actions), and that `fullsend run` reads from the environment.
const (
	// Image is the verified image, REPO@sha256:... (the job's own image).
	Image = "FULLSEND_IMAGE"
	// ImageDigest is the verified image's digest, sha256:....
	ImageDigest = "FULLSEND_IMAGE_DIGEST"
	// PoliciesDigest is the verified policies digest, sha256:... (the
	// PoliciesDigestAnnotation's value), which `run` pins the bundle to.
	PoliciesDigest = "FULLSEND_POLICIES_DIGEST"
	// VerifiedSandboxImage is a separate sandbox image `verify
	// --sandbox-image` verified, REPO@sha256:...
	VerifiedSandboxImage = "FULLSEND_VERIFIED_SANDBOX_IMAGE"
	// VerifiedSandboxImageDigest is that sandbox image's digest.
	VerifiedSandboxImageDigest = "FULLSEND_VERIFIED_SANDBOX_IMAGE_DIGEST"
)

// The GitHub Actions step-output names of the hand-over, in the same order.
const (
	ImageOutput                      = "ref"
	ImageDigestOutput                = "digest"
	PoliciesDigestOutput             = "policies-digest"
	VerifiedSandboxImageOutput       = "sandbox-ref"
	VerifiedSandboxImageDigestOutput = "sandbox-digest"
)

// Run settings `fullsend run` (and `doctor`) take from the environment when
// no flag is given, and `spawn` passes on to the runs it starts. They are set
// by the image (SupervisorImage) or the job, not by `verify`.
const (
	// SandboxImage is the image every sandbox is created from, when it is
	// not the verified image itself.
	SandboxImage = "FULLSEND_SANDBOX_IMAGE"
	// SupervisorImage is the supervisor image of a gateway the runner
	// starts.
	SupervisorImage = "FULLSEND_SUPERVISOR_IMAGE"
	// Gateway is the gateway mode (auto, existing, start).
	Gateway = "FULLSEND_GATEWAY"
)

// Var is one hand-over variable: its environment and dotenv name and its
// GitHub Actions step-output name.
type Var struct {
	Env    string
	Output string
}

// Verified returns the variables `fullsend verify` exports, in the order it
// writes them; the last two only when it verified a separate sandbox image.
func Verified() []Var {
	return []Var{
		{Image, ImageOutput},
		{ImageDigest, ImageDigestOutput},
		{PoliciesDigest, PoliciesDigestOutput},
		{VerifiedSandboxImage, VerifiedSandboxImageOutput},
		{VerifiedSandboxImageDigest, VerifiedSandboxImageDigestOutput},
	}
}

// RunInputs returns the hand-over variables `fullsend run` reads: the
// verified image, the policies digest and the verified sandbox image. A CI
// template's run job sets each of them from the verify job.
func RunInputs() []string {
	return []string{Image, PoliciesDigest, VerifiedSandboxImage}
}

// RunSettings returns the run settings `spawn` passes on from its own
// environment to the runs it starts, beside the hand-over.
func RunSettings() []string {
	return []string{SandboxImage, SupervisorImage, Gateway}
}
