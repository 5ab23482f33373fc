package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"

	"github.com/fullsend-ai/agent-sandbox/openshell"
	"github.com/fullsend-ai/agent-sandbox/openshell/profile"
	"github.com/fullsend-ai/agent-sandbox/openshell/profile/check"
	"github.com/fullsend-ai/agent-sandbox/openshell/validate"
	"github.com/spf13/cobra"
)

func newPolicyValidateCmd() *cobra.Command {
	var (
		openshellVersion string
		output           outputFormat
		strict           bool
	)
	cmd := &cobra.Command{
		Use:   "validate [--openshell-version V] FILE|DIR...",
		Short: "Validate OpenShell policy files offline, as a given OpenShell release would load them",
		Long: `Validate checks OpenShell sandbox policy YAML files without a gateway and
says whether the target release would load them. Errors are what OpenShell
refuses at load: the closed schema of the release (unknown or too-new fields,
wrong types), root process ids, relative or traversing filesystem paths, host
wildcards, L7 field combinations and rule bodies (json-rpc, mcp, graphql,
websocket), network_middlewares, ambiguous overlapping endpoints, ...
Everything else is at most a warning. Warnings marked as traps ("trap": true
in JSON) load but do not do what they say: enforcement omitted means audit,
access or rules without a protocol grant full L4 access, an empty binaries
list matches nothing, port and ports together drop port, allowed_ips on
always-blocked ranges are refused per connection (not at load).

Each finding is printed as FILE:LINE:COL: SEVERITY[CODE]: PATH: MESSAGE (HINT).
A provider profile (a file with a top-level id and endpoints, credentials,
binaries or display_name, and no policy keys) is checked as OpenShell's
profile loader and "openshell provider profile lint" check it (codes OPPnnn,
all profiles named together as one set), and its endpoints as the network
policy they become under _provider_<id> in a composed policy (codes OSPnnn).
Keys a profile's release ignores silently (unknown, misspelt or too new) are
trap warnings. See docs/providers.md.

Exit status 1 when any file has an error (or, with --strict, a warning), 2 on
bad usage. "-" reads a policy from standard input; a directory stands for
the *.yaml and *.yml files directly in it (a compiled policies/ directory).`,
		Example: `  fullsend policy validate policies/*.yaml
  fullsend policy validate --openshell-version v0.0.83 policies/
  fullsend policy validate --strict -o json policies/summarizer.yaml
  openshell policy get summarizer --base | fullsend policy validate -`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageErrorf("name at least one policy file (- reads standard input)")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			version, err := openshell.NormalizeVersion(openshellVersion)
			if err != nil {
				return usageErrorf("--openshell-version: %v", err)
			}
			names, err := policyFileArgs(args)
			if err != nil {
				return err
			}
			inputs := make([]validate.Input, 0, len(names))
			for _, name := range names {
				data, err := readPolicyFile(cmd.InOrStdin(), name)
				if err != nil {
					return err
				}
				inputs = append(inputs, validate.Input{File: name, Data: data})
			}
			report := validate.NewReport(version, validateInputs(inputs, version))
			if output == outputJSON {
				err = writeJSON(cmd.OutOrStdout(), report)
			} else {
				err = report.WriteText(cmd.OutOrStdout())
			}
			if err != nil {
				return err
			}
			if report.Failed(strict) {
				return exitError{code: 1, err: errors.New("policy validation failed")}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&openshellVersion, "openshell-version", openshell.DefaultOpenShellVersion,
		fmt.Sprintf("OpenShell release to validate against (%s..%s)", openshell.MinOpenShellVersion, openshell.MaxOpenShellVersion))
	cmd.Flags().BoolVar(&strict, "strict", false, "fail on warnings too")
	addOutputFlag(cmd, &output)
	return cmd
}

// validateInputs validates policies with validate.All and provider
// profiles (profile.IsProfile) as one set with check.All, and
// returns the reports in input order.
func validateInputs(inputs []validate.Input, version string) []validate.FileReport {
	var policies, profiles []validate.Input
	var isProfile []bool
	for _, in := range inputs {
		p := profile.IsProfile(in.Data)
		isProfile = append(isProfile, p)
		if p {
			profiles = append(profiles, in)
		} else {
			policies = append(policies, in)
		}
	}
	pol, prof := validate.All(policies, version), check.All(profiles, version)
	out := make([]validate.FileReport, 0, len(inputs))
	for _, p := range isProfile {
		if p {
			out, prof = append(out, prof[0]), prof[1:]
		} else {
			out, pol = append(out, pol[0]), pol[1:]
		}
	}
	return out
}

// policyFileArgs expands directory arguments into the policy files directly
// in them, sorted; files and "-" pass through in order.
func policyFileArgs(args []string) ([]string, error) {
	var out []string
	for _, a := range args {
		st, err := os.Stat(a)
		if a == "-" || err != nil || !st.IsDir() {
			out = append(out, a)
			continue
		}
		var found []string
		for _, pattern := range []string{"*.yaml", "*.yml"} {
			m, err := filepath.Glob(filepath.Join(a, pattern))
			if err != nil {
				return nil, fmt.Errorf("listing %s: %w", a, err)
			}
			found = append(found, m...)
		}
		if len(found) == 0 {
			return nil, usageErrorf("directory %s holds no *.yaml or *.yml policy files", a)
		}
		sort.Strings(found)
		out = append(out, found...)
	}
	return out, nil
}

// readPolicyFile reads one policy ("-" for stdin), at most one byte over
// OpenShell's size limit so that an oversized file is reported, not loaded.
func readPolicyFile(stdin io.Reader, name string) ([]byte, error) {
	var r io.Reader = stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return nil, usageErrorf("policy file %s does not exist", name)
			}
			return nil, fmt.Errorf("reading policy: %w", err)
		}
		defer f.Close()
		r = f
	}
	data, err := io.ReadAll(io.LimitReader(r, openshell.MaxPolicyBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading policy %s: %w", name, err)
	}
	return data, nil
}
