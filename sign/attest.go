package sign

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/sigstore/cosign/v2/pkg/oci"
	"github.com/sigstore/cosign/v2/pkg/oci/static"
	"github.com/sigstore/cosign/v2/pkg/types"
	"github.com/sigstore/sigstore/pkg/signature/dsse"
)

// In-toto and predicate type URIs.
const (
	// StatementType is the in-toto Statement v1 type.
	StatementType = "https://in-toto.io/Statement/v1"
	// PayloadType is the DSSE payload type of in-toto statements.
	PayloadType = "application/vnd.in-toto+json"
	// PredicateSLSAProvenance1 is SLSA provenance v1 (cosign --type slsaprovenance1).
	PredicateSLSAProvenance1 = "https://slsa.dev/provenance/v1"
	// PredicateSPDX is an SPDX JSON document (cosign --type spdxjson).
	PredicateSPDX = "https://spdx.dev/Document"
)

// Statement is an in-toto statement (v1; v0.1 statements parse too).
type Statement struct {
	Type          string             `json:"_type"`
	Subject       []StatementSubject `json:"subject"`
	PredicateType string             `json:"predicateType"`
	Predicate     json.RawMessage    `json:"predicate"`
}

// StatementSubject is one subject of an in-toto statement.
type StatementSubject struct {
	Name   string            `json:"name"`
	Digest map[string]string `json:"digest"`
}

// statement is the form we build; Predicate is marshalled on signing.
type statement struct {
	Type          string             `json:"_type"`
	Subject       []StatementSubject `json:"subject"`
	PredicateType string             `json:"predicateType"`
	Predicate     any                `json:"predicate"`
}

func newStatement(ref name.Digest, predicateType string, predicate any) *statement {
	h, _ := hashOf(ref)
	return &statement{
		Type: StatementType,
		Subject: []StatementSubject{{
			Name:   ref.Repository.Name(),
			Digest: map[string]string{h.Algorithm: h.Hex},
		}},
		PredicateType: predicateType,
		Predicate:     predicate,
	}
}

// attest signs st as a DSSE envelope and wraps it as a cosign attestation
// layer (the format `cosign attest` writes: DSSE media type and a
// predicateType annotation).
func (s *Signer) attest(ctx context.Context, st *statement) (oci.Signature, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(st); err != nil {
		return nil, fmt.Errorf("encoding statement: %w", err)
	}
	envelope, err := dsse.WrapSigner(s.sv, PayloadType).SignMessage(bytes.NewReader(bytes.TrimSpace(buf.Bytes())), signatureOpts(ctx)...)
	if err != nil {
		return nil, err
	}
	opts := []static.Option{
		static.WithLayerMediaType(types.DssePayloadType),
		static.WithAnnotations(map[string]string{"predicateType": st.PredicateType}),
	}
	if s.certPEM != nil {
		opts = append(opts, static.WithCertChain(s.certPEM, s.chainPEM))
	}
	if s.tlog != nil {
		e, err := s.tlog.UploadAttestation(ctx, envelope, s.publicMaterial())
		if err != nil {
			return nil, err
		}
		opts = append(opts, static.WithBundle(e.bundle()))
	}
	return static.NewAttestation(envelope, opts...)
}
