package testregistry

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"golang.org/x/crypto/bcrypt"

	"github.com/fullsend-ai/agent-sandbox/internal/testtool"
)

// Binary is the registry server executable installed by the Debian package.
const Binary = "docker-registry"

// Username is the htpasswd user of an authenticated registry.
const Username = "fullsend"

// startTimeout bounds how long Start waits for the server to answer /v2/.
const startTimeout = 30 * time.Second

// Registry is a running registry server.
type Registry struct {
	// Host is "127.0.0.1:PORT", the registry part of image references.
	Host string
	// Username and Password authenticate against the registry; both are
	// empty for a plain-HTTP registry started with PlainHTTP.
	Username string
	Password string
	// CAPool holds the CA that signed the server certificate; nil for
	// plain HTTP.
	CAPool *x509.CertPool
	// CAFile is the PEM file of that CA, for CLI tools (SSL_CERT_FILE);
	// empty for plain HTTP.
	CAFile string
	// DockerConfig is a directory holding a config.json with this
	// registry's credentials, for CLI tools (DOCKER_CONFIG).
	DockerConfig string
	// Dir is the server's storage root.
	Dir string

	tls bool
}

// Option configures Start.
type Option func(*config)

type config struct {
	plainHTTP bool
}

// PlainHTTP starts the registry without TLS and without authentication.
func PlainHTTP() Option { return func(c *config) { c.plainHTTP = true } }

// Start launches a registry server for the duration of the test.
func Start(t testing.TB, opts ...Option) *Registry {
	t.Helper()
	var cfg config
	for _, o := range opts {
		o(&cfg)
	}
	bin := RequireBinary(t)

	dir := t.TempDir()
	r := &Registry{Dir: filepath.Join(dir, "storage"), tls: !cfg.plainHTTP}
	if err := os.MkdirAll(r.Dir, 0o700); err != nil {
		t.Fatalf("testregistry: %v", err)
	}
	var auth string
	if r.tls {
		if err := r.writeTLS(dir); err != nil {
			t.Fatalf("testregistry: %v", err)
		}
		pw, err := randomHex(16)
		if err != nil {
			t.Fatalf("testregistry: %v", err)
		}
		r.Username, r.Password = Username, pw
		hash, err := bcrypt.GenerateFromPassword([]byte(pw), bcrypt.MinCost)
		if err != nil {
			t.Fatalf("testregistry: hashing password: %v", err)
		}
		htpasswd := filepath.Join(dir, "htpasswd")
		if err := os.WriteFile(htpasswd, []byte(Username+":"+string(hash)+"\n"), 0o600); err != nil {
			t.Fatalf("testregistry: %v", err)
		}
		auth = fmt.Sprintf("auth:\n  htpasswd:\n    realm: fullsend-test\n    path: %s\n", htpasswd)
	}

	// A port picked by the kernel can be taken again between our probe and
	// the server's bind; retry a few times when the server exits early.
	var lastErr error
	for attempt := 0; attempt < 5; attempt++ {
		port, err := freePort()
		if err != nil {
			t.Fatalf("testregistry: %v", err)
		}
		r.Host = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		if lastErr = r.launch(t, bin, dir, auth); lastErr == nil {
			if err := r.writeDockerConfig(dir); err != nil {
				t.Fatalf("testregistry: %v", err)
			}
			return r
		}
	}
	t.Fatalf("testregistry: starting %s: %v", bin, lastErr)
	return nil
}

// RequireBinary returns the path of the registry server, skipping the test
// when it is missing (failing it under FULLSEND_INTEGRATION=1).
func RequireBinary(t testing.TB) string {
	t.Helper()
	return testtool.Find(t, Binary, ".ci/install.d/20-registry.sh")
}

