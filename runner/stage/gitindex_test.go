package stage

import (
	"strings"
	"testing"
)

// FuzzReadGitIndex: a malformed index is an error, never a panic.
func FuzzReadGitIndex(f *testing.F) {
	f.Add([]byte("DIRC\x00\x00\x00\x02\x00\x00\x00\x01"), 20)
	f.Add([]byte("DIRC\x00\x00\x00\x04\x00\x00\x00\x02"+strings.Repeat("\x00", 62)+"a\x00\x00"), 20)
	f.Fuzz(func(t *testing.T, data []byte, hashLen int) {
		if hashLen != 20 && hashLen != 32 {
			hashLen = 20
		}
		readGitIndex(data, hashLen)
	})
}
