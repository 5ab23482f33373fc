package main

import (
	"os"

	"github.com/spf13/pflag"

	"github.com/fullsend-ai/agent-sandbox/handover"
	"github.com/fullsend-ai/agent-sandbox/runner"
)

// openshellFlags are the flags `fullsend run` and `fullsend doctor` share:
// where the OpenShell programs are, how the gateway is found or started, and
// the images the sandbox and a started gateway use.
type openshellFlags struct {
	openshell, gateway, gatewayMode, gatewayDriver, supervisorImage, sandboxImage string
	// verified is the verify step's hand-over the sandbox image must match.
	verified runner.VerifiedImages
}

func (f *openshellFlags) add(fl *pflag.FlagSet) {
	fl.StringVar(&f.openshell, "openshell", "", "path of the openshell CLI (default: from PATH)")
	fl.StringVar(&f.gateway, "openshell-gateway", "", "path of openshell-gateway (default: from PATH)")
	fl.StringVar(&f.gatewayMode, "gateway", envOr(handover.Gateway, runner.GatewayAuto), "auto: use a registered healthy gateway, else start one; existing: never start one; start: always start one in this container (env FULLSEND_GATEWAY)")
	fl.StringVar(&f.gatewayDriver, "gateway-driver", runner.DefaultGatewayDriver, "compute driver of a gateway the runner starts (podman; passed explicitly, so a Kubernetes executor never selects the kubernetes driver)")
	fl.StringVar(&f.supervisorImage, "supervisor-image", os.Getenv(handover.SupervisorImage), "supervisor image of a gateway the runner starts, REPO@sha256:... (env FULLSEND_SUPERVISOR_IMAGE; the agent-sandbox image sets it)")
	fl.StringVar(&f.sandboxImage, "sandbox-image", os.Getenv(handover.SandboxImage), "separate image every sandbox is created from (openshell sandbox create --from), REPO@sha256:..., exactly as fullsend verify --sandbox-image verified it (env FULLSEND_SANDBOX_IMAGE); default: the verified sandbox image, else the job's own verified image")
	fl.StringVar(&f.verified.Image, "verified-image", os.Getenv(handover.Image), "the job's own image as fullsend verify printed it, REPO@sha256:... (its ref output; env FULLSEND_IMAGE); the default sandbox image")
	fl.StringVar(&f.verified.SandboxImage, "verified-sandbox-image", os.Getenv(handover.VerifiedSandboxImage), "the sandbox image as fullsend verify --sandbox-image printed it (its sandbox-ref output; env FULLSEND_VERIFIED_SANDBOX_IMAGE)")
}

// check refuses a --gateway value that is not a mode.
func (f *openshellFlags) check() error {
	if !runner.ValidGatewayMode(f.gatewayMode) {
		return usageErrorf("--gateway %q: want auto, existing or start", f.gatewayMode)
	}
	return nil
}