func (r *Registry) launch(t testing.TB, bin, dir, auth string) error {
	t.Helper()
	var tlsCfg string
	if r.tls {
		tlsCfg = fmt.Sprintf("  tls:\n    certificate: %s\n    key: %s\n",
			filepath.Join(dir, "server.pem"), filepath.Join(dir, "server-key.pem"))
	}
	secret, err := randomHex(16)
	if err != nil {
		return err
	}
	conf := fmt.Sprintf(`version: 0.1
log:
  level: warn
  accesslog:
    disabled: true
storage:
  filesystem:
    rootdirectory: %s
  delete:
    enabled: true
  redirect:
    disable: true
http:
  addr: %s
  secret: %s
%s%s`, r.Dir, r.Host, secret, tlsCfg, auth)
	confPath := filepath.Join(dir, "config.yml")
	if err := os.WriteFile(confPath, []byte(conf), 0o600); err != nil {
		return err
	}

	var logs syncBuffer
	cmd := exec.Command(bin, "serve", confPath)
	cmd.Stdout, cmd.Stderr = &logs, &logs
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")} // no OTEL_*/REGISTRY_* leakage from the caller
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	stop := func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	}

	client := &http.Client{Transport: r.Transport(), Timeout: 2 * time.Second}
	deadline := time.Now().Add(startTimeout)
	for {
		select {
		case err := <-exited:
			return fmt.Errorf("server exited early (%v): %s", err, logs.String())
		default:
		}
		if r.ping(client) == nil {
			break
		}
		if time.Now().After(deadline) {
			stop()
			return fmt.Errorf("server not ready after %s: %s", startTimeout, logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Cleanup(func() {
		stop()
		if t.Failed() {
			t.Logf("testregistry %s log:\n%s", r.Host, logs.String())
		}
	})
	return nil
}

// ping expects the distribution API: 200 without auth, 401 with.
func (r *Registry) ping(client *http.Client) error {
	resp, err := client.Get(r.URL() + "/v2/")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusOK || (r.tls && resp.StatusCode == http.StatusUnauthorized) {
		return nil
	}
	return fmt.Errorf("GET /v2/: %s", resp.Status)
}

// URL is the registry's base URL (https://HOST or http://HOST).
func (r *Registry) URL() string {
	if r.tls {
		return "https://" + r.Host
	}
	return "http://" + r.Host
}

// Ref returns the image reference "HOST/repo" (repo may carry :tag or @digest).
func (r *Registry) Ref(repo string) string { return r.Host + "/" + repo }

// Transport returns a fresh HTTP transport that trusts the registry's CA.
func (r *Registry) Transport() *http.Transport {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if r.CAPool != nil {
		tr.TLSClientConfig = &tls.Config{RootCAs: r.CAPool, MinVersion: tls.VersionTLS12}
	}
	return tr
}

// Authenticator returns the registry's credentials (Anonymous for plain HTTP).
func (r *Registry) Authenticator() authn.Authenticator {
	if r.Username == "" {
		return authn.Anonymous
	}
	return &authn.Basic{Username: r.Username, Password: r.Password}
}

// Keychain resolves this registry's credentials and nothing else.
func (r *Registry) Keychain() authn.Keychain { return keychain{r} }

type keychain struct{ r *Registry }

func (k keychain) Resolve(res authn.Resource) (authn.Authenticator, error) {
	if res.RegistryStr() == k.r.Host {
		return k.r.Authenticator(), nil
	}
	return authn.Anonymous, nil
}

// RemoteOptions returns go-containerregistry options (transport and auth)
// for talking to this registry.
func (r *Registry) RemoteOptions(ctx context.Context) []remote.Option {
	return []remote.Option{
		remote.WithContext(ctx),
		remote.WithTransport(r.Transport()),
		remote.WithAuth(r.Authenticator()),
	}
}

// Env returns environment entries that let CLI tools (crane, cosign) reach
// the registry: SSL_CERT_FILE for the CA and DOCKER_CONFIG for credentials.
func (r *Registry) Env() []string {
	env := []string{"DOCKER_CONFIG=" + r.DockerConfig}
	if r.CAFile != "" {
		env = append(env, "SSL_CERT_FILE="+r.CAFile)
	}
	return env
}

func (r *Registry) writeDockerConfig(dir string) error {
	r.DockerConfig = filepath.Join(dir, "docker")
	if err := os.MkdirAll(r.DockerConfig, 0o700); err != nil {
		return err
	}
	auths := map[string]any{}
	if r.Username != "" {
		auths[r.Host] = map[string]string{
			"auth": base64.StdEncoding.EncodeToString([]byte(r.Username + ":" + r.Password)),
		}
	}
	data, err := json.Marshal(map[string]any{"auths": auths})
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(r.DockerConfig, "config.json"), data, 0o600)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("finding a free port: %w", err)
	}
	defer l.Close()
	addr, ok := l.Addr().(*net.TCPAddr)
	if !ok {
		return 0, errors.New("finding a free port: not a TCP address")
	}
	return addr.Port, nil
}

func randomHex(n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("reading random bytes: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// syncBuffer collects the server's log from its stdout and stderr.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.TrimSpace(b.buf.String())
}
