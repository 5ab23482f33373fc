package main

import "github.com/spf13/cobra"

// newPolicyCmd groups the policy commands: compile, validate, explain, lint,
// test, schema and suggest.
func newPolicyCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "policy",
		Short: "Compile, validate, lint, test and explain OpenShell policies",
		Example: `  fullsend policy compile .
  fullsend policy validate --openshell-version v0.0.83 policies/summarizer.yaml
  fullsend policy lint policies/*.yaml
  fullsend policy explain summarizer .
  fullsend policy diff bundle:policies .
  fullsend policy suggest summarizer --logs denied.log
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
