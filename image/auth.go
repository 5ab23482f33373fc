package image

import (
	"context"
	"io"
	"net/http"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// Keychain returns the credentials lookup used for every registry access:
// the standard docker keychain (config.json, credential helpers) first, then
// the CI job's own tokens: GITHUB_TOKEN for ghcr.io, and for CI_REGISTRY
// either CI_REGISTRY_USER/CI_REGISTRY_PASSWORD or CI_JOB_TOKEN. Tokens are
// read from the environment only and are never logged.
func Keychain(getenv func(string) string) authn.Keychain {
	return authn.NewMultiKeychain(authn.DefaultKeychain, ciKeychain{getenv})
}

type ciKeychain struct{ getenv func(string) string }

func (k ciKeychain) Resolve(res authn.Resource) (authn.Authenticator, error) {
	reg := res.RegistryStr()
	if reg == "ghcr.io" {
		if tok := k.getenv("GITHUB_TOKEN"); tok != "" {
			// ghcr.io accepts any user name with a token; the actor is
			// what the registry logs.
			return &authn.Basic{Username: firstNonEmpty(k.getenv("GITHUB_ACTOR"), "github-actions"), Password: tok}, nil
		}
	}
	if ci := k.getenv("CI_REGISTRY"); ci != "" && ci == reg {
		if user, pw := k.getenv("CI_REGISTRY_USER"), k.getenv("CI_REGISTRY_PASSWORD"); user != "" && pw != "" {
			return &authn.Basic{Username: user, Password: pw}, nil
		}
		if tok := k.getenv("CI_JOB_TOKEN"); tok != "" {
			return &authn.Basic{Username: "gitlab-ci-token", Password: tok}, nil
		}
	}
	return authn.Anonymous, nil
}

// RemoteConfig configures registry access.
type RemoteConfig struct {
	Keychain  authn.Keychain
	Transport http.RoundTripper // nil: the default transport
	// Backoff for retried requests; zero: 1s, factor 2, 5 attempts.
	Backoff remote.Backoff
	// Progress, when set, receives push progress lines.
	Progress io.Writer
}

// retriedStatus are the responses retried with backoff: timeouts, rate
// limits and server-side errors that a later attempt may not hit.
var retriedStatus = []int{
	http.StatusRequestTimeout, http.StatusTooManyRequests,
	http.StatusInternalServerError, http.StatusBadGateway,
	http.StatusServiceUnavailable, http.StatusGatewayTimeout,
}

// RemoteOptions turns cfg into go-containerregistry options: auth from the
// keychain, retries with exponential backoff on transient errors (dropped
// connections included) and, with Progress set, progress reporting.
func RemoteOptions(ctx context.Context, cfg RemoteConfig) []remote.Option {
	backoff := cfg.Backoff
	if backoff.Steps == 0 {
		backoff = remote.Backoff{Duration: time.Second, Factor: 2, Jitter: 0.1, Steps: 5}
	}
	kc := cfg.Keychain
	if kc == nil {
		kc = authn.NewMultiKeychain() // anonymous
	}
	opts := []remote.Option{
		remote.WithContext(ctx),
		remote.WithAuthFromKeychain(kc),
		remote.WithRetryBackoff(backoff),
		remote.WithRetryStatusCodes(retriedStatus...),
		remote.WithUserAgent("fullsend-image-build"),
	}
	if cfg.Transport != nil {
		opts = append(opts, remote.WithTransport(cfg.Transport))
	}
	return opts
}
