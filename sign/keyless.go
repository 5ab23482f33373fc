package sign

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"

	"github.com/sigstore/cosign/v2/pkg/cosign"
	cbundle "github.com/sigstore/cosign/v2/pkg/cosign/bundle"
	protocommon "github.com/sigstore/protobuf-specs/gen/pb-go/common/v1"
	rekorclient "github.com/sigstore/rekor/pkg/client"
	rekorgen "github.com/sigstore/rekor/pkg/generated/client"
	"github.com/sigstore/rekor/pkg/generated/models"
	sgsign "github.com/sigstore/sigstore-go/pkg/sign"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"github.com/sigstore/sigstore/pkg/signature"

	"github.com/fullsend-ai/agent-sandbox/cienv"
)

// Public-good Sigstore endpoints, the defaults of keyless signing.
const (
	DefaultFulcioURL = "https://fulcio.sigstore.dev"
	DefaultRekorURL  = "https://rekor.sigstore.dev"
)

// ErrNoIDToken reports that no OIDC identity token could be found.
var ErrNoIDToken = errors.New("no OIDC identity token")

// KeylessOptions configures keyless signing.
type KeylessOptions struct {
	// FulcioURL defaults to DefaultFulcioURL.
	FulcioURL string
	// RekorURL defaults to DefaultRekorURL.
	RekorURL string
	// NoTlogUpload skips the Rekor upload. The signature then only
	// verifies while the (10 minute) certificate is valid, or with
	// --insecure-ignore-tlog: meant for air-gapped tests, not for CI.
	NoTlogUpload bool
	// IDToken is the OIDC token; empty means DiscoverIDToken.
	IDToken string
	// Env reads the environment for token discovery (os.Getenv when nil).
	Env func(string) string
	// HTTPClient is used for token discovery (http.DefaultClient when nil).
	HTTPClient *http.Client
	// CertificateProvider replaces the Fulcio client (for in-process CAs).
	CertificateProvider sgsign.CertificateProvider
	// TransparencyLog replaces the Rekor client.
	TransparencyLog TransparencyLog
}

// DiscoverIDToken finds the CI's OIDC token for audience "sigstore":
// SIGSTORE_ID_TOKEN (GitLab CI `id_tokens:` with `aud: sigstore`, or any CI
// that provides one), else the GitHub Actions token service
// (ACTIONS_ID_TOKEN_REQUEST_URL and _TOKEN, with `permissions: id-token: write`).
// The token never appears in errors.
func DiscoverIDToken(ctx context.Context, getenv func(string) string, client *http.Client) (string, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	if client == nil {
		client = http.DefaultClient
	}
	if tok := strings.TrimSpace(getenv(cienv.SigstoreIDToken)); tok != "" {
		return tok, nil
	}
	reqURL, reqTok := getenv(cienv.ActionsIDTokenRequestURL), getenv(cienv.ActionsIDTokenRequestToken)
	if reqURL == "" || reqTok == "" {
		return "", fmt.Errorf("%w: set %s (GitLab: id_tokens: %[2]s: aud: sigstore) or run in GitHub Actions with permissions: id-token: write",
			ErrNoIDToken, cienv.SigstoreIDToken)
	}
	return actionsIDToken(ctx, client, reqURL, reqTok)
}

// actionsIDToken asks the GitHub Actions token service at reqURL
// (authorised by reqTok) for a token with audience "sigstore".
func actionsIDToken(ctx context.Context, client *http.Client, reqURL, reqTok string) (string, error) {
	u, err := url.Parse(reqURL)
	if err != nil {
		return "", fmt.Errorf("%s: %w", cienv.ActionsIDTokenRequestURL, err)
	}
	q := u.Query()
	q.Set("audience", "sigstore")
	u.RawQuery = q.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return "", err
	}
	req.Header.Set("Authorization", "Bearer "+reqTok)
	req.Header.Set("Accept", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return "", fmt.Errorf("requesting the GitHub Actions OIDC token: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return "", fmt.Errorf("reading the GitHub Actions OIDC token: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("requesting the GitHub Actions OIDC token: HTTP %d (does the job have permissions: id-token: write?)", resp.StatusCode)
	}
	var v struct {
		Value string `json:"value"`
	}
	if err := json.Unmarshal(body, &v); err != nil || v.Value == "" {
		return "", fmt.Errorf("%w: the GitHub Actions token service answered without a token", ErrNoIDToken)
	}
	return v.Value, nil
}

