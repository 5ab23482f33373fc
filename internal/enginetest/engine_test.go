package enginetest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/fullsend-ai/agent-sandbox/image"
	"github.com/fullsend-ai/agent-sandbox/internal/testregistry"
	"github.com/fullsend-ai/agent-sandbox/internal/testtool"
	"github.com/fullsend-ai/agent-sandbox/runner"
)

// engineInstall is the CI step that checks the engine and caches the
// debootstrapped root filesystem.
const engineInstall = ".ci/install.d/85-engine.sh"

var digestRe = regexp.MustCompile(`sha256:[0-9a-f]{64}`)

// requireDocker skips (or, under FULLSEND_INTEGRATION=1, fails) unless a
// Docker Engine answers.
func requireDocker(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("engine tests are slow; skipped with -short")
	}
	testtool.Find(t, "docker", engineInstall)
	if out, err := exec.Command("docker", "info", "--format", "{{.ServerVersion}}").CombinedOutput(); err != nil {
		if testtool.Required() {
			t.Fatalf("the Docker Engine is not up (docker info: %v): %s\nstart it and rerun; %s checks it in CI", err, out, engineInstall)
		}
		t.Skipf("no Docker Engine answers (docker info: %v); set FULLSEND_INTEGRATION=1 to require it", err)
	}
}

type cmdRunner struct {
	t   *testing.T
	env []string
}

// run runs a command, fails the test with its output on error, and returns
// the combined output.
func (r cmdRunner) run(stdin string, name string, args ...string) string {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), r.env...)
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	r.t.Logf("$ %s %s  (%s)", name, strings.Join(args, " "), time.Since(start).Round(time.Millisecond))
	if err != nil {
		r.t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out.String())
	}
	return out.String()
}

// rootfs returns the cached debootstrapped trixie tarball, building it
// (about a minute and a half) when missing.
func rootfs(t *testing.T) string {
	t.Helper()
	cmd := exec.Command("bash", engineInstall, "--rootfs")
	cmd.Dir = "../.."
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		if testtool.Required() {
			t.Fatalf("%s --rootfs: %v\n%s", engineInstall, err, stderr.String())
		}
		t.Skipf("no Debian root filesystem (%s --rootfs: %v): %s", engineInstall, err, stderr.String())
	}
	return strings.TrimSpace(string(out))
}

