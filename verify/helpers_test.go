package verify

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"log"
	"math/rand"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/sigstore/rekor/pkg/types"
	_ "github.com/sigstore/rekor/pkg/types/hashedrekord/v0.0.1" // registers the hashedrekord kind
	_ "github.com/sigstore/rekor/pkg/types/intoto/v0.0.2"       // registers the intoto kind
	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore-go/pkg/testing/ca"
	"github.com/sigstore/sigstore-go/pkg/tlog"
	"github.com/sigstore/sigstore/pkg/cryptoutils"

	"github.com/fullsend-ai/agent-sandbox/sign"
)

const testPassword = "correct horse battery staple"

// The policy manifest digest every test image carries and signs.
var testPolicies = "sha256:" + strings.Repeat("ab", 32)

func startRegistry(t testing.TB, wrap func(http.Handler) http.Handler) string {
	t.Helper()
	var h http.Handler = registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	if wrap != nil {
		h = wrap(h)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL)
	return u.Host
}

type keyPair struct{ priv, pub string }

func newKeys(t testing.TB) keyPair {
	t.Helper()
	dir := t.TempDir()
	k := keyPair{filepath.Join(dir, "cosign.key"), filepath.Join(dir, "cosign.pub")}
	if err := sign.GenerateKeyPair(k.priv, k.pub, []byte(testPassword)); err != nil {
		t.Fatal(err)
	}
	return k
}

