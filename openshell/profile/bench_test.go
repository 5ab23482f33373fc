package profile

import (
	"os"
	"testing"
)

func BenchmarkValidateBuiltinAWSS3(b *testing.B) {
	data, err := os.ReadFile("builtin/v0.0.111/aws-s3.yaml")
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		Validate("aws-s3.yaml", data, "v0.0.111")
	}
}
