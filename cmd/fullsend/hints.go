package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/fullsend-ai/agent-sandbox/image"
	"github.com/fullsend-ai/agent-sandbox/publish"
	"github.com/fullsend-ai/agent-sandbox/runner"
	"github.com/fullsend-ai/agent-sandbox/sign"
	"github.com/fullsend-ai/agent-sandbox/verify"
)

// The libraries (image, sign, verify, publish) report errors without CLI
// flag names; this file is where the CLI words them with its flags.

// hintedError is a library error with the CLI's wording; errors.Is and
// errors.As still see the library error.
type hintedError struct {
	err error
	msg string
}

func (e hintedError) Error() string { return e.msg }
func (e hintedError) Unwrap() error { return e.err }

// optionText words a publish.OptionError (by its Kind) with the flags;
// platforms are the --platform values, for the one message naming them.
var optionText = map[error]func(e *publish.OptionError, platforms []string) string{
	publish.ErrNoBase:       fixed("--base is required (a registry reference, an OCI layout dir, an image tarball, or scratch)"),
	publish.ErrPushNeedsTag: fixed("--push needs at least one --tag REGISTRY/REPO:TAG"),
	publish.ErrTag: func(e *publish.OptionError, _ []string) string {
		return fmt.Sprintf("--tag %q: %v (want REGISTRY/REPO:TAG)", e.Value, e.Err)
	},
	publish.ErrPlatform: func(e *publish.OptionError, _ []string) string { return fmt.Sprintf("--platform: %v", e.Err) },
	publish.ErrNotDir: func(e *publish.OptionError, _ []string) string {
		return fmt.Sprintf("DIR %s: not a directory", e.Value)
	},
	publish.ErrEpoch: func(e *publish.OptionError, _ []string) string { return e.Err.Error() },
	publish.ErrBinarySpec: func(e *publish.OptionError, _ []string) string {
		return fmt.Sprintf("--binary %q: want PLATFORM=PATH, e.g. linux/amd64=dist/fullsend", e.Value)
	},
	publish.ErrBinaryPlatform: func(e *publish.OptionError, platforms []string) string {
		return fmt.Sprintf("--binary %s: platform not in --platform %s", e.Value, strings.Join(platforms, ","))
	},
	publish.ErrSignNeedsTag:      fixed("--sign needs --tag REGISTRY/REPO:TAG: the signature names the repository"),
	publish.ErrSignNeedsOutput:   fixed("--sign needs --push or --oci-layout to store the signature"),
	publish.ErrNoSigner:          fixed("choose a signer: --key cosign.key (or a KMS URI) or --keyless"),
	publish.ErrKeyAndKeyless:     fixed("--key and --keyless are exclusive"),
	publish.ErrTlogUploadKeyless: fixed("--tlog-upload is for --key; --keyless always uploads (see --insecure-skip-tlog-upload)"),
	publish.ErrSkipTlogKeyed:     fixed("--insecure-skip-tlog-upload is for --keyless"),
	publish.ErrAnnotation: func(e *publish.OptionError, _ []string) string {
		return fmt.Sprintf("--annotation %q: want KEY=VALUE", e.Value)
	},
	sign.ErrNoBuilderID: fixed("--provenance needs a builder id: this CI job does not name its workflow or runner (GITHUB_WORKFLOW_REF; CI_SERVER_URL, CI_PROJECT_PATH, CI_RUNNER_ID): pass --builder-id URI (or --provenance=false)"),
	publish.ErrImageRef: func(e *publish.OptionError, _ []string) string {
		return fmt.Sprintf("image reference %q: %v", e.Value, e.Err)
	},
	publish.ErrLayoutRepository: func(e *publish.OptionError, _ []string) string {
		return fmt.Sprintf("repository %q: %v (with --oci-layout, IMAGE names the repository the signature is for)", e.Value, e.Err)
	},
}

func fixed(text string) func(*publish.OptionError, []string) string {
	return func(*publish.OptionError, []string) string { return text }
}

// hint finds its library error in err and returns the text to replace
// (old; "" appends at the end) and its replacement.
type hint func(err error) (old, new string, ok bool)

