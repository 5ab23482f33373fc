package openshell

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/fullsend-ai/agent-sandbox/bundle"
	"github.com/fullsend-ai/agent-sandbox/placeholder"
)

func samplePolicy() *Policy {
	return &Policy{
		Version: 1,
		FilesystemPolicy: &FilesystemPolicy{
			ReadOnly:  []string{"/usr"},
			ReadWrite: []string{"/sandbox/{{REPO_NAME}}"},
			Sources:   map[string][]bundle.Source{"/sandbox/{{REPO_NAME}}": {{File: "agents/a.md", Line: 3}}},
		},
		NetworkPolicies: map[string]NetworkPolicy{
			"forge": {
				Name: "forge",
				Endpoints: []Endpoint{{
					Host: "{{FORGE_HOST}}", Port: 443, Protocol: "rest", Enforcement: "enforce",
					Rules: []Rule{{Allow: Match{
						Method: "POST", Path: "/repos/{{OWNER}}/{{REPO_NAME}}/issues/{{ISSUE_NUMBER}}/comments",
						Query: map[string]QueryMatch{"n": {Any: []string{"{{ISSUE_NUMBER}}"}}},
					}}},
				}},
				Binaries: []Binary{{Path: "/usr/bin/curl"}},
			},
			"host": {
				Name:      "host",
				Endpoints: []Endpoint{{Host: "host.docker.internal", Port: 8081, AllowedIPs: []string{"{{HOST_IP}}"}}},
				Binaries:  []Binary{{Path: "/usr/bin/curl"}},
			},
		},
	}
}

func TestApplyPlaceholders(t *testing.T) {
	p := samplePolicy()
	open, err := OpenPlaceholders(p)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{placeholder.ForgeHost, placeholder.HostIP, placeholder.IssueNumber, placeholder.Owner, placeholder.RepoName}; !reflect.DeepEqual(open, want) {
		t.Fatalf("Open = %v, want %v", open, want)
	}
	if p.NetworkPolicies["forge"].Endpoints[0].Host != "{{FORGE_HOST}}" {
		t.Fatal("Open mutated the policy")
	}
	v, err := placeholder.ParseSet([]string{"OWNER=o", "REPO_NAME=r", "ISSUE_NUMBER=5", "HOST_IP=172.17.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	open, err = ApplyPlaceholders(p, v)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{placeholder.ForgeHost}; !reflect.DeepEqual(open, want) {
		t.Fatalf("open = %v, want %v", open, want)
	}
	ep := p.NetworkPolicies["forge"].Endpoints[0]
	if got := ep.Rules[0].Allow.Path; got != "/repos/o/r/issues/5/comments" {
		t.Fatalf("path = %q", got)
	}
	if got := ep.Rules[0].Allow.Query["n"].Any[0]; got != "5" {
		t.Fatalf("query = %q", got)
	}
	if got := p.NetworkPolicies["host"].Endpoints[0].AllowedIPs[0]; got != "172.17.0.1/32" {
		t.Fatalf("allowed_ips = %q", got)
	}
	if got := p.FilesystemPolicy.ReadWrite[0]; got != "/sandbox/r" {
		t.Fatalf("read_write = %q", got)
	}
	if _, ok := p.FilesystemPolicy.Sources["/sandbox/r"]; !ok {
		t.Fatal("provenance not re-keyed after substitution")
	}
}

func TestApplyRejects(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(p *Policy)
		values []string
		want   error
	}{
		{"glob owner", nil, []string{"OWNER=*"}, placeholder.ErrInvalidValue},
		{"path owner", nil, []string{"OWNER=a/b"}, placeholder.ErrInvalidValue},
		{"unknown in path", func(p *Policy) {
			p.NetworkPolicies["forge"].Endpoints[0].Rules[0].Allow.Path = "/x/{{BRANCH}}"
		}, nil, placeholder.ErrUnknown},
		{"partial host", func(p *Policy) {
			p.NetworkPolicies["forge"].Endpoints[0].Host = "api.{{FORGE_HOST}}"
		}, nil, placeholder.ErrField},
		{"issue in host", func(p *Policy) {
			p.NetworkPolicies["forge"].Endpoints[0].Host = "{{ISSUE_NUMBER}}"
		}, nil, placeholder.ErrField},
		{"broad host ip", func(p *Policy) {
			p.NetworkPolicies["host"].Endpoints[0].AllowedIPs[0] = "{{HOST_IP}}/8"
		}, []string{"HOST_IP=10.1.2.3"}, placeholder.ErrField},
		{"placeholder in method", func(p *Policy) {
			p.NetworkPolicies["forge"].Endpoints[0].Rules[0].Allow.Method = "{{OWNER}}"
		}, nil, placeholder.ErrField},
		{"placeholder in binary", func(p *Policy) {
			p.NetworkPolicies["forge"].Binaries[0].Path = "/usr/bin/{{OWNER}}"
		}, nil, placeholder.ErrField},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := samplePolicy()
			if tt.mutate != nil {
				tt.mutate(p)
			}
			v := placeholder.Values{}
			for _, a := range tt.values {
				k, val, _ := strings.Cut(a, "=")
				v[k] = val // bypass Set: Apply must validate on its own
			}
			_, err := ApplyPlaceholders(p, v)
			if !errors.Is(err, tt.want) {
				t.Fatalf("Apply err = %v, want %v", err, tt.want)
			}
		})
	}
}

