package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/fullsend-ai/agent-sandbox/templates"
)

// newTemplatesCmd groups the CI template commands.
func newTemplatesCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "templates",
		Short: "Write the GitHub Actions and GitLab CI templates that verify the image and run an agent",
		Example: `  fullsend templates write github
  fullsend templates write gitlab ci
  fullsend templates list -o json`,
		Args: cobra.NoArgs,
	}
	cmd.AddCommand(newTemplatesWriteCmd(), newTemplatesListCmd())
	return cmd
}

func newTemplatesWriteCmd() *cobra.Command {
	var (
		out    string
		output outputFormat
		force  bool
	)
	cmd := &cobra.Command{
		Use:   "write github|gitlab [DIR]",
		Short: "Write one CI system's templates to a directory (DIR or --out; default .github for github, ci for gitlab)",
		Long: `Write puts one CI system's templates where fullsend init puts them,
or into DIR (fullsend templates list shows them all):
github into .github (workflows/fullsend.yml, actions/fullsend-run/action.yml,
workflows/fullsend-policy-diff.yml, workflows/fullsend-policy-diff-comment.yml),
gitlab into ci (fullsend.gitlab-ci.yml, fullsend-policy-diff.gitlab-ci.yml).
The policy-diff templates install the fullsend release the base branch pins
in .fullsend-version (fullsend init writes it). Like init, it never
replaces an existing file without --force: the files it kept are listed as
skipped, so an edited workflow survives running it again.`,
		Example: `  fullsend templates write github            # .github/workflows/fullsend.yml, fullsend-policy-diff.yml, fullsend-policy-diff-comment.yml; .github/actions/fullsend-run/action.yml
  fullsend templates write gitlab ci         # ci/fullsend.gitlab-ci.yml, ci/fullsend-policy-diff.gitlab-ci.yml
  fullsend templates write gitlab --force    # replace ci/fullsend.gitlab-ci.yml with the current template`,
		Args:      cobra.RangeArgs(1, 2),
		ValidArgs: templates.Kinds(),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := dirFromArgs(cmd, args, 1, "out", &out); err != nil {
				return err
			}
			if _, err := templates.FS(args[0]); err != nil {
				return usageErrorf("%v", err)
			}
			if out == "" {
				out = templates.DefaultDir(args[0])
			}
			res, err := templates.Write(args[0], out, force)
			if err != nil {
				return err
			}
			if output == outputJSON {
				return writeJSON(cmd.OutOrStdout(), map[string]any{"kind": args[0], "written": res.Written, "skipped": res.Skipped})
			}
			for _, p := range res.Written {
				fmt.Fprintln(cmd.OutOrStdout(), p)
			}
			for _, p := range res.Skipped {
				fmt.Fprintf(cmd.ErrOrStderr(), "skipped %s: it exists (--force replaces it)\n", p)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "directory to write into, same as DIR (default .github for github, ci for gitlab)")
	cmd.Flags().BoolVar(&force, "force", false, "replace files that already exist")
	addOutputFlag(cmd, &output)
	return cmd
}

func newTemplatesListCmd() *cobra.Command {
	var output outputFormat
	cmd := &cobra.Command{
		Use:     "list",
		Short:   "List the embedded templates",
		Example: "  fullsend templates list\n  fullsend templates list -o json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			all := map[string][]string{}
			for _, k := range templates.Kinds() {
				names, err := templates.List(k)
				if err != nil {
					return err
				}
				all[k] = names
			}
			if output == outputJSON {
				return writeJSON(cmd.OutOrStdout(), all)
			}
			for _, k := range templates.Kinds() {
				for _, n := range all[k] {
					fmt.Fprintf(cmd.OutOrStdout(), "%s\t%s\n", k, n)
				}
			}
			return nil
		},
	}
	addOutputFlag(cmd, &output)
	return cmd
}
