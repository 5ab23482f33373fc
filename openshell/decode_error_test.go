package openshell

import (
	"errors"
	"strings"
	"testing"
)

// TestDecodeErrorNamesNoGoType: a strict decoding error names the policy
// section and prints on one line, never openshell.Endpoint.
func TestDecodeErrorNamesNoGoType(t *testing.T) {
	src := "version: 1\nnetwork_policies:\n  a:\n    name: a\n    endpoints:\n      - host: x.com\n        port: 443\n        prot: rest\n    binaries: [{path: /usr/bin/curl}]\nfilesystem_policy: {include_workdir: [x]}\n"
	_, err := Unmarshal([]byte(src))
	if err == nil {
		t.Fatal("decoded")
	}
	got := DecodeError(err)
	msg := got.Error()
	if strings.Contains(msg, "openshell.") || strings.Contains(msg, "\n") {
		t.Errorf("%q names a Go type or spans lines", msg)
	}
	if !strings.Contains(msg, "line 8: unknown field prot in an endpoint") {
		t.Errorf("%q does not name the field and its section", msg)
	}
	if !errors.Is(got, err) {
		t.Error("the decoder's error is lost")
	}
	if DecodeError(nil) != nil {
		t.Error("nil")
	}
}