func (k keyPair) signer(t testing.TB) *sign.Signer {
	t.Helper()
	sv, err := sign.LoadPrivateKey(context.Background(), k.priv, []byte(testPassword))
	if err != nil {
		t.Fatal(err)
	}
	s, err := sign.NewKeyed(sv)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func newImage(t testing.TB, seed int64) v1.Image {
	t.Helper()
	img, err := random.Image(512, 2, random.WithSource(rand.NewSource(seed)))
	if err != nil {
		t.Fatal(err)
	}
	return mutate.Annotations(img, map[string]string{sign.AnnotationPoliciesDigest: testPolicies}).(v1.Image)
}

func push(t testing.TB, ref name.Reference, img v1.Image) name.Digest {
	t.Helper()
	if err := remote.Write(ref, img); err != nil {
		t.Fatal(err)
	}
	h, _ := img.Digest()
	return ref.Context().Digest(h.String())
}

func claims() sign.Claims {
	return sign.Claims{PoliciesDigest: testPolicies, GitRevision: strings.Repeat("1", 40), FullsendVersion: "v0.0.0-test", RunURL: "https://ci.example/run/1"}
}

func provenance() *sign.Provenance {
	return &sign.Provenance{BuilderID: "https://ci.example/builder", SourceRepo: "git+https://example.com/agents", SourceRevision: strings.Repeat("1", 40)}
}

// signPush signs img as stored in repo with s and pushes the signature
// (and the attestations asked for).
func signPush(t testing.TB, s *sign.Signer, repo name.Repository, img v1.Image, o sign.Options) {
	t.Helper()
	sd, err := s.Sign(context.Background(), sign.Subject{Repository: repo, Image: img}, o)
	if err != nil {
		t.Fatal(err)
	}
	if err := sd.Push(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// copyTag copies a manifest (a .sig or .att image) from one tag to another.
func copyTag(t testing.TB, from, to string) {
	t.Helper()
	src, err := name.ParseReference(from)
	if err != nil {
		t.Fatal(err)
	}
	dst, err := name.ParseReference(to)
	if err != nil {
		t.Fatal(err)
	}
	img, err := remote.Image(src)
	if err != nil {
		t.Fatalf("reading %s: %v", from, err)
	}
	if err := remote.Write(dst, img); err != nil {
		t.Fatal(err)
	}
}

func cosignTag(ref name.Digest, suffix string) string {
	return ref.Repository.Name() + ":" + strings.Replace(ref.DigestStr(), ":", "-", 1) + "." + suffix
}

// keyless is an in-process Sigstore: a Fulcio-style CA served over HTTP
// (the real sigstore-go Fulcio client talks to it) and sigstore-go's
// VirtualSigstore as the Rekor log whose signed entry timestamps verify
// offline. Its trusted root holds the CA and the log key.
type keyless struct {
	vs      *ca.VirtualSigstore
	fulcio  *httptest.Server
	trusted root.TrustedMaterial
	// caRoot and caInter are the CA certificates (for cosign --ca-roots).
	caRoot, caInter *x509.Certificate
	// logTime shifts the integrated time the log records.
	logTime atomic.Int64
	index   atomic.Int64
}

func newKeyless(t testing.TB) *keyless {
	t.Helper()
	vs, err := ca.NewVirtualSigstore()
	if err != nil {
		t.Fatal(err)
	}
	rootCert, rootKey, err := ca.GenerateRootCa()
	if err != nil {
		t.Fatal(err)
	}
	interCert, interKey, err := ca.GenerateFulcioIntermediate(rootCert, rootKey)
	if err != nil {
		t.Fatal(err)
	}
	k := &keyless{vs: vs}
	k.fulcio = httptest.NewServer(fulcioHandler(t, rootCert, interCert, interKey))
	t.Cleanup(k.fulcio.Close)
	fca := &root.FulcioCertificateAuthority{
		Root: rootCert, Intermediates: []*x509.Certificate{interCert},
		ValidityPeriodStart: time.Now().Add(-time.Hour), ValidityPeriodEnd: time.Now().Add(time.Hour), URI: k.fulcio.URL,
	}
	tr, err := root.NewTrustedRoot(root.TrustedRootMediaType01, []root.CertificateAuthority{fca}, rawLogIDs(vs.CTLogs()), nil, rawLogIDs(vs.RekorLogs()))
	if err != nil {
		t.Fatal(err)
	}
	k.trusted = tr
	k.caRoot, k.caInter = rootCert, interCert
	return k
}

// rawLogIDs fixes VirtualSigstore's log IDs (the hex string's bytes) to
// the raw key hash, so the trusted root survives a JSON round trip (for
// the cosign CLI's --trusted-root).
func rawLogIDs(logs map[string]*root.TransparencyLog) map[string]*root.TransparencyLog {
	out := make(map[string]*root.TransparencyLog, len(logs))
	for id, l := range logs {
		c := *l
		if raw, err := hex.DecodeString(id); err == nil {
			c.ID = raw
		}
		out[id] = &c
	}
	return out
}

// token is an (unsigned) OIDC token: the fake Fulcio trusts its claims,
// as the real one would after checking the issuer's signature.
func token(subject, issuer string) string {
	hdr := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"ES256","typ":"JWT"}`))
	body, _ := json.Marshal(map[string]string{"sub": subject, "iss": issuer, "aud": "sigstore"})
	return hdr + "." + base64.RawURLEncoding.EncodeToString(body) + "." + base64.RawURLEncoding.EncodeToString([]byte("not-verified-by-the-fake-ca"))
}

func (k *keyless) signer(t testing.TB, subject, issuer string) *sign.Signer {
	t.Helper()
	return k.signerLoggingTo(t, subject, issuer, k)
}

// signerLoggingTo gets a certificate from k's CA and logs to tl.
func (k *keyless) signerLoggingTo(t testing.TB, subject, issuer string, tl sign.TransparencyLog) *sign.Signer {
	t.Helper()
	s, err := sign.NewKeyless(context.Background(), sign.KeylessOptions{
		FulcioURL: k.fulcio.URL, IDToken: token(subject, issuer), TransparencyLog: tl,
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func (k *keyless) policy(subject, issuer string) Options {
	return Options{Identity: &sign.Identity{Subject: subject, Issuer: issuer}, TrustedMaterial: k.trusted, InsecureIgnoreSCT: true}
}

// UploadSignature logs a hashedrekord entry, as Rekor does.
func (k *keyless) UploadSignature(ctx context.Context, sig, payload, pub []byte) (*sign.TlogEntry, error) {
	sum := sha256.Sum256(payload)
	return k.log(ctx, "hashedrekord", "0.0.1", types.ArtifactProperties{
		ArtifactHash: "sha256:" + hex.EncodeToString(sum[:]), SignatureBytes: sig,
		PublicKeyBytes: [][]byte{pub}, PKIFormat: "x509",
	})
}

// UploadAttestation logs an intoto entry, as Rekor does.
func (k *keyless) UploadAttestation(ctx context.Context, env, pub []byte) (*sign.TlogEntry, error) {
	return k.log(ctx, "intoto", "0.0.2", types.ArtifactProperties{ArtifactBytes: env, PublicKeyBytes: [][]byte{pub}})
}

func (k *keyless) log(ctx context.Context, kind, version string, props types.ArtifactProperties) (*sign.TlogEntry, error) {
	pe, err := types.NewProposedEntry(ctx, kind, version, props)
	if err != nil {
		return nil, err
	}
	impl, err := types.CreateVersionedEntry(pe)
	if err != nil {
		return nil, err
	}
	body, err := types.CanonicalizeEntry(ctx, impl)
	if err != nil {
		return nil, err
	}
	logID, err := k.vs.RekorLogID()
	if err != nil {
		return nil, err
	}
	e := &sign.TlogEntry{Body: body, IntegratedTime: time.Now().Unix() + k.logTime.Load(), LogIndex: k.index.Add(1), LogID: logID, Log: "virtual rekor"}
	e.SignedEntryTimestamp, err = k.vs.RekorSignPayload(tlog.RekorPayload{
		Body: base64.StdEncoding.EncodeToString(body), IntegratedTime: e.IntegratedTime, LogIndex: e.LogIndex, LogID: logID,
	})
	return e, err
}

// pubSigner carries a public key where GenerateLeafCert wants a signer.
type pubSigner struct{ pub crypto.PublicKey }

func (p pubSigner) Public() crypto.PublicKey { return p.pub }
func (p pubSigner) Sign(io.Reader, []byte, crypto.SignerOpts) ([]byte, error) {
	return nil, errors.New("public key only")
}

// fulcioHandler serves Fulcio's signing endpoints (POST /api/v2/signingCert,
// as sigstore-go's client calls it, and the legacy /api/v1/signingCert the
// cosign CLI uses): it checks the proof of possession (the token subject
// signed with the requested key) and issues a short-lived certificate
// naming the subject and issuer.
func fulcioHandler(t testing.TB, rootCert, interCert *x509.Certificate, interKey crypto.Signer) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v1API := r.URL.Path == "/api/v1/signingCert"
		if r.Method != http.MethodPost || (!v1API && r.URL.Path != "/api/v2/signingCert") {
			http.NotFound(w, r)
			return
		}
		tok := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		parts := strings.Split(tok, ".")
		if len(parts) != 3 {
			http.Error(w, "bad token", http.StatusUnauthorized)
			return
		}
		raw, _ := base64.RawURLEncoding.DecodeString(parts[1])
		var cl struct{ Sub, Iss string }
		if err := json.Unmarshal(raw, &cl); err != nil || cl.Sub == "" || cl.Iss == "" {
			http.Error(w, "bad token claims", http.StatusUnauthorized)
			return
		}
		var keyPEM, pop string
		if v1API {
			var req struct {
				PublicKey struct {
					Content []byte `json:"content"`
				} `json:"publicKey"`
				SignedEmailAddress []byte `json:"signedEmailAddress"`
			}
			if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			keyPEM, pop = string(req.PublicKey.Content), base64.StdEncoding.EncodeToString(req.SignedEmailAddress)
			if !strings.Contains(keyPEM, "BEGIN") {
				keyPEM = string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: req.PublicKey.Content}))
			}
		} else {
			var req struct {
				PublicKeyRequest struct {
					PublicKey struct {
						Content string `json:"content"`
					} `json:"publicKey"`
					ProofOfPossession string `json:"proofOfPossession"`
				} `json:"publicKeyRequest"`
			}
			if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			keyPEM, pop = req.PublicKeyRequest.PublicKey.Content, req.PublicKeyRequest.ProofOfPossession
		}
		pub, err := cryptoutils.UnmarshalPEMToPublicKey([]byte(keyPEM))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		popSig, _ := base64.StdEncoding.DecodeString(pop)
		sum := sha256.Sum256([]byte(cl.Sub))
		if ek, ok := pub.(*ecdsa.PublicKey); !ok || !ecdsa.VerifyASN1(ek, sum[:], popSig) {
			http.Error(w, "proof of possession failed", http.StatusBadRequest)
			return
		}
		leaf, err := ca.GenerateLeafCert(cl.Sub, cl.Iss, time.Now().Add(-time.Minute), pubSigner{pub}, interCert, interKey)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		var chain []string
		for _, c := range []*x509.Certificate{leaf, interCert, rootCert} {
			p, _ := cryptoutils.MarshalCertificateToPEM(c)
			chain = append(chain, string(p))
		}
		if v1API {
			w.Header().Set("Content-Type", "application/pem-certificate-chain")
			w.WriteHeader(http.StatusCreated)
			_, _ = io.WriteString(w, strings.Join(chain, ""))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"signedCertificateEmbeddedSct": map[string]any{"chain": map[string]any{"certificates": chain}},
		})
	})
}

// withLayers is an image of exactly these layers, annotated like newImage.
func withLayers(t testing.TB, layers ...v1.Layer) v1.Image {
	t.Helper()
	img, err := mutate.AppendLayers(empty.Image, layers...)
	if err != nil {
		t.Fatal(err)
	}
	return mutate.Annotations(img, map[string]string{sign.AnnotationPoliciesDigest: testPolicies}).(v1.Image)
}
