package main

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"

	"github.com/fullsend-ai/agent-sandbox/bundle"
	"github.com/fullsend-ai/agent-sandbox/openshell"
	"github.com/fullsend-ai/agent-sandbox/runner"
)

// TestRunFromImage builds an agent-sandbox image from the example triage
// system (testdata/triage with its compiled policies, the fullsend binary,
// scratch base), extracts it, and runs the extracted `fullsend run` against
// the openshell fake with a GitHub Actions event and a GitLab CI
// environment: the binary and /opt/fullsend that ship in the image resolve
// the placeholders and apply the compiled policy.
func TestRunFromImage(t *testing.T) {
	if os.Getenv("FULLSEND_INTEGRATION") == "" {
		t.Skip("slow (builds an image); set FULLSEND_INTEGRATION=1")
	}
	bin, _ := runEnv(t)
	project, err := filepath.Abs("../../testdata/triage")
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	lay := filepath.Join(work, "layout")
	build := fullsendCmd(bin, map[string]string{"SOURCE_DATE_EPOCH": "0"}, "image", "build", "--base", "scratch",
		project, "--platform", "linux/"+runtime.GOARCH,
		"--binary", "linux/"+runtime.GOARCH+"="+filepath.Join(bin, "fullsend"),
		"--oci-layout", lay, "--version", "v0.0.0-e2e", "--no-cache")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("image build: %v\n%s", err, out)
	}
	root := filepath.Join(work, "rootfs")
	entry := extractImage(t, lay, root)
	extracted := filepath.Join(root, filepath.FromSlash(strings.TrimPrefix(entry, "/")))
	if err := os.Link(filepath.Join(bin, "openshell"), filepath.Join(work, "openshell")); err != nil {
		t.Fatal(err)
	}
	for _, ci := range []struct {
		name, issue string
		env         map[string]string
	}{
		{"github", "42", map[string]string{"GITHUB_ACTIONS": "true", "GITHUB_REPOSITORY": "acme/widgets", "GITHUB_SERVER_URL": "https://github.com"}},
		{"gitlab", "7", map[string]string{"GITLAB_CI": "true", "CI_PROJECT_NAMESPACE": "acme", "CI_PROJECT_NAME": "widgets",
			"CI_SERVER_HOST": "gitlab.example.com", "CI_MERGE_REQUEST_IID": "7"}},
	} {
		t.Run(ci.name, func(t *testing.T) {
			dir := t.TempDir()
			env := map[string]string{"OPENSHELL_FAKE_STATE": dir, "OPENSHELL_FAKE_GATEWAY": "up", "OPENSHELL_FAKE_FAIL": "exec-exit=3",
				// The verified image as the verify step hands it over.
				"FULLSEND_IMAGE": "ghcr.io/fullsend-ai/agent-sandbox@sha256:1111111111111111111111111111111111111111111111111111111111111111",
				// In CI the run needs the digest the verify step exports.
				"FULLSEND_POLICIES_DIGEST": "sha256:" + bundle.SHA256Hex(runMust(os.ReadFile(filepath.Join(root, "opt", "fullsend", "policies", "manifest.json")))),
				// The example's model provider is Vertex: project and region
				// come from the variables Claude Code reads.
				"ANTHROPIC_VERTEX_PROJECT_ID": "acme-ci", "CLOUD_ML_REGION": "us-east5"}
			for k, v := range ci.env {
				env[k] = v
			}
			if ci.name == "github" {
				ev := filepath.Join(dir, "event.json")
				os.WriteFile(ev, []byte(`{"issue":{"number":42}}`), 0o644)
				env["GITHUB_EVENT_PATH"] = ev
			}
			cmd := exec.Command(extracted, "run", "triage", filepath.Join(root, "opt", "fullsend"),
				"--prompt", "hi", "-o", "json", "--diag-dir", filepath.Join(dir, "diag"), "--set", "HOST_IP=10.0.0.9")
			cmd.Env = []string{"PATH=" + bin + ":/usr/bin:/bin", "HOME=" + dir}
			for k, v := range env {
				cmd.Env = append(cmd.Env, k+"="+v)
			}
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 3 {
				t.Fatalf("want the agent's exit 3 propagated, got %v\n%s", err, stderr.String())
			}
			var res runner.Result
			if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
				t.Fatalf("%v\n%s", err, stdout.String())
			}
			if res.Placeholders["ISSUE_NUMBER"] != ci.issue || res.Placeholders["OWNER"] != "acme" || !res.Deleted {
				t.Errorf("result %+v", res)
			}
			// The policy the sandbox got is the image's compiled policy with
			// this CI's values.
			sent, err := os.ReadFile(filepath.Join(res.DiagDir, "policy.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			p, err := openshell.Unmarshal(sent)
			if err != nil {
				t.Fatal(err)
			}
			body := string(sent)
			for _, want := range []string{"/repos/acme/widgets/issues/" + ci.issue + "/labels", "10.0.0.9/32"} {
				if !strings.Contains(body, want) {
					t.Errorf("resolved policy lacks %q:\n%s", want, body)
				}
			}
			if strings.Contains(body, "{{") || len(p.NetworkPolicies) == 0 {
				t.Errorf("policy not fully resolved:\n%s", body)
			}
		})
	}
}

// extractImage flattens the single image of an OCI layout into dir and
// returns the image's entrypoint.
func extractImage(t *testing.T, lay, dir string) string {
	t.Helper()
	idx, err := layout.ImageIndexFromPath(lay)
	if err != nil {
		t.Fatal(err)
	}
	im, err := idx.IndexManifest()
	if err != nil || len(im.Manifests) == 0 {
		t.Fatalf("layout index: %v", err)
	}
	img, err := idx.Image(im.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := img.ConfigFile()
	if err != nil || len(cfg.Config.Entrypoint) == 0 {
		t.Fatalf("image has no entrypoint: %v", err)
	}
	rc := mutate.Extract(img)
	defer rc.Close()
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		name := path.Clean(h.Name)
		if strings.HasPrefix(name, "..") || path.IsAbs(name) {
			t.Fatalf("image entry %q escapes", h.Name)
		}
		p := filepath.Join(dir, filepath.FromSlash(name))
		switch h.Typeflag {
		case tar.TypeDir:
			os.MkdirAll(p, 0o755)
		case tar.TypeReg:
			os.MkdirAll(filepath.Dir(p), 0o755)
			f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, os.FileMode(h.Mode)&0o755|0o600)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := io.Copy(f, tr); err != nil {
				t.Fatal(err)
			}
			f.Close()
		}
	}
	return cfg.Config.Entrypoint[0]
}
