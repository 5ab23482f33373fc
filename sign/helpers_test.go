package sign

import (
	"io"
	"log"
	"math/rand"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

func nopLogger() *log.Logger { return log.New(io.Discard, "", 0) }

func rngSource(seed int64) rand.Source { return rand.NewSource(seed) }

func remoteWriteIndex(ref name.Reference, idx v1.ImageIndex) error {
	return remote.WriteIndex(ref, idx)
}
