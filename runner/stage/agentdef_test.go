package stage

import (
	"encoding/json"
	"testing"
)

func TestClaudeAgentsJSON(t *testing.T) {
	def := "---\nname: triage\ndescription: Triage one issue.\nsandbox: {policy: x}\ntools: Bash(gh,curl,jq), Skill\n" +
		"model: opus\nskills: [issue-labels]\nhooks:\n  Stop:\n    - hooks: [{type: command, command: echo}]\n---\nBody.\n"
	b, err := ClaudeAgentsJSON("triage", []byte(def))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"triage":{"description":"Triage one issue.","tools":["Bash(gh,curl,jq)","Skill"],"model":"opus",` +
		`"skills":["issue-labels"],"hooks":{"Stop":[{"hooks":[{"type":"command","command":"echo"}]}]},"prompt":"Body.\n"}}`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
	if !json.Valid(b) {
		t.Error("not JSON")
	}
	for _, bad := range []string{"no frontmatter", "---\nname: x\n", "---\n- a\n---\n"} {
		if _, err := ClaudeAgentsJSON("x", []byte(bad)); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
