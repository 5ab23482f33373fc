package main

import (
	"github.com/spf13/cobra"

	"github.com/fullsend-ai/agent-sandbox/openshell"
	"github.com/fullsend-ai/agent-sandbox/policycue"
)

// schemaJSONRefusal says why -o json is not offered.
const schemaJSONRefusal = "-o json is not offered: CUE's JSON Schema export (experimental in CUE v0.17) " +
	"loses #Policy's release pinning, exports open structs as empty ones and drops the input schemas' " +
	"comprehension checks; use -o cue with the cue CLI"

// newPolicySchemaCmd prints the embedded CUE schemas, the single source
// the validator's and the parser's Go tables are generated from.
func newPolicySchemaCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "schema",
		Short: "Print the CUE schemas of OpenShell policies and of agent frontmatter",
		Long: `Schema prints the CUE schemas fullsend is built from, for the cue CLI, editors
and pre-commit hooks: "openshell" the OpenShell policy document (#Policy), "input"
the agent and skill frontmatter (#ClaudeAgent, #OpenCodeAgent, #Skill, #Sandbox).
The validator's field table and the frontmatter parser's key lists are generated
from these same files, so cue vet and fullsend agree on the shape; fullsend adds
the semantic checks, positions and hints.`,
		Example: `  fullsend policy schema openshell > policy.cue && cue vet -c policy.cue policies/summarizer.yaml -d '#Policy'
  fullsend policy schema input > input.cue   # for cue vet of frontmatter as YAML: -d '#Skill'`,
		Args: cobra.NoArgs,
	}
	cmd.AddCommand(newPolicySchemaOpenShellCmd(), newPolicySchemaInputCmd())
	return cmd
}

func newPolicySchemaOpenShellCmd() *cobra.Command {
	var openshellVersion, output string
	cmd := &cobra.Command{
		Use:   "openshell [--openshell-version V]",
		Short: "Print the CUE schema of OpenShell policy documents",
		Long: `Print policycue/schema/openshell/policy.cue as embedded in this binary:
#PolicyAt takes a release's feature set, #Policy is the newest release fullsend
knows and #Policy_v0_0_83 fullsend's pin. With --openshell-version, #Policy is
pinned to that release's features, so cue vet -d '#Policy' checks the shape
that release loads (fullsend policy validate checks the same shape and more).`,
		Example: `  fullsend policy schema openshell > policy.cue && cue vet -c policy.cue policies/summarizer.yaml -d '#Policy'
  fullsend policy schema openshell --openshell-version v0.0.83 > policy-0.0.83.cue && cue vet -c policy-0.0.83.cue policies/*.yaml -d '#Policy'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkSchemaOutput(output); err != nil {
				return err
			}
			if openshellVersion != "" {
				if _, err := openshell.NormalizeVersion(openshellVersion); err != nil {
					return usageErrorf("--openshell-version: %v", err)
				}
			}
			src, err := policycue.OpenShellSchemaCUE(openshellVersion)
			if err != nil {
				return err
			}
			_, err = cmd.OutOrStdout().Write(src)
			return err
		},
	}
	cmd.Flags().StringVar(&openshellVersion, "openshell-version", "",
		"pin #Policy to this OpenShell release ("+openshell.MinOpenShellVersion+" to "+openshell.MaxOpenShellVersion+"); default: the whole file")
	addSchemaOutputFlag(cmd, &output)
	return cmd
}

func newPolicySchemaInputCmd() *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "input",
		Short: "Print the CUE schemas of agent and skill frontmatter",
		Long: `Print the frontmatter input schemas (policycue/schema/input, CUE package input)
as one file: #ClaudeAgent, #OpenCodeAgent, #Skill and #Sandbox. Check the YAML
between a definition's --- lines with cue vet; fullsend policy compile checks
the same shape and also tool rules, references between files and paths.`,
		Example: `  fullsend policy schema input > input.cue
  # the frontmatter between the --- lines, saved as frontmatter.yaml:
  #   cue vet -c input.cue frontmatter.yaml -d '#ClaudeAgent'   (or '#Skill')`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkSchemaOutput(output); err != nil {
				return err
			}
			src, err := policycue.InputSchemaCUE()
			if err != nil {
				return err
			}
			_, err = cmd.OutOrStdout().Write(src)
			return err
		},
	}
	addSchemaOutputFlag(cmd, &output)
	return cmd
}

func addSchemaOutputFlag(cmd *cobra.Command, output *string) {
	cmd.Flags().StringVarP(output, "output", "o", "cue", "output format: cue (JSON Schema is not offered; see -o json)")
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]string{"cue"}, cobra.ShellCompDirectiveNoFileComp))
}

func checkSchemaOutput(output string) error {
	switch output {
	case "cue":
		return nil
	case "json":
		return usageErrorf("%s", schemaJSONRefusal)
	}
	return usageErrorf("unknown output format %q (want cue)", output)
}
