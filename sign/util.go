package sign

import (
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
)

func hashOf(ref name.Digest) (v1.Hash, error) { return v1.NewHash(ref.DigestStr()) }
