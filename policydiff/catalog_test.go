package policydiff

import (
	"fmt"
	"testing"

	"github.com/fullsend-ai/agent-sandbox/bundle"
)

// A grant that only an org catalog change explains is blamed on the
// catalog line the head added that names it; a grant a project line
// explains, or that no added line names, keeps its sources.
func TestBlameCatalog(t *testing.T) {
	base := map[string][]byte{"catalog/org.cue": []byte("package catalog\n\thost: \"api.acme.example\"\n\tpath: \"/v1/status\"\n")}
	head := map[string][]byte{"catalog/org.cue": []byte("package catalog\n\thost: \"api.acme.example\"\n\tpath: \"/v1/**\"\n\thost: \"exfil.example\"\n")}
	added := addedCatalogLines(base, head)
	if len(added) != 2 || added[0].line != 3 || added[1].line != 4 {
		t.Fatalf("added lines: %+v", added)
	}
	agentLine := bundle.Source{File: "agents/a.md", Line: 4, Reason: "tool Bash(acme *)"}
	seen := map[string]bool{agentLine.File + "\x00" + agentLine.Reason: true}
	for _, tc := range []struct {
		name string
		c    Change
		want string // the first source's file:line
	}{
		{"a widened path", Change{Action: ActionWiden, Kind: "rule", Host: "api.acme.example", After: "allow GET /v1/**", From: []bundle.Source{agentLine}}, "catalog/org.cue:3"},
		{"a new host", Change{Action: ActionAdd, Kind: "endpoint", Host: "exfil.example", After: "exfil.example:443", From: []bundle.Source{agentLine}}, "catalog/org.cue:4"},
		{"no added line names it", Change{Action: ActionAdd, Kind: "binary", After: "/usr/bin/acme", From: []bundle.Source{agentLine}}, "agents/a.md:4"},
		{"a project line explains it", Change{Action: ActionAdd, Kind: "endpoint", Host: "exfil.example",
			From: []bundle.Source{{File: "agents/a.md", Line: 9, Reason: "sandbox endpoint exfil.example"}}}, "agents/a.md:9"},
		{"a removal", Change{Action: ActionRemove, Kind: "endpoint", Host: "exfil.example", From: []bundle.Source{agentLine}}, "agents/a.md:4"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.c.blameCatalog(added, seen)
			if got := fmt.Sprintf("%s:%d", tc.c.From[0].File, tc.c.From[0].Line); got != tc.want {
				t.Errorf("blamed on %s, want %s", got, tc.want)
			}
		})
	}
}
