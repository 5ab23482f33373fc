package image

import (
	"fmt"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Entrypoint returns the image entrypoint: a dispatcher inside the fullsend
// binary. `docker run IMAGE run AGENT` runs `fullsend run AGENT`; any
// argument list whose first word is not a fullsend command (a GitLab CI
// `image:` job's `sh -c ...`, `bash`, `/bin/sh`) is exec'd unchanged, so the
// entrypoint never swallows a job script. See docs/image.md.
func Entrypoint() []string { return []string{BinaryPath, "image", "entrypoint", "--"} }

// defaultPath is PATH for a base that sets none (scratch).
const defaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

const (
	defaultTitle       = "fullsend agent-sandbox"
	defaultDescription = "AI agents in NVIDIA OpenShell sandboxes, with compiled, pinned policies"
)

// annotations returns the manifest annotations (also used as labels).
func (o *Options) annotations(base *resolvedBase, proj *project) map[string]string {
	a := map[string]string{
		AnnotationCreated:        o.Created.UTC().Format(time.RFC3339),
		AnnotationTitle:          firstNonEmpty(o.Title, defaultTitle),
		AnnotationDescription:    firstNonEmpty(o.Description, defaultDescription),
		AnnotationPoliciesDigest: "sha256:" + proj.policiesDigest,
	}
	set := func(k, v string) {
		if v != "" {
			a[k] = v
		}
	}
	set(AnnotationSource, o.SourceURL)
	set(AnnotationRevision, o.Revision)
	set(AnnotationVersion, o.Version)
	set(AnnotationBaseName, firstNonEmpty(o.BaseName, base.name))
	return a
}

// indexAnnotations are the index's annotations: the shared ones, with the
// base digest of the resolved base index (each manifest carries its own
// per-platform base digest).
func indexAnnotations(shared map[string]string, base *resolvedBase) map[string]string {
	a := make(map[string]string, len(shared)+1)
	for k, v := range shared {
		a[k] = v
	}
	if base.digest != (v1.Hash{}) {
		a[AnnotationBaseDigest] = base.digest.String()
	}
	return a
}

// assemble appends the layers to one platform's base and sets config,
// labels and annotations.
func (o *Options) assemble(base v1.Image, p v1.Platform, layers []*layer, shared map[string]string, proj *project) (v1.Image, error) {
	annotations, err := o.platformAnnotations(base, shared)
	if err != nil {
		return nil, err
	}

	cf, err := base.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("reading base config: %w", err)
	}
	if want, have := proj.manifest.OpenShellVersion, cf.Config.Labels[LabelOpenShellVersion]; have != "" && want != "" && want != have {
		return nil, &OpenShellMismatchError{Policies: want, Base: have}
	}

	// Our layers go on an OCI manifest; base layers keep their media types.
	img := mutate.MediaType(base, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	history := []string{
		"fullsend image build: " + BinaryPath,
		"fullsend image build: " + InstallRoot + "/{agents,skills,templates}",
		"fullsend image build: " + InstallRoot + "/policies",
	}
	adds := make([]mutate.Addendum, len(layers))
	for i, l := range layers {
		adds[i] = mutate.Addendum{
			Layer:     l,
			MediaType: types.OCILayer,
			History:   v1.History{Created: v1.Time{Time: o.Created.UTC()}, CreatedBy: history[i]},
		}
	}
	img, err = mutate.Append(img, adds...)
	if err != nil {
		return nil, err
	}

	cf, err = img.ConfigFile()
	if err != nil {
		return nil, err
	}
	img, err = mutate.ConfigFile(img, o.platformConfig(cf, p, annotations))
	if err != nil {
		return nil, err
	}
	return mutate.Annotations(img, annotations).(v1.Image), nil
}

// platformAnnotations is the shared annotations plus, on a base other
// than scratch, the base image's digest.
func (o *Options) platformAnnotations(base v1.Image, shared map[string]string) (map[string]string, error) {
	annotations := make(map[string]string, len(shared)+1)
	for k, v := range shared {
		annotations[k] = v
	}
	if o.Base != Scratch {
		d, err := base.Digest()
		if err != nil {
			return nil, fmt.Errorf("base digest: %w", err)
		}
		annotations[AnnotationBaseDigest] = d.String()
	}
	return annotations, nil
}

// platformConfig is a copy of the config cf made fullsend's for platform
// p: creation time, platform, entrypoint without Cmd, FULLSEND_HOME and
// PATH, and the annotations as labels.
func (o *Options) platformConfig(cf *v1.ConfigFile, p v1.Platform, annotations map[string]string) *v1.ConfigFile {
	cf = cf.DeepCopy()
	cf.Created = v1.Time{Time: o.Created.UTC()}
	cf.OS, cf.Architecture, cf.Variant = p.OS, p.Architecture, p.Variant
	cf.Config.Entrypoint = Entrypoint()
	cf.Config.Cmd = nil
	cf.Config.Env = withEnv(cf.Config.Env, "FULLSEND_HOME", InstallRoot)
	cf.Config.Env = ensurePath(cf.Config.Env)
	if cf.Config.Labels == nil {
		cf.Config.Labels = map[string]string{}
	}
	for k, v := range annotations {
		cf.Config.Labels[k] = v
	}
	return cf
}

// withEnv sets key=value in env, replacing an existing entry.
func withEnv(env []string, key, value string) []string {
	out := make([]string, 0, len(env)+1)
	for _, e := range env {
		if !strings.HasPrefix(e, key+"=") {
			out = append(out, e)
		}
	}
	return append(out, key+"="+value)
}

// ensurePath keeps the base's PATH when it already finds /usr/local/bin
// (where fullsend lives), else prepends that directory.
func ensurePath(env []string) []string {
	for _, e := range env {
		if v, ok := strings.CutPrefix(e, "PATH="); ok {
			for _, dir := range strings.Split(v, ":") {
				if dir == "/usr/local/bin" {
					return env
				}
			}
			return withEnv(env, "PATH", "/usr/local/bin:"+v)
		}
	}
	return append(env, "PATH="+defaultPath)
}

func firstNonEmpty(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}
