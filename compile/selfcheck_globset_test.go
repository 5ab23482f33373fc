package compile

import (
	"strings"
	"testing"

	"github.com/fullsend-ai/agent-sandbox/agentdef"
)

// Tests in this file hold only with OpenShell's globset semantics in
// glob.Match (paths: "/" delimits, "**" spans segments only as a
// whole segment; query values: "." delimits). They fail with the older
// gobwas engine, where "**" crosses "/" anywhere and query globs have no
// delimiter: that is their point, so they never skip.

// TestSelfCheckCatchesPathGlob: "**" inside a segment does not span
// segments in OpenShell's path matching; the self-check refuses the rule
// at its position.
func TestSelfCheckCatchesPathGlob(t *testing.T) {
	sb := &agentdef.Sandbox{Endpoints: []agentdef.EndpointDecl{{
		Pos: pos(8), Host: "files.example.com",
		Rules: []agentdef.RuleDecl{{Pos: pos(9), Method: "GET", Path: "/files/**.json"}},
	}}}
	_, err := compileOne(t, agent("a", []agentdef.ToolRule{rule(t, "Bash(curl *)", 4)}, sb), Options{})
	if err == nil || !strings.Contains(err.Error(), "would deny the request it is written for") || !strings.Contains(err.Error(), "agents/a.md:9") {
		t.Fatalf("err = %v", err)
	}
}

// TestSelfCheckCatchesQueryStar: in query values OpenShell's "*" stops at
// "."; `q: "repo:o/r *"` would deny a search for foo.bar, so the compile
// refuses it at the rule, with the hint to write "**".
func TestSelfCheckCatchesQueryStar(t *testing.T) {
	sb := &agentdef.Sandbox{Endpoints: []agentdef.EndpointDecl{{
		Pos: pos(8), Host: "api.github.com",
		Rules: []agentdef.RuleDecl{{Pos: pos(9), Method: "GET", Path: "/search/issues", Query: map[string]string{"q": "repo:acme/widgets *"}}},
	}}}
	_, err := compileOne(t, agent("a", []agentdef.ToolRule{rule(t, "Bash(curl *)", 4)}, sb), Options{})
	if err == nil || !strings.Contains(err.Error(), "write {*,*.**}") || !strings.Contains(err.Error(), "agents/a.md:9") {
		t.Fatalf("err = %v", err)
	}
	// "**" inside a dot-separated part is a plain "*" (globset): refused too.
	sb.Endpoints[0].Rules[0].Query["q"] = "repo:acme/widgets **"
	if _, err := compileOne(t, agent("a", []agentdef.ToolRule{rule(t, "Bash(curl *)", 4)}, sb), Options{}); err == nil || !strings.Contains(err.Error(), "{*,*.**}") {
		t.Fatalf("** query: err = %v", err)
	}
	sb.Endpoints[0].Rules[0].Query["q"] = "repo:acme/widgets {*,*.**}"
	if _, err := compileOne(t, agent("a", []agentdef.ToolRule{rule(t, "Bash(curl *)", 4)}, sb), Options{}); err != nil {
		t.Fatalf("{*,*.**} query: %v", err)
	}
}
