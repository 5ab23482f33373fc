package verify

import (
	"cmp"
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/fullsend-ai/agent-sandbox/cienv"
	"github.com/fullsend-ai/agent-sandbox/ciout"
	"github.com/fullsend-ai/agent-sandbox/handover"
	"github.com/fullsend-ai/agent-sandbox/internal/atomicfile"
)

// safeValue is what may be written to CI files: the values verify
// produces are references and digests; anything else (a newline, a quote)
// could inject variables, so it is refused rather than escaped.
var safeValue = regexp.MustCompile(`^[A-Za-z0-9._:/@+-]*$`)

// WriteText prints the human summary.
func WriteText(w io.Writer, r *Result) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Verified %s\n", r.Ref)
	if r.ResolvedTag != "" {
		fmt.Fprintf(&b, "  resolved from:   %s (only the digest was used)\n", r.ResolvedTag)
	}
	fmt.Fprintf(&b, "  source:          %s\n", r.Source)
	for _, s := range r.Signers {
		fmt.Fprintf(&b, "  signer:          %s\n", s)
	}
	fmt.Fprintf(&b, "  transparency:    %s\n", r.Transparency)
	fmt.Fprintf(&b, "  policies digest: %s\n", cmp.Or(r.PoliciesDigest, "(none signed)"))
	for _, a := range r.Attestations {
		writeAttestationText(&b, a)
	}
	if r.Sandbox != nil {
		writeSandboxText(&b, r.Sandbox)
	}
	fmt.Fprintln(&b, r.Ref)
	_, err := io.WriteString(w, b.String())
	return err
}

// writeAttestationText writes a verified attestation with, for a
// provenance, its builder and source.
func writeAttestationText(b *strings.Builder, a Attestation) {
	fmt.Fprintf(b, "  attestation:     %s (%s)\n", a.PredicateType, a.Signer)
	p := a.Provenance
	if p == nil {
		return
	}
	fmt.Fprintf(b, "    builder:       %s\n", p.BuilderID)
	if p.SourceRepo != "" {
		fmt.Fprintf(b, "    source:        %s@%s\n", p.SourceRepo, p.SourceRevision)
	}
}

// writeSandboxText writes the summary of the verified sandbox image.
func writeSandboxText(b *strings.Builder, sb *Result) {
	fmt.Fprintf(b, "Verified sandbox image %s (every sandbox is created from it)\n", sb.Ref)
	if sb.ResolvedTag != "" {
		fmt.Fprintf(b, "  resolved from:   %s (only the digest was used)\n", sb.ResolvedTag)
	}
	for _, s := range sb.Signers {
		fmt.Fprintf(b, "  signer:          %s\n", s)
	}
	fmt.Fprintf(b, "  transparency:    %s\n", sb.Transparency)
	for _, a := range sb.Attestations {
		fmt.Fprintf(b, "  attestation:     %s (%s)\n", a.PredicateType, a.Signer)
	}
}

// Outputs are the key/values handed to the next CI step or job: the
// verified image and its policies digest, and the verified sandbox image
// when there is one (FULLSEND_VERIFIED_SANDBOX_IMAGE, which `fullsend run`
// takes as the hand-over a separate sandbox image must match).
func (r *Result) Outputs() ([][2]string, error) {
	out := [][2]string{
		{handover.Image, r.Ref},
		{handover.ImageDigest, r.Digest},
		{handover.PoliciesDigest, r.PoliciesDigest},
	}
	if r.Sandbox != nil {
		out = append(out,
			[2]string{handover.VerifiedSandboxImage, r.Sandbox.Ref},
			[2]string{handover.VerifiedSandboxImageDigest, r.Sandbox.Digest})
	}
	for _, kv := range out {
		if !safeValue.MatchString(kv[1]) {
			return nil, fmt.Errorf("refusing to export %s=%q: unexpected characters", kv[0], kv[1])
		}
	}
	return out, nil
}

// githubOutputName maps a hand-over variable to its GitHub step output
// name.
func githubOutputName(env string) string {
	for _, v := range handover.Verified() {
		if v.Env == env {
			return v.Output
		}
	}
	return ""
}