// TestEngine builds the agent-sandbox image on a base made from Debian
// packages, pushes it to a loopback registry, verifies it, pulls it by
// digest and runs it as GitLab's Docker executor and a GitHub Actions
// container job do, then starts Podman nested in a privileged container of
// it (fullsend ADR 0036's job-container design).
func TestEngine(t *testing.T) {
	requireDocker(t)
	tarball := rootfs(t)
	reg := testregistry.Start(t, testregistry.PlainHTTP())
	tmp := t.TempDir()
	r := cmdRunner{t: t, env: append(reg.Env(), "DOCKER_CONFIG="+filepath.Join(tmp, "docker"))}
	// docker reaches the registry on 127.0.0.1 over plain HTTP: the engine
	// treats 127.0.0.0/8 as an insecure registry by default.
	base := reg.Host + "/fullsend/agent-sandbox-base:trixie"
	repo := reg.Host + "/fullsend/agent-sandbox"
	t.Cleanup(func() {
		out, _ := exec.Command("docker", "image", "ls", "-q", "--filter", "reference="+reg.Host+"/*/*").Output()
		ids := strings.Fields(string(out))
		if len(ids) > 0 {
			_ = exec.Command("docker", append([]string{"image", "rm", "-f"}, ids...)...).Run()
		}
	})

	var baseDigest, imageDigest, policiesDigest, ref string
	t.Run("base from debootstrap via docker import, pushed", func(t *testing.T) {
		r := cmdRunner{t: t, env: r.env}
		r.run("", "docker", "import",
			"--change", "LABEL "+image.LabelOpenShellVersion+"="+image.DefaultOpenShellVersion,
			"--change", "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
			"--change", `CMD ["bash"]`,
			tarball, base)
		out := r.run("", "docker", "push", base)
		baseDigest = digestRe.FindString(out)
		if baseDigest == "" {
			t.Fatalf("docker push printed no digest:\n%s", out)
		}
	})
	if baseDigest == "" {
		t.FailNow()
	}

	t.Run("fullsend image build --push --sign, fullsend verify", func(t *testing.T) {
		r := cmdRunner{t: t, env: append(r.env, "COSIGN_PASSWORD=enginetest-"+hex.EncodeToString([]byte(t.Name()))[:16])}
		fs := filepath.Join(tmp, "fullsend")
		r.run("", "go", "build", "-trimpath", "-o", fs, "../../cmd/fullsend")
		proj := filepath.Join(tmp, "project")
		if err := os.CopyFS(proj, os.DirFS("../../testdata/triage")); err != nil {
			t.Fatal(err)
		}
		r.run("", fs, "image", "keygen", "--output-prefix", filepath.Join(tmp, "cosign"))
		digestFile := filepath.Join(tmp, "digest.txt")
		r.run("", fs, "image", "build", "--dir", proj, "--base", base+"@"+baseDigest,
			"--source", "../..", "--tag", repo+":enginetest", "--push", "--sign", "--key", filepath.Join(tmp, "cosign.key"),
			"--builder-id", "https://fullsend.dev/enginetest", "--digest-file", digestFile)
		data, err := os.ReadFile(digestFile)
		if err != nil {
			t.Fatal(err)
		}
		imageDigest = digestRe.FindString(string(data))
		if imageDigest == "" {
			t.Fatalf("digest file holds no digest: %q", data)
		}
		manifest, err := os.ReadFile(filepath.Join(proj, "policies", "manifest.json"))
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(manifest)
		policiesDigest = "sha256:" + hex.EncodeToString(sum[:])
		ref = repo + "@" + imageDigest
		out := r.run("", fs, "verify", "--key", filepath.Join(tmp, "cosign.pub"), "--policies-digest", policiesDigest,
			"--require-provenance", "--require-sbom", "--require-digest", "--github-output=false", ref)
		t.Logf("verify: %s", strings.TrimSpace(out))
	})
	if ref == "" {
		t.FailNow()
	}

	t.Run("docker pull by digest", func(t *testing.T) {
		r := cmdRunner{t: t, env: r.env}
		r.run("", "docker", "pull", ref)
		got := r.run("", "docker", "image", "inspect", "--format", "{{json .RepoDigests}} {{json .Config.Entrypoint}}", ref)
		if !strings.Contains(got, imageDigest) || !strings.Contains(got, `"image","entrypoint"`) {
			t.Errorf("pulled image: %s; want digest %s and the fullsend entrypoint dispatcher", got, imageDigest)
		}
	})

	// GitLab's Docker executor keeps the image's entrypoint, gives it a
	// shell-detection `sh -c` command and writes the job script to the
	// shell's stdin.
	t.Run("GitLab Docker executor: entrypoint + sh -c + script on stdin", func(t *testing.T) {
		r := cmdRunner{t: t, env: r.env}
		detect := `if [ -x /usr/local/bin/bash ]; then exec /usr/local/bin/bash; elif [ -x /usr/bin/bash ]; then exec /usr/bin/bash; elif [ -x /bin/bash ]; then exec /bin/bash; else exec sh; fi`
		script := "set -eo pipefail\nfullsend version\ntest -r /opt/fullsend/policies/manifest.json\ncommand -v podman ssh\necho gitlab-job-script-ran\n"
		out := r.run(script, "docker", "run", "--rm", "-i", ref, "sh", "-c", detect)
		if !strings.Contains(out, "gitlab-job-script-ran") {
			t.Errorf("job script did not run to the end:\n%s", out)
		}
	})

	// `image: {entrypoint: [""]}` or --entrypoint sh: the script without
	// the dispatcher.
	t.Run("GitLab entrypoint override: --entrypoint sh IMAGE -c", func(t *testing.T) {
		r := cmdRunner{t: t, env: r.env}
		out := r.run("", "docker", "run", "--rm", "--entrypoint", "sh", ref, "-c", "fullsend version && ls /opt/fullsend/agents && echo override-ran")
		if !strings.Contains(out, "override-ran") {
			t.Errorf("sh -c did not run:\n%s", out)
		}
	})

	// A GitHub Actions container job: the runner creates the container
	// with `tail -f /dev/null` as entrypoint, a bind-mounted workspace and
	// workdir, starts it and docker-execs each step's shell.
	t.Run("GitHub Actions container job: create, start, exec steps", func(t *testing.T) {
		r := cmdRunner{t: t, env: r.env}
		ws := t.TempDir()
		name := "fullsend-enginetest-" + hex.EncodeToString([]byte(time.Now().Format("150405.000")))[:12]
		r.run("", "docker", "create", "--name", name, "--workdir", "/__w/repo", "-v", ws+":/__w/repo",
			"-e", "GITHUB_ACTIONS=true", "-e", "CI=true", "--entrypoint", "tail", ref, "-f", "/dev/null")
		t.Cleanup(func() { _ = exec.Command("docker", "rm", "-f", name).Run() })
		r.run("", "docker", "start", name)
		out := r.run("", "docker", "exec", name, "sh", "-e", "-c", "fullsend version; pwd; touch step-output; echo github-step-ran")
		if !strings.Contains(out, "github-step-ran") || !strings.Contains(out, "/__w/repo") {
			t.Errorf("step did not run in the workspace:\n%s", out)
		}
		if _, err := os.Stat(filepath.Join(ws, "step-output")); err != nil {
			t.Errorf("step's file did not reach the bind-mounted workspace: %v", err)
		}
	})

	// ADR 0036: the job container runs the gateway's compute driver.
	// Podman starts nested in a privileged container of the image and runs
	// a locally imported one-binary image; nothing is pulled. Where the
	// engine itself lacks a capability (--privileged then fails with
	// "unable to apply caps", as on this CI host, which has no
	// CAP_SYS_RESOURCE), the container gets every capability the engine
	// has, no seccomp/AppArmor confinement, unmasked /proc and /sys, and
	// /dev/fuse instead. The host's cgroups are v1 (hybrid), which crun
	// cannot delegate to a nested runtime, so the nested container runs
	// with --cgroups disabled there.
	t.Run("nested Podman in a privileged container", func(t *testing.T) {
		r := cmdRunner{t: t, env: r.env}
		script := `set -eu
export PODMAN_IGNORE_CGROUPSV1_WARNING=1
p="podman --storage-driver vfs --cgroup-manager cgroupfs --events-backend file"
cg=
[ -f /sys/fs/cgroup/cgroup.controllers ] || cg="--cgroups disabled"
podman --version
ssh -V 2>&1
$p info --format 'runtime={{.Host.OCIRuntime.Name}} graph={{.Store.GraphDriverName}} cgroups={{.Host.CgroupsVersion}}'
mkdir -p /tmp/tiny
cp "$(command -v busybox)" /tmp/tiny/sh
tar -C /tmp/tiny -cf - . | $p import --change 'CMD ["/sh"]' - localhost/tiny:1 >/dev/null
$p run --rm --network none $cg localhost/tiny:1 /sh -c 'echo nested-podman-ran pid=$$'
$p images --format '{{.Repository}}:{{.Tag}}'
`
		out := privileged(r, nil, ref, script)
		t.Logf("nested:\n%s", out)
		// pid=1: the busybox shell is PID 1 of its own PID namespace, so
		// the nested runtime really created the container.
		for _, want := range []string{"podman version 5.", "runtime=crun", "nested-podman-ran pid=1", "localhost/tiny:1"} {
			if !strings.Contains(string(out), want) {
				t.Errorf("nested podman output lacks %q:\n%s", want, out)
			}
		}
	})

	// The contract fake stands in for OpenShell only: the real image, in
	// the real engine, privileged as ADR 0036 runs the job container, with
	// its real Podman answering, runs its own `fullsend run` against
	// testdata/openshell-fake mounted as `openshell`, once with a GitHub
	// Actions environment and once with a GitLab CI one. The fake's
	// `sandbox exec` exits 3, which the run must propagate after deleting
	// the sandbox.
	t.Run("fullsend run in the container, OpenShell faked", func(t *testing.T) {
		r := cmdRunner{t: t, env: r.env}
		fake := filepath.Join(tmp, "openshell")
		r.run("", "go", "build", "-trimpath", "-o", fake, "../../testdata/openshell-fake")
		for _, ci := range []struct {
			name, issue string
			env         []string
		}{
			{"github", "42", []string{"GITHUB_ACTIONS=true", "CI=true", "GITHUB_REPOSITORY=acme/widgets", "GITHUB_SERVER_URL=https://github.com",
				"GITHUB_EVENT_PATH=/work/event.json", "GITHUB_WORKSPACE=/work"}},
			{"gitlab", "7", []string{"GITLAB_CI=true", "CI=true", "CI_PROJECT_NAMESPACE=acme", "CI_PROJECT_NAME=widgets",
				"CI_SERVER_HOST=gitlab.example.com", "CI_MERGE_REQUEST_IID=7", "CI_PROJECT_DIR=/work"}},
		} {
			t.Run(ci.name, func(t *testing.T) {
				ws := t.TempDir()
				if err := os.WriteFile(filepath.Join(ws, "event.json"), []byte(`{"issue":{"number":42}}`), 0o644); err != nil {
					t.Fatal(err)
				}
				flags := []string{"-v", fake + ":/usr/local/bin/openshell:ro", "-v", ws + ":/work", "-w", "/work",
					"-e", "OPENSHELL_FAKE_STATE=/tmp/openshell-fake", "-e", "OPENSHELL_FAKE_GATEWAY=up",
					"-e", "OPENSHELL_FAKE_FAIL=exec-exit=3", "-e", "FULLSEND_POLICIES_DIGEST=" + policiesDigest,
					// The verified image by digest, as `fullsend verify` hands
					// it on: the sandbox is created --from it.
					"-e", "FULLSEND_IMAGE=" + ref,
					// The example's model provider is Vertex: the project and
					// region come from the variables Claude Code reads.
					"-e", "ANTHROPIC_VERTEX_PROJECT_ID=acme-ci", "-e", "CLOUD_ML_REGION=us-east5"}
				for _, e := range ci.env {
					flags = append(flags, "-e", e)
				}
				script := `set -u
export PODMAN_IGNORE_CGROUPSV1_WARNING=1
podman --storage-driver vfs --cgroup-manager cgroupfs --events-backend file info --format 'driver-runtime={{.Host.OCIRuntime.Name}}'
mkdir -p /tmp/openshell-fake
fullsend run triage --prompt hi -o json --result /work/result.json --diag-dir /work/diag --set HOST_IP=10.0.0.9 >/work/stdout.json
echo "run-exit=$?"
`
				out := privileged(r, flags, ref, script)
				if !strings.Contains(out, "driver-runtime=crun") || !strings.Contains(out, "run-exit=3") {
					t.Fatalf("want the real podman to answer and the agent's exit 3 propagated:\n%s", out)
				}
				res, err := os.ReadFile(filepath.Join(ws, "result.json"))
				if err != nil {
					t.Fatalf("no result file: %v\n%s", err, out)
				}
				var got runner.Result
				if err := json.Unmarshal(res, &got); err != nil {
					t.Fatalf("result.json: %v\n%s", err, res)
				}
				if got.Placeholders["ISSUE_NUMBER"] != ci.issue || got.Placeholders["OWNER"] != "acme" || !got.Deleted {
					t.Errorf("want ISSUE_NUMBER=%s, OWNER=acme and the sandbox deleted; result:\n%s", ci.issue, res)
				}
			})
		}
	})
}

