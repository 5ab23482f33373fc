package enginetest

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestContainerfileRehearsal builds the Containerfile's OS-package, user
// and layout steps, verbatim except for two substitutions, in the real
// engine: the base is the debootstrapped trixie rootfs instead of the
// pinned debian:13.7 index (no registry here), and the archive is
// deb.debian.org instead of the snapshot.debian.org instant (unreachable
// here). It proves the package names, that Podman 5 and the ssh client
// install and run, and the sandbox user and /opt/fullsend layout. The
// download steps (Go, Node, gh, yq, OpenShell) need go.dev, nodejs.org and
// github.com and are not rehearsed; see docs/image-pins.md.
func TestContainerfileRehearsal(t *testing.T) {
	requireDocker(t)
	tarball := rootfs(t)
	data, err := os.ReadFile(containerfile)
	if err != nil {
		t.Fatal(err)
	}
	cf := string(data)
	goStep := strings.Index(cf, "# Go toolchain")
	layout := strings.Index(cf, "# The /opt/fullsend layout")
	env := strings.Index(cf, "# Run-time environment")
	if goStep < 0 || layout < goStep || env < layout {
		t.Fatal("Containerfile sections moved; update the rehearsal's markers")
	}
	text := cf[:goStep] + cf[layout:env]
	text = strings.Replace(text, "# syntax=docker/dockerfile:1.7\n", "", 1)
	base := "fullsend-enginetest/rehearsal-base:trixie"
	text = regexp.MustCompile(`(?m)^FROM .*$`).ReplaceAllString(text, "FROM "+base)
	for old, repl := range map[string]string{
		"http://snapshot.debian.org/archive/debian/%s":             "http://deb.debian.org/debian",
		"http://snapshot.debian.org/archive/debian-security/%s":    "http://deb.debian.org/debian-security",
		`"$DEBIAN_SNAPSHOT" "$DEBIAN_SNAPSHOT" "$DEBIAN_SNAPSHOT"`: "",
	} {
		if !strings.Contains(text, old) {
			t.Fatalf("Containerfile no longer contains %q; update the rehearsal", old)
		}
		text = strings.ReplaceAll(text, old, repl)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "Containerfile"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	r := cmdRunner{t: t, env: []string{"DOCKER_BUILDKIT=0"}}
	built := "fullsend-enginetest/rehearsal:trixie"
	t.Cleanup(func() { _ = exec.Command("docker", "image", "rm", "-f", built, base).Run() })
	r.run("", "docker", "import", tarball, base)
	out := r.run("", "docker", "build", "--build-arg", "TARGETARCH=amd64", "-t", built, "-f", filepath.Join(dir, "Containerfile"), dir)
	for _, want := range []string{"podman version 5.", "OpenSSH_"} {
		if !strings.Contains(out, want) {
			t.Errorf("build output lacks %q (the apt step's own checks)", want)
		}
	}
	got := r.run("", "docker", "run", "--rm", built, "sh", "-c",
		"id -u sandbox; stat -c '%U %a' /sandbox; stat -c '%U %a' /opt/fullsend/policies; for c in crun fuse-overlayfs passt slirp4netns newuidmap ssh git jq python3 gpg unzip xz; do command -v $c || echo missing-$c; done")
	if strings.Contains(got, "missing-") {
		t.Errorf("rehearsed image lacks a tool:\n%s", got)
	}
	for _, want := range []string{"1000\n", "sandbox 750", "root 755", "/usr/bin/crun", "/usr/bin/passt", "/usr/bin/newuidmap", "/usr/bin/ssh", "/usr/bin/gpg"} {
		if !strings.Contains(got, want) {
			t.Errorf("rehearsed image lacks %q:\n%s", want, got)
		}
	}
}
