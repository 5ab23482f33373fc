package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"

	"github.com/fullsend-ai/agent-sandbox/bundle"
	"github.com/fullsend-ai/agent-sandbox/handover"
	"github.com/fullsend-ai/agent-sandbox/placeholder"
	"github.com/fullsend-ai/agent-sandbox/runner"
	"github.com/spf13/cobra"
)

// doctorFlags are the flags of `fullsend doctor`: the subset of `fullsend
// run`'s that decide what a run needs.
type doctorFlags struct {
	openshellFlags
	dir, digest string
	output      outputFormat
	sets        []string
}

// doctorReport is `fullsend doctor -o json`.
type doctorReport struct {
	OK     bool           `json:"ok"`
	Checks []runner.Check `json:"checks"`
}

func newDoctorCmd() *cobra.Command {
	var f doctorFlags
	cmd := &cobra.Command{
		Use:   "doctor [DIR] [AGENT...]",
		Short: "Check this machine or job container for everything fullsend run needs",
		Long: `Doctor runs the checks of fullsend run's preflight without creating
anything: the openshell CLI and the version the policies were compiled for,
the ssh client sandbox upload/download need, the sandbox image pinned by
digest, the gateway (registered and healthy, or what starting one needs:
openshell-gateway, the podman driver, a supervisor image pinned by digest),
the policies digest, and for each agent (all by default) that its files
verify, its placeholders resolve here and its policy lets the runner's
uploads land. Each failed check says what to fix. Exit 1 when one fails.

DIR is the compiled project (default /opt/fullsend, where the image holds
it), as in fullsend run: the first argument is DIR when it is ".", holds a
"/" or is a directory with policies/manifest.json; the others are agents.
--dir is a deprecated alias.`,
		Example: `  fullsend doctor
  fullsend doctor summarizer --set ISSUE_NUMBER=1 -o json
  fullsend doctor . summarizer --set ISSUE_NUMBER=1 --set OWNER=acme --set REPO_NAME=widgets`,
		RunE: func(cmd *cobra.Command, args []string) error {
			agents, err := doctorDir(cmd, args, &f.dir)
			if err != nil {
				return err
			}
			return runDoctor(cmd, agents, f)
		},
	}
	fl := cmd.Flags()
	deprecatedDirFlag(fl, &f.dir, "dir", "/opt/fullsend", "compiled project directory DIR")
	fl.StringVar(&f.digest, "policies-digest", os.Getenv(handover.PoliciesDigest), "sha256 of policies/manifest.json (env FULLSEND_POLICIES_DIGEST)")
	fl.StringArrayVar(&f.sets, "set", nil, "placeholder value KEY=VALUE (repeatable)")
	f.openshellFlags.add(fl)
	addOutputFlag(cmd, &f.output)
	return cmd
}

func runDoctor(cmd *cobra.Command, agents []string, f doctorFlags) error {
	if err := f.check(); err != nil {
		return err
	}
	values, err := placeholder.ParseSet(f.sets)
	if err != nil {
		return usageErrorf("%v", setFlagError(err))
	}
	rep := doctorReport{Checks: f.checks(cmd.Context(), agents, values)}
	rep.OK = failed(rep.Checks) == 0
	if f.output == outputJSON {
		if err := writeJSON(cmd.OutOrStdout(), rep); err != nil {
			return err
		}
	} else {
		printDoctor(cmd.OutOrStdout(), rep)
	}
	if !rep.OK {
		return exitError{code: 1, err: fmt.Errorf("doctor: %d check(s) failed", failed(rep.Checks))}
	}
	return nil
}

// checks runs the doctor's checks for agents, or says where the compiled
// project it needs is not.
func (f doctorFlags) checks(ctx context.Context, agents []string, values placeholder.Values) []runner.Check {
	r, err := runner.New(runner.Options{
		Project: os.DirFS(f.dir), PoliciesDigest: f.digest, OpenShell: f.openshell, Gateway: f.gateway,
		GatewayMode: f.gatewayMode, GatewayDriver: f.gatewayDriver, SupervisorImage: f.supervisorImage, SandboxImage: f.sandboxImage, Verified: f.verified,
		Env: runner.Environment{Getenv: os.LookupEnv, Environ: os.Environ, Root: os.DirFS("/"),
			LookupHost: net.DefaultResolver.LookupHost, Explicit: "--set"},
	})
	if err != nil {
		err = fmt.Errorf("%s: %w", f.dir, err)
	}
	if perr := compiledProject(f.dir); perr != nil {
		err = perr // where doctor looked, as run says it
	}
	if err != nil {
		return []runner.Check{{Name: "project", Detail: err.Error(),
			Fix: "give the compiled project as DIR (fullsend doctor DIR) and --policies-digest the digest fullsend verify printed"}}
	}
	return r.Doctor(ctx, agents, values)
}

func failed(cs []runner.Check) int {
	n := 0
	for _, c := range cs {
		if !c.OK {
			n++
		}
	}
	return n
}

func printDoctor(w io.Writer, rep doctorReport) {
	for _, c := range rep.Checks {
		mark := "ok  "
		if !c.OK {
			mark = "FAIL"
		}
		fmt.Fprintf(w, "%s %-28s %s\n", mark, c.Name, c.Detail)
		if c.Fix != "" && !c.OK {
			fmt.Fprintf(w, "     %-28s fix: %s\n", "", c.Fix)
		}
	}
	if rep.OK {
		fmt.Fprintln(w, "everything fullsend run needs is here")
	}
}

// doctorDir takes DIR from the front of doctor's arguments when the first
// names a project directory (".", a path with "/", or a directory holding
// policies/manifest.json) and returns the agents after it.
func doctorDir(cmd *cobra.Command, args []string, dir *string) ([]string, error) {
	if len(args) == 0 || !looksLikeDir(args[0]) {
		return args, nil
	}
	if err := dirFromArgs(cmd, args[:1], 0, "dir", dir); err != nil {
		return nil, err
	}
	return args[1:], nil
}

// looksLikeDir reports whether a doctor argument names a directory rather
// than an agent (agent names hold no "/").
func looksLikeDir(arg string) bool {
	if arg == "." || arg == ".." || strings.ContainsRune(arg, '/') || strings.ContainsRune(arg, filepath.Separator) {
		return true
	}
	st, err := os.Stat(filepath.Join(arg, "policies", bundle.ManifestFile))
	return err == nil && st.Mode().IsRegular()
}
