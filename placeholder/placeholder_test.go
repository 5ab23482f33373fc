package placeholder

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/fullsend-ai/agent-sandbox/bundle"
	"github.com/fullsend-ai/agent-sandbox/openshell"
)

func TestValidate(t *testing.T) {
	tests := []struct {
		name, value string
		ok          bool
	}{
		{Owner, "fullsend-ai", true},
		{Owner, "a", true},
		{Owner, "*", false},
		{Owner, "**", false},
		{Owner, "o/r", false},
		{Owner, "..", false},
		{Owner, "a..b", false},
		{Owner, "", false},
		{Owner, "-lead", false},
		{Owner, "x{y}", false},
		{RepoName, "agent-sandbox", true},
		{RepoName, "repo.go", true},
		{RepoName, "re po", false},
		{IssueNumber, "42", true},
		{IssueNumber, "0", false},
		{IssueNumber, "042", false},
		{IssueNumber, "-1", false},
		{IssueNumber, "1e3", false},
		{IssueNumber, "99999999999999999999", false},
		{HostIP, "172.17.0.1", true},
		{HostIP, "fd00::1", true},
		{HostIP, "127.0.0.1", false},
		{HostIP, "169.254.169.254", false},
		{HostIP, "0.0.0.0", false},
		{HostIP, "host.docker.internal", false},
		{HostIP, "10.0.0.0/8", false},
		{ForgeHost, "api.github.com", true},
		{ForgeHost, "gitlab.example.com", true},
		{ForgeHost, "localhost", false},
		{ForgeHost, "*.github.com", false},
		{ForgeHost, "API.github.com", false},
		{ForgeHost, "github.com.", false},
		{"NOPE", "x", false},
	}
	for _, tt := range tests {
		t.Run(tt.name+"="+tt.value, func(t *testing.T) {
			err := Validate(tt.name, tt.value)
			if (err == nil) != tt.ok {
				t.Fatalf("Validate(%q, %q) = %v, want ok=%v", tt.name, tt.value, err, tt.ok)
			}
		})
	}
}

func TestFindAndCheck(t *testing.T) {
	tests := []struct {
		in      string
		field   Field
		want    []string
		wantErr error
	}{
		{"/repos/{{OWNER}}/{{REPO_NAME}}/issues/{{ISSUE_NUMBER}}", FieldPath, []string{Owner, RepoName, IssueNumber}, nil},
		{"/plain/path/**", FieldPath, []string{}, nil},
		{"{{ FORGE_HOST }}", FieldHost, []string{ForgeHost}, nil},
		{"/x/{{ISSUE_NUMBER}}", FieldHost, nil, ErrField},
		{"{{OWNER}}", FieldHost, nil, ErrField},
		{"/x/{{BRANCH}}", FieldPath, nil, ErrUnknown},
		{"/x/{{OWNER", FieldPath, nil, errAny},
		{"/x/{{lower}}", FieldPath, nil, errAny},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := Check(tt.in, tt.field)
			switch {
			case tt.wantErr == errAny && err != nil:
				return
			case tt.wantErr != nil:
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				return
			case err != nil:
				t.Fatalf("unexpected error %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
		})
	}
}

var errAny = errors.New("any error")

func samplePolicy() *openshell.Policy {
	return &openshell.Policy{
		Version: 1,
		FilesystemPolicy: &openshell.FilesystemPolicy{
			ReadOnly:  []string{"/usr"},
			ReadWrite: []string{"/sandbox/{{REPO_NAME}}"},
			Sources:   map[string][]bundle.Source{"/sandbox/{{REPO_NAME}}": {{File: "agents/a.md", Line: 3}}},
		},
		NetworkPolicies: map[string]openshell.NetworkPolicy{
			"forge": {
				Name: "forge",
				Endpoints: []openshell.Endpoint{{
					Host: "{{FORGE_HOST}}", Port: 443, Protocol: "rest", Enforcement: "enforce",
					Rules: []openshell.Rule{{Allow: openshell.Match{
						Method: "POST", Path: "/repos/{{OWNER}}/{{REPO_NAME}}/issues/{{ISSUE_NUMBER}}/comments",
						Query: map[string]openshell.QueryMatch{"n": {Any: []string{"{{ISSUE_NUMBER}}"}}},
					}}},
				}},
				Binaries: []openshell.Binary{{Path: "/usr/bin/curl"}},
			},
			"host": {
				Name:      "host",
				Endpoints: []openshell.Endpoint{{Host: "host.docker.internal", Port: 8081, AllowedIPs: []string{"{{HOST_IP}}"}}},
				Binaries:  []openshell.Binary{{Path: "/usr/bin/curl"}},
			},
		},
	}
}

func TestApply(t *testing.T) {
	p := samplePolicy()
	open, err := Open(p)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{ForgeHost, HostIP, IssueNumber, Owner, RepoName}; !reflect.DeepEqual(open, want) {
		t.Fatalf("Open = %v, want %v", open, want)
	}
	if p.NetworkPolicies["forge"].Endpoints[0].Host != "{{FORGE_HOST}}" {
		t.Fatal("Open mutated the policy")
	}
	v, err := ParseSet([]string{"OWNER=o", "REPO_NAME=r", "ISSUE_NUMBER=5", "HOST_IP=172.17.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	open, err = Apply(p, v)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{ForgeHost}; !reflect.DeepEqual(open, want) {
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
		mutate func(p *openshell.Policy)
		values []string
		want   error
	}{
		{"glob owner", nil, []string{"OWNER=*"}, ErrInvalidValue},
		{"path owner", nil, []string{"OWNER=a/b"}, ErrInvalidValue},
		{"unknown in path", func(p *openshell.Policy) {
			p.NetworkPolicies["forge"].Endpoints[0].Rules[0].Allow.Path = "/x/{{BRANCH}}"
		}, nil, ErrUnknown},
		{"partial host", func(p *openshell.Policy) {
			p.NetworkPolicies["forge"].Endpoints[0].Host = "api.{{FORGE_HOST}}"
		}, nil, ErrField},
		{"issue in host", func(p *openshell.Policy) {
			p.NetworkPolicies["forge"].Endpoints[0].Host = "{{ISSUE_NUMBER}}"
		}, nil, ErrField},
		{"broad host ip", func(p *openshell.Policy) {
			p.NetworkPolicies["host"].Endpoints[0].AllowedIPs[0] = "{{HOST_IP}}/8"
		}, []string{"HOST_IP=10.1.2.3"}, ErrField},
		{"placeholder in method", func(p *openshell.Policy) {
			p.NetworkPolicies["forge"].Endpoints[0].Rules[0].Allow.Method = "{{OWNER}}"
		}, nil, ErrField},
		{"placeholder in binary", func(p *openshell.Policy) {
			p.NetworkPolicies["forge"].Binaries[0].Path = "/usr/bin/{{OWNER}}"
		}, nil, ErrField},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := samplePolicy()
			if tt.mutate != nil {
				tt.mutate(p)
			}
			v := Values{}
			for _, a := range tt.values {
				k, val, _ := strings.Cut(a, "=")
				v[k] = val // bypass Set: Apply must validate on its own
			}
			_, err := Apply(p, v)
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
		v := Values{}
		_ = v.Set(Owner, owner)
		_ = v.Set(IssueNumber, issue)
		for _, field := range []Field{FieldPath, FieldHost, FieldAllowedIP} {
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
