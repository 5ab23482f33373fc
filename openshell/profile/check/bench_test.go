package check

import (
	"testing"

	"github.com/fullsend-ai/agent-sandbox/internal/fixture"
)

func BenchmarkValidateBuiltinAWSS3(b *testing.B) {
	data := fixture.ReadFile(b, upstreamProfiles+"v0.0.111/aws-s3.yaml")
	for b.Loop() {
		File("aws-s3.yaml", data, "v0.0.111")
	}
}

func BenchmarkValidateSmall(b *testing.B) {
	data := []byte("id: x\ndisplay_name: X\nendpoints: [{host: a.example.com, port: 443, protocol: rest, access: read-only, enforcement: enforce}]\nbinaries: [/usr/bin/gh]\n")
	for b.Loop() {
		File("x.yaml", data, "v0.0.111")
	}
}
