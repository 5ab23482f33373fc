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

// FuzzClaudeAgentsJSON: any definition gives an error or one valid JSON
// object naming the agent, with a prompt; never a panic.
func FuzzClaudeAgentsJSON(f *testing.F) {
	f.Add([]byte("---\nname: triage\ntools: Bash(gh,curl,jq), Skill\nhooks:\n  Stop:\n    - hooks: [{type: command, command: echo}]\n---\nBody.\n"))
	f.Add([]byte("---\nmodel: &a [*a]\n---\n"))
	f.Add([]byte("---\r\ndescription: \"\\u2028\"\r\nmaxTurns: 1e400\r\n---\r\n"))
	f.Fuzz(func(t *testing.T, def []byte) {
		b, err := ClaudeAgentsJSON("x", def)
		if err != nil {
			return
		}
		var got map[string]map[string]json.RawMessage
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatalf("not one JSON object: %v\n%s", err, b)
		}
		if _, ok := got["x"]["prompt"]; !ok || len(got) != 1 {
			t.Errorf("no prompt for the agent: %s", b)
		}
	})
}