// WriteGitHub appends the step outputs (ref, digest, policies-digest, and
// sandbox-ref, sandbox-digest for a verified sandbox image) to
// $GITHUB_OUTPUT and a summary table to $GITHUB_STEP_SUMMARY, when those
// are set (GitHub Actions; read through getenv by cienv). It reports
// whether it wrote anything.
func WriteGitHub(r *Result, getenv func(string) string) (bool, error) {
	ci := cienv.Detect(getenv)
	outFile, summary := ci.OutputFile(), ci.StepSummary()
	if outFile == "" && summary == "" {
		return false, nil
	}
	kvs, err := r.Outputs()
	if err != nil {
		return false, err
	}
	if outFile != "" {
		if err := appendGitHubOutputs(outFile, kvs); err != nil {
			return false, err
		}
	}
	if summary != "" {
		if err := ciout.AppendSummary(summary, githubSummary(r)); err != nil {
			return false, fmt.Errorf("writing %s: %w", cienv.GitHubStepSummary, err)
		}
	}
	return true, nil
}

// appendGitHubOutputs appends the hand-over values kvs to the
// $GITHUB_OUTPUT file under their step output names.
func appendGitHubOutputs(outFile string, kvs [][2]string) error {
	outputs := make([][2]string, len(kvs))
	for i, kv := range kvs {
		outputs[i] = [2]string{githubOutputName(kv[0]), kv[1]}
	}
	if err := ciout.AppendOutputs(outFile, outputs); err != nil {
		return fmt.Errorf("writing %s: %w", cienv.GitHubOutput, err)
	}
	return nil
}

// githubSummary is the Markdown table of a verified image for the job
// summary. The refs and digests are the values Outputs accepted; every
// other value is rendered literally (ciout.MarkdownText, MarkdownCode).
func githubSummary(r *Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "### fullsend verify: passed\n\n| | |\n|---|---|\n")
	fmt.Fprintf(&b, "| image | `%s` |\n", r.Ref)
	if r.ResolvedTag != "" {
		fmt.Fprintf(&b, "| resolved from | %s |\n", ciout.MarkdownCode(r.ResolvedTag))
	}
	for _, s := range r.Signers {
		fmt.Fprintf(&b, "| signer | %s |\n", ciout.MarkdownText(s))
	}
	fmt.Fprintf(&b, "| transparency | %s |\n", ciout.MarkdownText(r.Transparency))
	fmt.Fprintf(&b, "| policies digest | `%s` |\n", r.PoliciesDigest)
	for _, a := range r.Attestations {
		fmt.Fprintf(&b, "| attestation | %s |\n", ciout.MarkdownText(a.PredicateType))
	}
	if r.Sandbox != nil {
		writeSandboxSummary(&b, r.Sandbox)
	}
	b.WriteString("\n")
	return b.String()
}

// writeSandboxSummary writes the summary table's rows of the verified
// sandbox image.
func writeSandboxSummary(b *strings.Builder, sb *Result) {
	fmt.Fprintf(b, "| sandbox image | `%s` |\n", sb.Ref)
	if sb.ResolvedTag != "" {
		fmt.Fprintf(b, "| sandbox image resolved from | %s |\n", ciout.MarkdownCode(sb.ResolvedTag))
	}
	for _, s := range sb.Signers {
		fmt.Fprintf(b, "| sandbox image signer | %s |\n", ciout.MarkdownText(s))
	}
	for _, a := range sb.Attestations {
		fmt.Fprintf(b, "| sandbox image attestation | %s |\n", ciout.MarkdownText(a.PredicateType))
	}
}

// WriteDotenv writes the outputs as a dotenv file (GitLab CI
// artifacts:reports:dotenv), so a later job can use
// `image: $FULLSEND_IMAGE` and pass FULLSEND_POLICIES_DIGEST to fullsend run.
// The file is replaced atomically.
func WriteDotenv(r *Result, path string) error {
	kvs, err := r.Outputs()
	if err != nil {
		return err
	}
	var b strings.Builder
	for _, kv := range kvs {
		fmt.Fprintf(&b, "%s=%s\n", kv[0], kv[1])
	}
	return atomicfile.Write(path, []byte(b.String()), 0o644)
}
