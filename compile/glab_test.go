package compile

import (
	"testing"

	"github.com/fullsend-ai/agent-sandbox/agentdef"
	"github.com/fullsend-ai/agent-sandbox/openshell/decide"
	"github.com/fullsend-ai/agent-sandbox/policycue"
)

// glabDecide compiles an agent and decides req on its policy with the
// job's GitLab values.
func glabDecide(t *testing.T, c *Compiled, req string) decide.Decision {
	t.Helper()
	return decideWith(t, c, req, map[string]string{"FORGE_HOST": "gitlab.com", "OWNER": "acme", "REPO_NAME": "widgets.api", "ISSUE_NUMBER": "5"})
}

// TestGlabProfiles: the requests glab sends (gl-cli/glab @ 45aa37be on
// gitlab.com/gitlab-org/api/client-go, whose PathEscape sends the project
// path as acme%2Fwidgets%2Eapi) are allowed for the job's project only,
// on both OpenShell versions; reads keep the network tier, the declared
// writes name the job's issue and raise it to full.
func TestGlabProfiles(t *testing.T) {
	const (
		glab = " from /usr/bin/glab"
		proj = "https://gitlab.com/api/v4/projects/acme%2Fwidgets%2Eapi"
	)
	reads := []string{
		"GET " + proj + glab,                                      // repo view, mr create
		"GET " + proj + "/issues/5" + glab,                        // issue view
		"GET " + proj + "/issues/5/notes?sort=asc" + glab,         // issue view --comments
		"GET " + proj + "/issues?state=opened&per_page=30" + glab, // issue list
		"GET " + proj + "/merge_requests/7" + glab,                // mr view
		"GET " + proj + "/merge_requests/7/approval_state" + glab,
		"GET " + proj + "/merge_requests/7/raw_diffs" + glab, // mr diff --raw
		"GET " + proj + "/merge_requests/7/versions/12" + glab,
		"GET " + proj + "/labels" + glab,                    // label list
		"GET " + proj + "/pipelines/latest?ref=main" + glab, // ci status
		"GET " + proj + "/pipelines/9/jobs?per_page=100" + glab,
		"GET https://gitlab.com/api/v4/user" + glab,
		"GET https://gitlab.com/api/v4/users?username=octo" + glab,
		// The decoded spelling of the same project.
		"GET https://gitlab.com/api/v4/projects/acme%2Fwidgets.api/issues/5" + glab,
	}
	denied := []string{
		"GET https://gitlab.com/api/v4/projects/attacker%2Fwidgets%2Eapi/issues/5" + glab,
		"GET https://gitlab.com/api/v4/projects/acme%2Fother/issues" + glab,
		"GET https://gitlab.com/api/v4/projects/123/issues/5" + glab, // numeric ids are not pinned
		"GET https://gitlab.com/api/v4/groups/acme/issues" + glab,
		"POST https://gitlab.com/api/graphql" + glab,
		"DELETE " + proj + glab,
	}
	writes := []string{
		"POST " + proj + "/issues/5/notes" + glab,         // issue note
		"PUT " + proj + "/issues/5" + glab,                // issue update --label
		"POST " + proj + "/merge_requests/7/notes" + glab, // mr note
		"POST " + proj + "/merge_requests" + glab,         // mr create
	}
	deniedWrites := []string{
		"POST " + proj + "/issues/6/notes" + glab,
		"PUT " + proj + "/issues/6" + glab,
		"POST https://gitlab.com/api/v4/projects/attacker%2Fx/issues/5/notes" + glab,
		"POST " + proj + "/repository/branches" + glab, // mr create --create-source-branch
		"PUT " + proj + "/merge_requests/7/merge" + glab,
		"POST " + proj + "/issues" + glab,
		"DELETE " + proj + "/issues/5" + glab,
	}
	for _, version := range []string{"v0.0.83", "v0.0.111"} {
		t.Run(version, func(t *testing.T) {
			c, err := compileOne(t, agent("a", []agentdef.ToolRule{rule(t, "Bash(glab issue view *)", 4)}, nil), Options{OpenShellVersion: version})
			if err != nil {
				t.Fatal(err)
			}
			if c.Tier != policycue.TierNetwork {
				t.Errorf("reads: tier = %s, want network", c.Tier)
			}
			for _, req := range reads {
				if d := glabDecide(t, c, req); !d.Allowed {
					t.Errorf("%s denied: %s", req, d.Reason)
				}
			}
			for _, req := range append(append([]string{}, denied...), writes...) {
				if d := glabDecide(t, c, req); d.Allowed {
					t.Errorf("reads only: %s allowed", req)
				}
			}

			sb := &agentdef.Sandbox{Profiles: []agentdef.NameRef{{Name: "gitlab-write", Pos: pos(6)}, {Name: "gitlab-mr-write", Pos: pos(6)}}}
			c, err = compileOne(t, agent("a", []agentdef.ToolRule{rule(t, "Bash(glab *)", 4)}, sb), Options{OpenShellVersion: version})
			if err != nil {
				t.Fatal(err)
			}
			if c.Tier != policycue.TierFull {
				t.Errorf("writes: tier = %s, want full", c.Tier)
			}
			for _, req := range append(append([]string{}, reads...), writes...) {
				if d := glabDecide(t, c, req); !d.Allowed {
					t.Errorf("%s denied: %s", req, d.Reason)
				}
			}
			for _, req := range append(append([]string{}, denied...), deniedWrites...) {
				if d := glabDecide(t, c, req); d.Allowed {
					t.Errorf("%s allowed", req)
				}
			}
		})
	}
}