// hints are tried in order; the first that matches applies.
var hints = []hint{
	func(err error) (string, string, bool) {
		var be *image.BinaryError
		if !errors.As(err, &be) {
			return "", "", false
		}
		if errors.Is(be.Err, image.ErrNoToolchain) {
			return be.Error(), be.Error() + " (hint: install Go or pass --binary " + be.Platform + "=PATH)", true
		}
		return be.Error(), be.Error() + " (hint: pass --source DIR or --binary " + be.Platform + "=PATH)", true
	},
	after(image.ErrNoSource, " (hint: pass --source DIR or --binary PLATFORM=PATH)"),
	func(err error) (string, string, bool) {
		var me *image.OpenShellMismatchError
		if !errors.As(err, &me) {
			return "", "", false
		}
		return me.Error(), me.Error() + " (hint: fullsend policy compile --openshell-version " + me.Base + ")", true
	},
	after(image.ErrNoBase, " (hint: --base REF, an OCI layout dir, a tarball or scratch)"),
	after(image.ErrNoPlatforms, " (hint: --platform linux/amd64)"),
	after(image.ErrNoTag, " (hint: --tag REGISTRY/REPO:VERSION)"),
	after(image.ErrLatestTag, " (hint: tag a version; pass --allow-latest to override)"),
	after(sign.ErrKeyExists, " (remove it first or pick another --output-prefix)"),
	func(err error) (string, string, bool) {
		old := sign.ErrNoPassword.Error() + ": set COSIGN_PASSWORD"
		return old, old + " or pass --password-file", errors.Is(err, sign.ErrNoPassword)
	},
	after(sign.ErrNoBuilderID, " (pass --builder-id URI)"),
	func(err error) (string, string, bool) {
		var ue *sign.UnsignedLayoutError
		if !errors.As(err, &ue) {
			return "", "", false
		}
		return ue.Error(), ue.Error() + ": sign it with fullsend image build --sign or cosign save", true
	},
	func(err error) (string, string, bool) {
		var re *verify.RepositoryError
		if !errors.As(err, &re) {
			return "", "", false
		}
		return re.Error(), fmt.Sprintf("--repository %q: %v", re.Repository, re.Err), true
	},
	after(verify.ErrNoSigner, ": pass --key (public key or KMS URI) or --certificate-identity with --certificate-oidc-issuer"),
	after(verify.ErrNoRepository, " (IMAGE argument or --repository)"),
	func(err error) (string, string, bool) {
		return "", " (hint: --trusted-root FILE)", errors.Is(err, verify.ErrFetchTrustedRoot)
	},
	func(err error) (string, string, bool) { return "", unpinnedHint, errors.Is(err, runner.ErrUnpinned) },
}

// unpinnedHint says where the policies digest that run and serve agents
// need in CI comes from.
const unpinnedHint = " (hint: set FULLSEND_POLICIES_DIGEST, or pass --policies-digest, to the policies-digest that" +
	" fullsend verify exported in the verify step: needs.verify.outputs.policies-digest on GitHub," +
	" the fullsend-verified.env artifact of the fullsend-verify job on GitLab)"

// after is the hint that follows the text of sentinel.
func after(sentinel error, text string) hint {
	return func(err error) (string, string, bool) {
		return sentinel.Error(), sentinel.Error() + text, errors.Is(err, sentinel)
	}
}

// cliError words a library error for the command line: invalid options
// become usage errors (exit 2) worded with the flags, and known library
// errors get their flag hint. platforms are the --platform values of image
// build (nil elsewhere).
func cliError(err error, platforms []string) error {
	if err == nil {
		return nil
	}
	var oe *publish.OptionError
	if errors.As(err, &oe) {
		if text, ok := optionText[oe.Kind]; ok {
			return usageError{replaceText(err, oe.Error(), text(oe, platforms))}
		}
		return usageError{err}
	}
	for _, h := range hints {
		if old, new, ok := h(err); ok {
			return replaceText(err, old, new)
		}
	}
	return err
}

// replaceText replaces the first old in err's text by new (appends new
// when old is ""), keeping err in the chain.
func replaceText(err error, old, new string) error {
	msg := err.Error()
	switch {
	case old == "":
		msg += new
	case strings.Contains(msg, old):
		msg = strings.Replace(msg, old, new, 1)
	default:
		return err
	}
	return hintedError{err: err, msg: msg}
}
