package testregistry_test

import (
	"context"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"

	"github.com/fullsend-ai/agent-sandbox/internal/testregistry"

	"github.com/fullsend-ai/agent-sandbox/internal/testtool"
)

func TestRegistryRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		opts []testregistry.Option
	}{
		{name: "tls+htpasswd"},
		{name: "plain-http", opts: []testregistry.Option{testregistry.PlainHTTP()}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg := testregistry.Start(t, tt.opts...)
			ctx := context.Background()
			img, err := random.Image(1024, 2)
			if err != nil {
				t.Fatal(err)
			}
			ref, err := name.ParseReference(reg.Ref("test/roundtrip:v1"))
			if err != nil {
				t.Fatal(err)
			}
			if err := remote.Write(ref, img, reg.RemoteOptions(ctx)...); err != nil {
				t.Fatalf("push: %v", err)
			}
			got, err := remote.Image(ref, reg.RemoteOptions(ctx)...)
			if err != nil {
				t.Fatalf("pull: %v", err)
			}
			want, _ := img.Digest()
			have, err := got.Digest()
			if err != nil || have != want {
				t.Fatalf("pulled digest %v (%v), pushed %v", have, err, want)
			}
		})
	}
}

func TestRegistryRequiresAuthAndTrust(t *testing.T) {
	reg := testregistry.Start(t)
	ctx := context.Background()
	ref, err := name.ParseReference(reg.Ref("test/auth:v1"))
	if err != nil {
		t.Fatal(err)
	}
	img, err := random.Image(64, 1)
	if err != nil {
		t.Fatal(err)
	}

	t.Run("anonymous push is refused", func(t *testing.T) {
		err := remote.Write(ref, img, remote.WithContext(ctx), remote.WithTransport(reg.Transport()), remote.WithAuth(authn.Anonymous))
		var terr *transport.Error
		if !errors.As(err, &terr) || terr.StatusCode != http.StatusUnauthorized {
			t.Fatalf("anonymous push: got %v, want 401", err)
		}
	})
	t.Run("wrong password is refused", func(t *testing.T) {
		err := remote.Write(ref, img, remote.WithContext(ctx), remote.WithTransport(reg.Transport()),
			remote.WithAuth(&authn.Basic{Username: reg.Username, Password: reg.Password + "x"}))
		if err == nil {
			t.Fatal("push with a wrong password succeeded")
		}
	})
	t.Run("untrusted CA is refused", func(t *testing.T) {
		err := remote.Write(ref, img, remote.WithContext(ctx), remote.WithAuth(reg.Authenticator()))
		if err == nil {
			t.Fatal("push without trusting the test CA succeeded")
		}
	})
	t.Run("keychain", func(t *testing.T) {
		err := remote.Write(ref, img, remote.WithContext(ctx), remote.WithTransport(reg.Transport()), remote.WithAuthFromKeychain(reg.Keychain()))
		if err != nil {
			t.Fatalf("push with keychain: %v", err)
		}
	})
}

// TestRegistryCLIEnv: a CLI tool (crane) reaches the TLS+htpasswd registry
// with nothing but Env(): the CA through SSL_CERT_FILE, the credentials
// through DOCKER_CONFIG.
func TestRegistryCLIEnv(t *testing.T) {
	crane := testtool.Find(t, "crane", ".ci/install.d/20-registry.sh")
	reg := testregistry.Start(t)
	img, err := random.Image(128, 1)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := name.ParseReference(reg.Ref("test/cli:v1"))
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(ref, img, reg.RemoteOptions(context.Background())...); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(crane, "digest", ref.String())
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}, reg.Env()...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("crane digest: %v\n%s", err, out)
	}
	want, _ := img.Digest()
	if got := strings.TrimSpace(string(out)); got != want.String() {
		t.Errorf("crane digest %s, want %s", got, want)
	}
}
