package agentdef_test

import (
	"errors"
	"fmt"
	"strings"
	"testing/fstest"

	"github.com/fullsend-ai/agent-sandbox/agentdef"
)

func ExampleParseToolRule() {
	r, err := agentdef.ParseToolRule("Bash(gh api:*)", agentdef.Pos{File: "agents/triage.md", Line: 4, Column: 8})
	if err != nil {
		panic(err)
	}
	fmt.Println(r.Tool, r.Commands[0].Command, r.Commands[0].Args)
	_, err = agentdef.ParseToolRule("Bash(/usr/bin/gh)", agentdef.Pos{File: "agents/triage.md", Line: 4, Column: 8})
	fmt.Println(err)
	// Output:
	// Bash gh api *
	// agents/triage.md:4:13: tool rule "Bash(/usr/bin/gh)": command "/usr/bin/gh" is a path (hint: name the program (gh), not its path; the catalog maps programs to binaries)
}

func ExampleLoad() {
	fsys := fstest.MapFS{
		"agents/triage.md":             {Data: []byte("---\nname: triage\ndescription: Triage issues.\ntools: Bash(gh,curl,jq), Skill\nskills: [issue-labels]\n---\nPrompt.\n")},
		"skills/issue-labels/SKILL.md": {Data: []byte("---\nname: issue-labels\ndescription: Label taxonomy.\nallowed-tools: Bash(gh label list:*)\n---\n")},
	}
	proj, err := agentdef.Load(fsys)
	if err != nil {
		panic(err)
	}
	a := proj.Agents[0]
	fmt.Println(a.Name, len(a.Tools), a.Tools[0].Commands, a.Skills[0].Name, a.Skills[0].Pos)

	// An unknown tool grants nothing: a warning, with a hint.
	fsys["agents/triage.md"] = &fstest.MapFile{Data: []byte("---\nname: triage\ndescription: Triage issues.\ntools: Bash(gh,curl,jq), Skil\n---\n")}
	proj, err = agentdef.Load(fsys)
	if err != nil {
		panic(err)
	}
	w := proj.Warnings[0]
	fmt.Println(w.Pos, w.Field, w.Severity, strings.HasPrefix(w.Hint, `did you mean "Skill"?`))

	// A malformed tool name is an error.
	fsys["agents/triage.md"] = &fstest.MapFile{Data: []byte("---\nname: triage\ndescription: Triage issues.\ntools: Bash(gh,curl,jq), 9kill\n---\n")}
	_, err = agentdef.Load(fsys)
	var ds agentdef.Diagnostics
	if errors.As(err, &ds) {
		fmt.Println(ds[0].Pos, ds[0].Field, ds[0].Severity)
	}
	// Output:
	// triage 2 [gh curl jq] issue-labels agents/triage.md:5:10
	// agents/triage.md:4:26 tools[1] warning true
	// agents/triage.md:4:26 tools[1] error
}
