package placeholder

import (
	"errors"
	"reflect"
	"testing"
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
