package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/spf13/cobra"

	"github.com/fullsend-ai/agent-sandbox/image"
)

func TestEntrypointTarget(t *testing.T) {
	root := &cobra.Command{Use: "fullsend"}
	root.AddCommand(&cobra.Command{Use: "run", Run: func(*cobra.Command, []string) {}})
	root.AddCommand(&cobra.Command{Use: "version", Run: func(*cobra.Command, []string) {}})
	lookPath := func(file string) (string, error) {
		switch file {
		case "sh":
			return "/bin/sh", nil
		case "/bin/bash":
			return "/bin/bash", nil
		}
		return "", errors.New("not found")
	}
	const self = "/usr/local/bin/fullsend"
	tests := []struct {
		name     string
		args     []string
		wantPath string
		wantArgv []string
		wantErr  error
	}{
		{"no args: fullsend help", nil, self, []string{"fullsend"}, nil},
		{"separator only", []string{"--"}, self, []string{"fullsend"}, nil},
		{"docker run IMAGE run AGENT", []string{"--", "run", "triage"}, self, []string{"fullsend", "run", "triage"}, nil},
		{"flag goes to fullsend", []string{"--", "--help"}, self, []string{"fullsend", "--help"}, nil},
		{"gitlab job shell", []string{"--", "sh", "-c", "echo hi"}, "/bin/sh", []string{"sh", "-c", "echo hi"}, nil},
		{"absolute command", []string{"/bin/bash", "-l"}, "/bin/bash", []string{"/bin/bash", "-l"}, nil},
		{"unknown", []string{"--", "nosuch"}, "", nil, errNotACommand},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path, argv, err := entrypointTarget(root, self, tt.args, lookPath)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("error %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if path != tt.wantPath || strings.Join(argv, "\x00") != strings.Join(tt.wantArgv, "\x00") {
				t.Errorf("got %s %q, want %s %q", path, argv, tt.wantPath, tt.wantArgv)
			}
		})
	}
}

// runFullsend runs the command tree in-process.
func runFullsend(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	root := newRootCmd()
	root.SetArgs(args)
	root.SetOut(&stdout)
	root.SetErr(&stderr)
	err := root.ExecuteContext(context.Background())
	return stdout.String(), stderr.String(), err
}

// imageCLIArgs are the flags that reproduce image's golden single-platform
// build (see image/build_test.go fixedOptions).
func imageCLIArgs(t *testing.T) []string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "fullsend")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\necho fake fullsend for linux/amd64\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SOURCE_DATE_EPOCH", "1700000000")
	return []string{"image", "build", "--base", "scratch", "--platform", "linux/amd64",
		"--binary", "linux/amd64=" + bin, "../../image/testdata/project",
		"--version", "v1.2.3", "--revision", "0123456789abcdef0123456789abcdef01234567",
		"--source-url", "https://github.com/fullsend-ai/agent-sandbox", "--cache-dir", t.TempDir()}
}

func TestImageBuildCLI(t *testing.T) {
	golden := map[string]string{}
	data, err := os.ReadFile("../../image/testdata/golden.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &golden); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	layoutDir, digestFile, tarFile := filepath.Join(out, "layout"), filepath.Join(out, "digest"), filepath.Join(out, "image.tar")
	stdout, stderr, err := runFullsend(t, append(imageCLIArgs(t), "--oci-layout", layoutDir, "--tarball", tarFile, "--digest-file", digestFile, "-o", "json")...)
	if err != nil {
		t.Fatalf("image build: %v\n%s", err, stderr)
	}
	var rep imageBuildReport
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("json output: %v\n%s", err, stdout)
	}
	if rep.Digest != golden["single"] {
		t.Errorf("CLI digest %s, library golden %s", rep.Digest, golden["single"])
	}
	if !strings.HasPrefix(rep.PoliciesDigest, "sha256:") || rep.Base.Kind != image.BaseScratch || len(rep.Platforms) != 1 {
		t.Errorf("report %+v", rep)
	}
	if got, _ := os.ReadFile(digestFile); strings.TrimSpace(string(got)) != rep.Digest {
		t.Errorf("digest file %q, want %s", got, rep.Digest)
	}
	idx, err := layout.ImageIndexFromPath(layoutDir)
	if err != nil {
		t.Fatal(err)
	}
	if im, _ := idx.IndexManifest(); len(im.Manifests) != 1 || im.Manifests[0].Digest.String() != rep.Digest {
		t.Errorf("layout holds %+v", im)
	}
	if _, err := os.Stat(tarFile); err != nil {
		t.Error(err)
	}
	if !strings.Contains(stderr, "timestamps: 2023-11-14T22:13:20Z (SOURCE_DATE_EPOCH)") {
		t.Errorf("stderr does not report the timestamp source:\n%s", stderr)
	}
}

func TestImageBuildCLIPush(t *testing.T) {
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	host := strings.TrimPrefix(srv.URL, "http://")
	args := imageCLIArgs(t)

	t.Run("latest refused", func(t *testing.T) {
		_, _, err := runFullsend(t, append(args, "--tag", host+"/acme/agents:latest", "--push")...)
		if !errors.Is(err, image.ErrLatestTag) {
			t.Fatalf("error %v, want ErrLatestTag", err)
		}
	})
	t.Run("push without tag is a usage error", func(t *testing.T) {
		_, _, err := runFullsend(t, append(args, "--push")...)
		if exitCode(err) != 2 {
			t.Fatalf("exit code %d (%v), want 2", exitCode(err), err)
		}
	})
	t.Run("push", func(t *testing.T) {
		stdout, stderr, err := runFullsend(t, append(args, "--tag", host+"/acme/agents:v1.2.3", "--push", "-o", "json")...)
		if err != nil {
			t.Fatalf("%v\n%s", err, stderr)
		}
		var rep imageBuildReport
		if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
			t.Fatal(err)
		}
		want := host + "/acme/agents@" + rep.Digest
		if len(rep.Refs) != 1 || rep.Refs[0] != want {
			t.Errorf("refs %v, want [%s]", rep.Refs, want)
		}
		wantTags := []string{host + "/acme/agents:v1.2.3", host + "/acme/agents:sha-0123456789ab"}
		if strings.Join(rep.Tags, " ") != strings.Join(wantTags, " ") {
			t.Errorf("tags %v, want %v", rep.Tags, wantTags)
		}
		for _, tag := range wantTags {
			ref, err := name.ParseReference(tag)
			if err != nil {
				t.Fatal(err)
			}
			desc, err := remote.Head(ref)
			if err != nil || desc.Digest.String() != rep.Digest {
				t.Errorf("%s: %v %v", tag, desc, err)
			}
		}
	})
}

// TestImageBuildNeedsAnOutput: without --push, --oci-layout or --tarball a
// build used to print a digest and exit 0 having written nothing (and
// dropping --tag); it is a usage error naming the three.
func TestImageBuildNeedsAnOutput(t *testing.T) {
	for _, extra := range [][]string{nil, {"--tag", "registry.example/acme/agents:v1"}} {
		stdout, _, err := runFullsend(t, append(imageCLIArgs(t), extra...)...)
		if exitCode(err) != 2 || stdout != "" {
			t.Fatalf("%v: exit %d (%v), stdout %q; want a usage error", extra, exitCode(err), err, stdout)
		}
		for _, flag := range []string{"--push", "--oci-layout", "--tarball"} {
			if !strings.Contains(err.Error(), flag) {
				t.Errorf("error %q does not name %s", err, flag)
			}
		}
	}
}
