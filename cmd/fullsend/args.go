package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fullsend-ai/agent-sandbox/bundle"
	"github.com/fullsend-ai/agent-sandbox/internal/didyoumean"
	"github.com/fullsend-ai/agent-sandbox/internal/projectroot"
)

// namedArgsError words a refused argument count with the argument names
// of the command's usage line ("run AGENT [DIR]"): the missing one by
// name, or how many are too many; err (cobra's wording) otherwise.
func namedArgsError(c *cobra.Command, args []string, err error) error {
	required, optional := usageArgs(c.Use)
	switch {
	case len(args) < len(required):
		return fmt.Errorf("missing %s (usage: %s)", strings.Join(required[len(args):], " "), c.UseLine())
	case len(required)+len(optional) > 0 && len(args) > len(required)+len(optional):
		return fmt.Errorf("%d arguments, at most %d (usage: %s)", len(args), len(required)+len(optional), c.UseLine())
	}
	return err
}

// usageArgs splits the arguments of a usage line "cmd A B [C] [D...]"
// into the required and the optional names; flags ("[flags]") are left out.
func usageArgs(use string) (required, optional []string) {
	fields := strings.Fields(use)
	if len(fields) < 2 {
		return nil, nil
	}
	for _, f := range fields[1:] {
		switch {
		case strings.HasPrefix(f, "["):
			if !strings.Contains(f, "flags") && !strings.Contains(f, "...") {
				optional = append(optional, strings.Trim(f, "[]"))
			}
		case strings.HasPrefix(f, "-"), strings.Contains(f, "..."):
			return required, optional
		default:
			required = append(required, f)
		}
	}
	return required, optional
}

// maxAgentsListed bounds the agents an error lists.
const maxAgentsListed = 20

// agentsIn names the agents of the compiled project in dir for an error:
// "agents: a, b" or why there are none to name. Names come from the
// checkout: quoted when they are not plain.
func agentsIn(dir string) string {
	m, _, err := bundle.ReadManifest(os.DirFS(filepath.Join(dir, "policies")))
	if err != nil {
		return fmt.Sprintf("no compiled project in %s to list agents from", dir)
	}
	names := m.AgentNames()
	if len(names) == 0 {
		return fmt.Sprintf("%s has no agents", filepath.Join(dir, "policies", bundle.ManifestFile))
	}
	shown := names[:min(len(names), maxAgentsListed)]
	quoted := make([]string, len(shown))
	for i, n := range shown {
		quoted[i] = plainName(n)
	}
	s := "agents in " + dir + ": " + strings.Join(quoted, ", ")
	if len(names) > len(shown) {
		s += fmt.Sprintf(", and %d more", len(names)-len(shown))
	}
	return s
}

// unknownAgent refuses an agent the compiled project in dir does not have,
// with the closest name and the agents it has; nil when it has it or there
// is no readable manifest (the runner then says why).
func unknownAgent(dir, agent string) error {
	m, _, err := bundle.ReadManifest(os.DirFS(filepath.Join(dir, "policies")))
	if err != nil {
		return nil
	}
	if _, ok := m.Agents[agent]; ok {
		return nil
	}
	msg := fmt.Sprintf("agent %s is not in %s", plainName(agent), filepath.Join(dir, "policies", bundle.ManifestFile))
	if s := didyoumean.Closest(agent, m.AgentNames()); s != "" {
		msg += fmt.Sprintf("; did you mean %s?", plainName(s))
	}
	return unknownAgentError(fmt.Sprintf("%s (%s)", msg, agentsIn(dir)))
}

// unknownAgentError is an agent the manifest lacks, worded for the user;
// it matches bundle.ErrUnknownAgent.
type unknownAgentError string

func (e unknownAgentError) Error() string { return string(e) }
func (e unknownAgentError) Unwrap() error { return bundle.ErrUnknownAgent }

// runAgentsHint lists the agents run can take: those of dir, else, when
// dir is run's default and holds no project, those of the project around
// the working directory.
func runAgentsHint(cmd *cobra.Command, dir string) string {
	hint := agentsIn(dir)
	if _, _, err := bundle.ReadManifest(os.DirFS(filepath.Join(dir, "policies"))); err == nil || cmd.Flags().Changed("dir") {
		return hint
	}
	if root, err := projectroot.Find("."); err == nil {
		if _, _, err := bundle.ReadManifest(os.DirFS(filepath.Join(root, "policies"))); err == nil {
			return hint + "; " + agentsIn(root) + ", given as DIR"
		}
	}
	return hint
}

// plainName is a name from a checkout as an error shows it: as it is when
// it is plain, else Go-quoted.
func plainName(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.") == "" {
		return s
	}
	return fmt.Sprintf("%q", s)
}