// NewKeyless returns a signer with an ephemeral ECDSA P-256 key certified by
// Fulcio for the CI's OIDC identity; its signatures and attestations are
// uploaded to Rekor (unless NoTlogUpload).
func NewKeyless(ctx context.Context, o KeylessOptions) (*Signer, error) {
	tok := o.IDToken
	if tok == "" {
		var err error
		if tok, err = DiscoverIDToken(ctx, o.Env, o.HTTPClient); err != nil {
			return nil, err
		}
	}
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generating ephemeral key: %w", err)
	}
	sv, err := signature.LoadECDSASignerVerifier(priv, crypto.SHA256)
	if err != nil {
		return nil, err
	}
	cert, err := fulcioCertificate(ctx, o, priv, tok)
	if err != nil {
		return nil, err
	}
	certPEM, err := cryptoutils.MarshalCertificateToPEM(cert)
	if err != nil {
		return nil, err
	}
	s := &Signer{sv: sv, certPEM: certPEM, identity: CertificateIdentity(cert)}
	if s.tlog, err = o.transparencyLog(); err != nil {
		return nil, err
	}
	return s, nil
}

// fulcioCertificate asks Fulcio (o.CertificateProvider, else the one at
// o.FulcioURL or DefaultFulcioURL) to certify priv for the identity of the
// OIDC token tok, and checks that the certificate is for priv.
func fulcioCertificate(ctx context.Context, o KeylessOptions, priv *ecdsa.PrivateKey, tok string) (*x509.Certificate, error) {
	cp := o.CertificateProvider
	if cp == nil {
		fu := o.FulcioURL
		if fu == "" {
			fu = DefaultFulcioURL
		}
		cp = sgsign.NewFulcio(&sgsign.FulcioOptions{BaseURL: fu, Retries: 2})
	}
	der, err := cp.GetCertificate(ctx, &ephemeralKeypair{priv: priv}, &sgsign.CertificateProviderOptions{IDToken: tok})
	if err != nil {
		return nil, fmt.Errorf("getting a signing certificate from Fulcio: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("parsing the Fulcio certificate: %w", err)
	}
	if cryptoutils.EqualKeys(cert.PublicKey, priv.Public()) != nil {
		return nil, errors.New("the Fulcio certificate does not certify the key it was asked for")
	}
	return cert, nil
}

// transparencyLog is the log a keyless signer uploads to: nil with
// NoTlogUpload, else o.TransparencyLog or Rekor at o.RekorURL (default
// DefaultRekorURL). Both a log and NoTlogUpload is an error.
func (o KeylessOptions) transparencyLog() (TransparencyLog, error) {
	if o.NoTlogUpload && o.TransparencyLog != nil {
		return nil, errors.New("keyless: a transparency log was given together with NoTlogUpload")
	}
	if o.NoTlogUpload {
		return nil, nil
	}
	if o.TransparencyLog != nil {
		return o.TransparencyLog, nil
	}
	ru := o.RekorURL
	if ru == "" {
		ru = DefaultRekorURL
	}
	return NewRekor(ru)
}

// WithTransparencyLog makes the signer log every signature and
// attestation in tl (for keyed signing: --tlog-upload).
func (s *Signer) WithTransparencyLog(tl TransparencyLog) *Signer {
	s.tlog = tl
	return s
}

// CertificateIdentity renders a Fulcio certificate's identity as
// "SUBJECT (issuer ISSUER)".
func CertificateIdentity(cert *x509.Certificate) string {
	subj := strings.Join(cryptoutils.GetSubjectAlternateNames(cert), ",")
	iss := certIssuer(cert)
	return fmt.Sprintf("%s (issuer %s)", subj, iss)
}

// certIssuer returns the OIDC issuer extension of a Fulcio certificate
// (the v2 extension when present, else the deprecated v1 one).
func certIssuer(cert *x509.Certificate) string {
	ce := cosign.CertExtensions{Cert: cert}
	return ce.GetIssuer()
}

// TransparencyLog records signatures and attestations; Rekor v1 (the API
// whose entries cosign v2's .sig and .att bundles carry) in production.
type TransparencyLog interface {
	// UploadSignature logs a signature over payload (hashedrekord).
	UploadSignature(ctx context.Context, sig, payload, pubPEM []byte) (*TlogEntry, error)
	// UploadAttestation logs a signed DSSE envelope (intoto).
	UploadAttestation(ctx context.Context, envelope, pubPEM []byte) (*TlogEntry, error)
}

// TlogEntry is a logged entry with its inclusion promise.
type TlogEntry struct {
	// Body is the canonicalized entry body.
	Body           []byte
	IntegratedTime int64
	LogIndex       int64
	// LogID is the hex log id (SHA-256 of the log's public key).
	LogID string
	// SignedEntryTimestamp is the log's signature over the other fields.
	SignedEntryTimestamp []byte
	// Log names the log for results ("rekor https://...").
	Log string
}

func (e *TlogEntry) bundle() *cbundle.RekorBundle {
	return &cbundle.RekorBundle{
		SignedEntryTimestamp: e.SignedEntryTimestamp,
		Payload: cbundle.RekorPayload{
			Body:           base64.StdEncoding.EncodeToString(e.Body),
			IntegratedTime: e.IntegratedTime,
			LogIndex:       e.LogIndex,
			LogID:          e.LogID,
		},
	}
}

// NewRekor returns the Rekor v1 client at url.
func NewRekor(url string) (TransparencyLog, error) {
	c, err := rekorclient.GetRekorClient(url)
	if err != nil {
		return nil, fmt.Errorf("rekor client for %s: %w", url, err)
	}
	return &rekor{url: url, client: c}, nil
}

type rekor struct {
	url    string
	client *rekorgen.Rekor
}

func (t *rekor) UploadSignature(ctx context.Context, sig, payload, pub []byte) (*TlogEntry, error) {
	h := sha256.New()
	h.Write(payload)
	e, err := cosign.TLogUpload(ctx, t.client, sig, h, pub)
	if err != nil {
		return nil, fmt.Errorf("uploading the signature to %s: %w", t.url, err)
	}
	return t.entry(e)
}

func (t *rekor) UploadAttestation(ctx context.Context, envelope, pub []byte) (*TlogEntry, error) {
	e, err := cosign.TLogUploadInTotoAttestation(ctx, t.client, envelope, pub)
	if err != nil {
		return nil, fmt.Errorf("uploading the attestation to %s: %w", t.url, err)
	}
	return t.entry(e)
}

func (t *rekor) entry(e *models.LogEntryAnon) (*TlogEntry, error) {
	b := cbundle.EntryToBundle(e)
	if b == nil || e.IntegratedTime == nil || e.LogIndex == nil || e.LogID == nil {
		return nil, fmt.Errorf("%s answered without an inclusion promise", t.url)
	}
	bodyStr, ok := e.Body.(string)
	if !ok {
		return nil, fmt.Errorf("%s answered with an unexpected entry body", t.url)
	}
	body, err := base64.StdEncoding.DecodeString(bodyStr)
	if err != nil {
		return nil, fmt.Errorf("%s entry body: %w", t.url, err)
	}
	return &TlogEntry{
		Body: body, IntegratedTime: *e.IntegratedTime, LogIndex: *e.LogIndex, LogID: *e.LogID,
		SignedEntryTimestamp: b.SignedEntryTimestamp,
		Log:                  fmt.Sprintf("rekor %s (log index %d)", t.url, *e.LogIndex),
	}, nil
}

// ephemeralKeypair adapts an ECDSA key to sigstore-go's Keypair, which its
// Fulcio client uses for the proof of possession.
type ephemeralKeypair struct{ priv *ecdsa.PrivateKey }

func (k *ephemeralKeypair) GetHashAlgorithm() protocommon.HashAlgorithm {
	return protocommon.HashAlgorithm_SHA2_256
}
func (k *ephemeralKeypair) GetSigningAlgorithm() protocommon.PublicKeyDetails {
	return protocommon.PublicKeyDetails_PKIX_ECDSA_P256_SHA_256
}
func (k *ephemeralKeypair) GetHint() []byte                { return nil }
func (k *ephemeralKeypair) GetKeyAlgorithm() string        { return "ECDSA" }
func (k *ephemeralKeypair) GetPublicKey() crypto.PublicKey { return k.priv.Public() }
func (k *ephemeralKeypair) GetPublicKeyPem() (string, error) {
	b, err := cryptoutils.MarshalPublicKeyToPEM(k.priv.Public())
	return string(b), err
}
func (k *ephemeralKeypair) SignData(_ context.Context, data []byte) ([]byte, []byte, error) {
	sum := sha256.Sum256(data)
	sig, err := ecdsa.SignASN1(rand.Reader, k.priv, sum[:])
	return sig, sum[:], err
}
