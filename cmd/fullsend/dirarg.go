package main

import (
	"github.com/fullsend-ai/agent-sandbox/internal/projectroot"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Every command names the project directory the same way: a positional
// DIR. The flags some commands took before (--dir, serve agents'
// --manifest) stay as deprecated aliases, so scripts keep working.

// deprecatedDirFlag registers the old --NAME flag bound to dir as a
// deprecated alias of the positional DIR.
func deprecatedDirFlag(fl *pflag.FlagSet, dir *string, name, def, usage string) {
	fl.StringVar(dir, name, def, usage+" (deprecated: give DIR as an argument)")
	_ = fl.MarkDeprecated(name, "give the directory as the DIR argument")
}

// dirFromArgs sets *dir from args[i] when given: the positional DIR wins
// over the default, and a different --flag value is a usage error. With
// neither, a default of "." is the project root found from the working
// directory (projectDir).
func dirFromArgs(cmd *cobra.Command, args []string, i int, flag string, dir *string) error {
	if len(args) <= i {
		if cmd.Flags().Changed(flag) || *dir != "." {
			return nil
		}
		root, err := projectDir(nil)
		*dir = root
		return err
	}
	if cmd.Flags().Changed(flag) && *dir != args[i] {
		return usageErrorf("directory given twice: %q and --%s %q", args[i], flag, *dir)
	}
	*dir = args[i]
	return nil
}

// dirArg is the optional DIR argument of a command that takes at most
// one, "." by default.
func dirArg(args []string) string {
	if len(args) == 1 {
		return args[0]
	}
	return "."
}

// projectDir is the optional DIR argument of a command that works on a
// project and takes at most one argument: without it, the project root
// found from the working directory upwards, as git and go find theirs
// (internal/projectroot: the nearest directory holding .fullsend-version,
// policies/manifest.json, agents/ or skills/).
func projectDir(args []string) (string, error) {
	if len(args) == 1 {
		return args[0], nil
	}
	return projectroot.Find(".")
}
