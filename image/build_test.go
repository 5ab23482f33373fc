package image

import (
	"archive/tar"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/fullsend-ai/agent-sandbox/bundle"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/validate"
)

var update = flag.Bool("update", false, "rewrite testdata/golden.json with the digests of this build")

var (
	amd64 = v1.Platform{OS: "linux", Architecture: "amd64"}
	arm64 = v1.Platform{OS: "linux", Architecture: "arm64"}
)

// fixedOptions are build options that depend on nothing but the repository:
// fake binaries with fixed content, scratch base, fixed timestamp.
func fixedOptions(t testing.TB, platforms ...v1.Platform) Options {
	t.Helper()
	dir := t.TempDir()
	bins := map[string]string{}
	for _, p := range platforms {
		path := filepath.Join(dir, "fullsend-"+platformSlug(p))
		if err := os.WriteFile(path, []byte("#!/bin/sh\necho fake fullsend for "+p.String()+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		bins[p.String()] = path
	}
	return Options{
		Base:        Scratch,
		Platforms:   platforms,
		Project:     os.DirFS("testdata/project"),
		ProjectName: "testdata/project",
		Binaries:    bins,
		Version:     "v1.2.3",
		Revision:    "0123456789abcdef0123456789abcdef01234567",
		SourceURL:   "https://github.com/fullsend-ai/agent-sandbox",
		Created:     time.Unix(1700000000, 0).UTC(),
		CacheDir:    t.TempDir(),
	}
}

func build(t testing.TB, o Options) *Result {
	t.Helper()
	res, err := Build(context.Background(), o)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	return res
}

// TestBuildGoldenDigest pins the exact digests: any nondeterminism (entry
// order, timestamps, modes, compression, config) changes them. Each build
// runs twice, with a cold and then a warm layer cache, and once more with no
// cache at all: all three must agree.
func TestBuildGoldenDigest(t *testing.T) {
	goldenPath := filepath.Join("testdata", "golden.json")
	golden := map[string]string{}
	if data, err := os.ReadFile(goldenPath); err == nil {
		if err := json.Unmarshal(data, &golden); err != nil {
			t.Fatalf("%s: %v", goldenPath, err)
		}
	}
	tests := []struct {
		name      string
		platforms []v1.Platform
	}{
		{"single", []v1.Platform{amd64}},
		{"multi", []v1.Platform{amd64, arm64}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := fixedOptions(t, tt.platforms...)
			cold := build(t, o)
			warm := build(t, o)
			o.CacheDir = ""
			uncached := build(t, o)
			if cold.Digest != warm.Digest || cold.Digest != uncached.Digest {
				t.Fatalf("digests differ: cold %s, warm %s, uncached %s", cold.Digest, warm.Digest, uncached.Digest)
			}
			if cold.Index != nil {
				if err := validate.Index(cold.Index); err != nil {
					t.Fatalf("validate.Index: %v", err)
				}
			} else if err := validate.Image(cold.Image); err != nil {
				t.Fatalf("validate.Image: %v", err)
			}
			if *update {
				golden[tt.name] = cold.Digest.String()
				return
			}
			if want := golden[tt.name]; cold.Digest.String() != want {
				t.Errorf("digest %s, golden %s (run go test ./image -run Golden -update after an intended change)", cold.Digest, want)
			}
		})
	}
	if *update {
		data, _ := json.MarshalIndent(golden, "", "  ")
		if err := os.WriteFile(goldenPath, append(data, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestBuildContent(t *testing.T) {
	o := fixedOptions(t, amd64, arm64)
	res := build(t, o)
	if res.Index == nil || len(res.PlatformDigest) != 2 {
		t.Fatalf("want an index of 2 images, got %+v", res)
	}
	manifestBytes, err := os.ReadFile("testdata/project/policies/manifest.json")
	if err != nil {
		t.Fatal(err)
	}
	wantPolicies := "sha256:" + bundle.SHA256Hex(manifestBytes)

	im, err := res.Index.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if got := im.Annotations[AnnotationPoliciesDigest]; got != wantPolicies {
		t.Errorf("index policies annotation %q, want %q", got, wantPolicies)
	}
	for i, d := range im.Manifests {
		if d.Platform == nil || d.Platform.String() != o.Platforms[i].String() {
			t.Errorf("index entry %d platform %v, want %v", i, d.Platform, o.Platforms[i])
		}
		img, err := res.Index.Image(d.Digest)
		if err != nil {
			t.Fatal(err)
		}
		m, err := img.Manifest()
		if err != nil {
			t.Fatal(err)
		}
		wantAnn := map[string]string{
			AnnotationCreated:        "2023-11-14T22:13:20Z",
			AnnotationVersion:        "v1.2.3",
			AnnotationRevision:       o.Revision,
			AnnotationSource:         o.SourceURL,
			AnnotationTitle:          defaultTitle,
			AnnotationDescription:    defaultDescription,
			AnnotationPoliciesDigest: wantPolicies,
		}
		for k, v := range wantAnn {
			if m.Annotations[k] != v {
				t.Errorf("%s: annotation %s = %q, want %q", d.Platform, k, m.Annotations[k], v)
			}
		}
		if _, ok := m.Annotations[AnnotationBaseDigest]; ok {
			t.Errorf("scratch build carries a base digest annotation")
		}
		cf, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		if cf.Architecture != o.Platforms[i].Architecture || cf.OS != "linux" {
			t.Errorf("config platform %s/%s", cf.OS, cf.Architecture)
		}
		if strings.Join(cf.Config.Entrypoint, " ") != strings.Join(Entrypoint(), " ") || len(cf.Config.Cmd) != 0 {
			t.Errorf("entrypoint %q cmd %q", cf.Config.Entrypoint, cf.Config.Cmd)
		}
		if cf.Config.Labels[AnnotationPoliciesDigest] != wantPolicies {
			t.Errorf("label %s missing", AnnotationPoliciesDigest)
		}
		if !cf.Created.Equal(o.Created) {
			t.Errorf("config created %v, want %v", cf.Created, o.Created)
		}
		files := extract(t, img)
		if got := files[BinaryPath]; !strings.Contains(got.data, "fake fullsend for "+o.Platforms[i].String()) || got.mode != 0o755 {
			t.Errorf("%s: binary %+v", BinaryPath, got)
		}
		for _, p := range []string{
			"/opt/fullsend/agents/triage.md",
			"/opt/fullsend/skills/triage-issue/SKILL.md",
			"/opt/fullsend/templates/README.md",
			"/opt/fullsend/policies/triage.yaml",
			"/opt/fullsend/policies/manifest.json",
		} {
			f, ok := files[p]
			if !ok {
				t.Errorf("%s missing from the image", p)
				continue
			}
			if f.mode != 0o644 || f.uid != 0 || f.gid != 0 || f.uname != "" || !f.mtime.Equal(o.Created) {
				t.Errorf("%s: header %+v", p, f)
			}
		}
		if files["/opt/fullsend/policies/manifest.json"].data != string(manifestBytes) {
			t.Errorf("manifest.json in the image differs from the project's")
		}
	}
}

type extracted struct {
	data     string
	mode     int64
	uid, gid int
	uname    string
	mtime    time.Time
	typeflag byte
}

// extract flattens the image filesystem, keyed by absolute path.
func extract(t testing.TB, img v1.Image) map[string]extracted {
	t.Helper()
	rc := mutate.Extract(img)
	defer rc.Close()
	out := map[string]extracted{}
	tr := tar.NewReader(rc)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		out["/"+strings.TrimSuffix(hdr.Name, "/")] = extracted{
			data: string(data), mode: hdr.Mode, uid: hdr.Uid, gid: hdr.Gid,
			uname: hdr.Uname + hdr.Gname, mtime: hdr.ModTime, typeflag: hdr.Typeflag,
		}
	}
}

func TestBuildRefusesBadProjects(t *testing.T) {
	base, err := fs.Sub(os.DirFS("testdata"), "project")
	if err != nil {
		t.Fatal(err)
	}
	read := func(p string) []byte {
		data, err := fs.ReadFile(base, p)
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	project := func(edit func(fstest.MapFS)) fs.FS {
		m := fstest.MapFS{}
		for _, p := range []string{"agents/triage.md", "skills/triage-issue/SKILL.md", "policies/triage.yaml", "policies/manifest.json", "templates/README.md"} {
			m[p] = &fstest.MapFile{Data: read(p), Mode: 0o644}
		}
		edit(m)
		return m
	}
	tests := []struct {
		name    string
		fsys    fs.FS
		wantErr error
		wantMsg string
	}{
		{"policy tampered", project(func(m fstest.MapFS) {
			m["policies/triage.yaml"].Data = append(read("policies/triage.yaml"), "# x\n"...)
		}), ErrStalePolicies, "triage.yaml"},
		{"source changed", project(func(m fstest.MapFS) { m["agents/triage.md"].Data = []byte("changed") }), ErrStalePolicies, "agents/triage.md"},
		{"skill source missing", project(func(m fstest.MapFS) { delete(m, "skills/triage-issue/SKILL.md") }), ErrStalePolicies, "SKILL.md"},
		{"manifest missing", project(func(m fstest.MapFS) { delete(m, "policies/manifest.json") }), fs.ErrNotExist, "policy compile"},
		{"manifest unknown field", project(func(m fstest.MapFS) {
			m["policies/manifest.json"].Data = []byte(`{"schema":"https://fullsend.dev/schemas/policy-manifest/v1","extra":1}`)
		}), nil, "unknown field"},
		{"symlink in project", project(func(m fstest.MapFS) {
			m["templates/link"] = &fstest.MapFile{Data: []byte("/etc/passwd"), Mode: fs.ModeSymlink | 0o777}
		}), nil, "symbolic link"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := fixedOptions(t, amd64)
			o.Project = tt.fsys
			_, err := Build(context.Background(), o)
			if err == nil {
				t.Fatal("Build succeeded")
			}
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Errorf("error %v, want %v", err, tt.wantErr)
			}
			if !strings.Contains(err.Error(), tt.wantMsg) {
				t.Errorf("error %q does not mention %q", err, tt.wantMsg)
			}
		})
	}
}

func TestBuildOptionErrors(t *testing.T) {
	tests := []struct {
		name string
		edit func(*Options)
		want string
	}{
		{"no platforms", func(o *Options) { o.Platforms = nil }, "no platforms"},
		{"not linux", func(o *Options) { o.Platforms = []v1.Platform{{OS: "windows", Architecture: "amd64"}} }, "want linux"},
		{"no base", func(o *Options) { o.Base = "" }, "no base image"},
		{"missing binary and no source", func(o *Options) { o.Binaries = nil }, "no fullsend binary"},
		{"unreadable binary", func(o *Options) { o.Binaries = map[string]string{"linux/amd64": "/nonexistent/fullsend"} }, "binary for linux/amd64"},
		{"missing base path", func(o *Options) { o.Base = "./does-not-exist/" }, "no such file"},
		{"bad base reference", func(o *Options) { o.Base = "UPPER CASE" }, "neither scratch"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := fixedOptions(t, amd64)
			tt.edit(&o)
			_, err := Build(context.Background(), o)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want it to mention %q", err, tt.want)
			}
		})
	}
}

func TestParsePlatforms(t *testing.T) {
	tests := []struct {
		in      []string
		want    string
		wantErr bool
	}{
		{in: []string{"linux/arm64", "linux/amd64"}, want: "linux/amd64,linux/arm64"},
		{in: []string{"linux/arm/v7"}, want: "linux/arm/v7"},
		{in: []string{"linux/amd64", "linux/amd64"}, wantErr: true},
		{in: []string{"darwin/arm64"}, wantErr: true},
		{in: []string{"linux"}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.in, ","), func(t *testing.T) {
			ps, err := ParsePlatforms(tt.in)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err %v, wantErr %v", err, tt.wantErr)
			}
			if err != nil {
				return
			}
			var got []string
			for _, p := range ps {
				got = append(got, p.String())
			}
			if strings.Join(got, ",") != tt.want {
				t.Errorf("got %v, want %s", got, tt.want)
			}
		})
	}
}
