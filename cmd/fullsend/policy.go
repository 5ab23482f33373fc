package main

import "github.com/spf13/cobra"

// newPolicyCmd groups the policy commands: compile, validate, explain, lint,
// test, schema and suggest.
func newPolicyCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "policy",
		Short: "Compile, validate, lint, test and explain OpenShell policies",
		Example: `  fullsend policy compile testdata/triage
  fullsend policy validate --openshell-version v0.0.83 policies/triage.yaml
  fullsend policy lint testdata/triage/policies/*.yaml
  fullsend policy explain triage --dir testdata/triage
  fullsend policy diff git:HEAD~1 git:HEAD --dir testdata/triage
  fullsend policy suggest duplicate-detector --dir testdata/triage --logs suggest/testdata/run/
  fullsend policy schema openshell > policy.cue`,
		Args: cobra.NoArgs,
	}
	// Policy subcommands are registered below, one line each.
	cmd.AddCommand(newPolicyCompileCmd())
	cmd.AddCommand(newPolicyValidateCmd())
	cmd.AddCommand(newPolicyExplainCmd())
	cmd.AddCommand(newPolicyLintCmd())
	cmd.AddCommand(newPolicyTestCmd())
	cmd.AddCommand(newPolicySchemaCmd())
	cmd.AddCommand(newPolicyDiffCmd())
	cmd.AddCommand(newPolicySuggestCmd())
	return cmd
}
