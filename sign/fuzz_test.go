package sign

import (
	"encoding/base64"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/sigstore/cosign/v2/pkg/oci/static"
)

// FuzzParseClaims: signature payloads come from the registry, i.e. from
// anyone who can push a .sig tag. Parsing must never panic, and an
// accepted payload must name exactly the digest asked for.
func FuzzParseClaims(f *testing.F) {
	h := v1.Hash{Algorithm: "sha256", Hex: strings.Repeat("a", 64)}
	f.Add([]byte(`{"critical":{"identity":{"docker-reference":"r"},"image":{"docker-manifest-digest":"sha256:` + h.Hex + `"},"type":"cosign container image signature"},"optional":{"a":"b","n":1}}`))
	f.Add([]byte(`{"critical":null}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, payload []byte) {
		sig, err := static.NewSignature(payload, "")
		if err != nil {
			return
		}
		cl, err := parseClaims(sig, h)
		if err == nil && cl.Digest != h.String() {
			t.Fatalf("accepted digest %q", cl.Digest)
		}
	})
}

// FuzzAttestationStatement: attestation layers are registry input too.
func FuzzAttestationStatement(f *testing.F) {
	st := base64.StdEncoding.EncodeToString([]byte(`{"_type":"https://in-toto.io/Statement/v1","subject":[{"name":"x","digest":{"sha256":"ab"}}],"predicateType":"p","predicate":{}}`))
	f.Add([]byte(`{"payloadType":"application/vnd.in-toto+json","payload":"` + st + `","signatures":[]}`))
	f.Add([]byte(`{"payloadType":"text/plain","payload":"!!"}`))
	f.Fuzz(func(t *testing.T, env []byte) {
		att, err := static.NewAttestation(env)
		if err != nil {
			return
		}
		_, _ = attestationStatement(att)
	})
}

// FuzzParseProvenance: provenance predicates are attacker-supplied bytes
// until their signature is checked, and parsed again afterwards.
func FuzzParseProvenance(f *testing.F) {
	f.Add([]byte(`{"buildDefinition":{"buildType":"t","resolvedDependencies":[{"uri":"git+https://x","digest":{"gitCommit":"1"}}]},"runDetails":{"builder":{"id":"b"}}}`))
	f.Add([]byte(`{"runDetails":{}}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, pred []byte) {
		p, err := ParseProvenance(pred)
		if err == nil && p.BuilderID == "" {
			t.Fatal("accepted a provenance without builder id")
		}
	})
}

// FuzzIdentity: --certificate-identity-regexp and friends are user input;
// Validate must reject every unanchored expression without panicking.
func FuzzIdentity(f *testing.F) {
	f.Add("^https://github\\.com/acme/.*$", "^https://token\\.actions\\.githubusercontent\\.com$")
	f.Add("github.com", "x$")
	f.Add("^a\\$", "^b$")
	f.Fuzz(func(t *testing.T, subj, iss string) {
		id := Identity{SubjectRegexp: subj, IssuerRegexp: iss}
		if id.Validate() == nil {
			for _, re := range []string{subj, iss} {
				if !strings.HasPrefix(re, "^") || !strings.HasSuffix(re, "$") {
					t.Fatalf("accepted unanchored %q", re)
				}
			}
		}
	})
}

// FuzzIsKMSRef: --key values; a file path must never be taken for a KMS
// URI (and so sent to a plugin).
func FuzzIsKMSRef(f *testing.F) {
	for _, s := range []string{"cosign.key", "awskms:///arn", "./a://b", "C:\\k", "hashivault://k"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, ref string) {
		if IsKMSRef(ref) {
			scheme, _, _ := strings.Cut(ref, "://")
			if strings.ContainsAny(scheme, "/\\.") || scheme == "" {
				t.Fatalf("path %q taken for a KMS URI", ref)
			}
		}
	})
}