// privileged runs script with sh -c in a privileged container of ref and
// returns the output. Where the engine itself lacks a capability,
// --privileged fails with "unable to apply caps" (this CI host has no
// CAP_SYS_RESOURCE); the container then gets every other capability, no
// seccomp/AppArmor confinement, unmasked /proc and /sys, and /dev/fuse.
func privileged(r cmdRunner, flags []string, ref, script string) string {
	r.t.Helper()
	args := append(append([]string{"run", "--rm", "--privileged"}, flags...), ref, "sh", "-c", script)
	out, err := exec.Command("docker", args...).CombinedOutput()
	if err == nil {
		r.t.Logf("$ docker run --privileged ... (ok)")
		return string(out)
	}
	if !strings.Contains(string(out), "unable to apply caps") {
		r.t.Fatalf("docker %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	r.t.Logf("--privileged refused by this engine (%s); using every capability the engine holds instead", strings.TrimSpace(string(out)))
	args = append(append([]string{"run", "--rm", "--cap-add", "ALL", "--cap-drop", "SYS_RESOURCE",
		"--security-opt", "seccomp=unconfined", "--security-opt", "apparmor=unconfined",
		"--security-opt", "systempaths=unconfined", "--device", "/dev/fuse"}, flags...), ref, "sh", "-c", script)
	return r.run("", "docker", args...)
}