func FuzzExpand(f *testing.F) {
	for _, s := range []string{"/repos/{{OWNER}}/x", "{{", "}}{{", "{{HOST_IP}}/32", "{{ A }}", "/{{ISSUE_NUMBER}}{{ISSUE_NUMBER}}"} {
		f.Add(s, "fullsend-ai", "7")
	}
	f.Fuzz(func(t *testing.T, s, owner, issue string) {
		v := placeholder.Values{}
		_ = v.Set(placeholder.Owner, owner)
		_ = v.Set(placeholder.IssueNumber, issue)
		for _, field := range []placeholder.Field{placeholder.FieldPath, placeholder.FieldHost, placeholder.FieldAllowedIP} {
			out, open, err := expandField(s, field, v)
			if err != nil {
				continue
			}
			// Substituted values are validated, so they never add glob or
			// path characters that were not in the input.
			for _, c := range []string{"*", "..", "?"} {
				if strings.Count(out, c) > strings.Count(s, c) {
					t.Fatalf("expansion of %q added %q: %q", s, c, out)
				}
			}
			if len(open) == 0 && strings.Contains(out, "{{") && !strings.Contains(s, "{{") {
				t.Fatalf("expansion invented a placeholder: %q", out)
			}
		}
	})
}

// TestApplyPlaceholdersNewFields: the endpoint path, GraphQL names and
// fields, the MCP tool and (nested) params matchers are substituted too,
// and OpenPlaceholders leaves the policy untouched.
func TestApplyPlaceholdersNewFields(t *testing.T) {
	p := &Policy{Version: 1, NetworkPolicies: map[string]NetworkPolicy{"x": {Name: "x",
		Endpoints: []Endpoint{{
			Host: "api.example.com", Port: 443, Path: "/repos/{{OWNER}}/**", Protocol: ProtocolMCP,
			Rules: []Rule{{Allow: Match{
				Method: "tools/call", Tool: &QueryMatch{Any: []string{"{{REPO_NAME}}_*"}},
				OperationName: "Get{{REPO_NAME}}", Fields: []string{"{{OWNER}}"},
				Params: map[string]ParamMatch{"args": {Object: map[string]ParamMatch{
					"repo": {Matcher: &QueryMatch{Glob: "{{OWNER}}/{{REPO_NAME}}"}}}}},
			}}},
		}},
		Binaries: []Binary{{Path: "/usr/bin/node"}},
	}}}
	open, err := OpenPlaceholders(p)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{placeholder.Owner, placeholder.RepoName}; !reflect.DeepEqual(open, want) {
		t.Fatalf("open = %v, want %v", open, want)
	}
	if p.NetworkPolicies["x"].Endpoints[0].Rules[0].Allow.Tool.Any[0] != "{{REPO_NAME}}_*" {
		t.Fatal("OpenPlaceholders mutated the tool matcher")
	}
	v, err := placeholder.ParseSet([]string{"OWNER=o", "REPO_NAME=r"})
	if err != nil {
		t.Fatal(err)
	}
	if open, err = ApplyPlaceholders(p, v); err != nil || len(open) != 0 {
		t.Fatalf("open %v, err %v", open, err)
	}
	ep := p.NetworkPolicies["x"].Endpoints[0]
	m := ep.Rules[0].Allow
	got := []string{ep.Path, m.Tool.Any[0], m.OperationName, m.Fields[0], m.Params["args"].Object["repo"].Matcher.Glob}
	if want := []string{"/repos/o/**", "r_*", "Getr", "o", "o/r"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("substituted %q, want %q", got, want)
	}
}
