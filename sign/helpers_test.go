package sign

import (
	"io"
	"log"
	"math/rand"
)

func nopLogger() *log.Logger { return log.New(io.Discard, "", 0) }

func rngSource(seed int64) rand.Source { return rand.NewSource(seed) }
