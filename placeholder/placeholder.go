package placeholder

import (
	"errors"
	"fmt"
	"net/netip"
	"sort"
	"strconv"
	"strings"
)

// Known placeholder names.
const (
	Owner       = "OWNER"
	RepoName    = "REPO_NAME"
	IssueNumber = "ISSUE_NUMBER"
	HostIP      = "HOST_IP"
	ForgeHost   = "FORGE_HOST"
)

// Field is a kind of policy field a placeholder may appear in.
type Field int

// Policy field kinds.
const (
	// FieldPath is a path: L7 rule paths, query values and filesystem paths.
	FieldPath Field = iota + 1
	// FieldHost is an endpoint host.
	FieldHost
	// FieldAllowedIP is an allowed_ips entry.
	FieldAllowedIP
)

func (f Field) String() string {
	switch f {
	case FieldPath:
		return "path"
	case FieldHost:
		return "host"
	case FieldAllowedIP:
		return "allowed_ips"
	case FieldHostLabel:
		return "host label"
	}
	return "unknown"
}

type spec struct {
	fields   []Field
	validate func(string) error
	hint     string
	// example is a valid value, used to check a policy's shape before its
	// placeholders are resolved.
	example string
}

// forgeName is GitHub's and GitLab's owner/repository name syntax, without
// anything that could act as a glob or a path step.
var forgeName = lazyRegexp(`^[A-Za-z0-9](?:[A-Za-z0-9._-]{0,98}[A-Za-z0-9_])?$`)

// hostname is an RFC 1123 host name with at least two labels and no wildcard.
var hostname = lazyRegexp(`^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$`)

var specs = map[string]spec{
	Owner: {
		example:  "fullsend-ai",
		fields:   []Field{FieldPath},
		validate: validateForgeName,
		hint:     "an owner or group name such as fullsend-ai (letters, digits, '.', '_', '-')",
	},
	RepoName: {
		example:  "agent-sandbox",
		fields:   []Field{FieldPath},
		validate: validateForgeName,
		hint:     "a repository name such as agent-sandbox (letters, digits, '.', '_', '-')",
	},
	IssueNumber: {
		example: "1",
		fields:  []Field{FieldPath},
		validate: func(v string) error {
			n, err := strconv.ParseUint(v, 10, 63)
			if err != nil || n == 0 || strconv.FormatUint(n, 10) != v {
				return errors.New("not a positive decimal integer without leading zeros")
			}
			return nil
		},
		hint: "a positive integer such as 42",
	},
	HostIP: {
		example: "172.17.0.1",
		fields:  []Field{FieldHost, FieldAllowedIP},
		validate: func(v string) error {
			a, err := netip.ParseAddr(v)
			if err != nil || a.Zone() != "" {
				return errors.New("not an IP address literal")
			}
			if a.IsUnspecified() || a.IsLoopback() || a.IsLinkLocalUnicast() || a.IsMulticast() {
				return errors.New("unspecified, loopback, link-local or multicast addresses are always blocked by OpenShell")
			}
			return nil
		},
		hint: "the host's IP address as seen from the sandbox, such as 172.17.0.1",
	},
	ForgeHost: {
		example: "api.github.com",
		fields:  []Field{FieldHost},
		validate: func(v string) error {
			if len(v) > 253 || !hostname().MatchString(v) {
				return errors.New("not a lowercase DNS host name with at least two labels")
			}
			return nil
		},
		hint: "the forge's API host name, such as api.github.com or gitlab.example.com",
	},
	GCPRegion: {
		example:  "us-east5",
		fields:   []Field{FieldPath, FieldHostLabel},
		validate: matching(gcpRegion, "not a Google Cloud region such as us-east5, europe-west1 or global"),
		hint:     "a Google Cloud region such as us-east5 or europe-west1, or global",
	},
	GCPProject: {
		example:  "fullsend-ci",
		fields:   []Field{FieldPath},
		validate: matching(gcpProject, "not a Google Cloud project id (6-30 lowercase letters, digits and hyphens, starting with a letter)"),
		hint:     "a Google Cloud project id such as my-project-123",
	},
	AWSRegion: {
		example:  "us-east-1",
		fields:   []Field{FieldPath, FieldHostLabel},
		validate: matching(awsRegion, "not an AWS region such as us-east-1"),
		hint:     "an AWS region such as us-east-1 or eu-central-1",
	},
}

func validateForgeName(v string) error {
	if !forgeName().MatchString(v) || strings.Contains(v, "..") {
		return errors.New("not a forge name: only letters, digits, '.', '_' and '-' are allowed, no '..', no glob or path characters")
	}
	return nil
}

// ErrUnknown reports a placeholder name that fullsend does not define.
var ErrUnknown = errors.New("unknown placeholder")

// ErrInvalidValue reports a value that fails its placeholder's validator.
var ErrInvalidValue = errors.New("invalid placeholder value")

// ErrField reports a placeholder used in a field where it is not allowed.
var ErrField = errors.New("placeholder not allowed in this field")

// Names returns the known placeholder names, sorted.
func Names() []string {
	names := make([]string, 0, len(specs))
	for n := range specs {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Examples returns a valid example value for every known placeholder, to
// check the shape a policy will have once its placeholders are resolved.
func Examples() Values {
	v := Values{}
	for n, s := range specs {
		v[n] = s.example
	}
	return v
}

// Validate checks value against the rules of the named placeholder.
func Validate(name, value string) error {
	s, ok := specs[name]
	if !ok {
		return fmt.Errorf("%w {{%s}} (known: %s)", ErrUnknown, name, strings.Join(Names(), ", "))
	}
	if err := s.validate(value); err != nil {
		return fmt.Errorf("%w for {{%s}}: %q: %v; want %s", ErrInvalidValue, name, value, err, s.hint)
	}
	return nil
}

// Allowed reports whether the named placeholder may appear in a field kind.
func Allowed(name string, f Field) bool {
	for _, g := range specs[name].fields {
		if g == f {
			return true
		}
	}
	return false
}

// Ref is one placeholder occurrence inside a string.
type Ref struct {
	Name  string
	Start int // byte offset of "{{"
	End   int // byte offset just after "}}"
}

// Find returns the placeholder references in s. A "{{" without a matching
// "}}", or a name that is not an upper-case identifier, is an error: it
// would otherwise reach OpenShell as a literal glob.
func Find(s string) ([]Ref, error) {
	var refs []Ref
	for off := 0; ; {
		i := strings.Index(s[off:], "{{")
		if i < 0 {
			break
		}
		start := off + i
		j := strings.Index(s[start+2:], "}}")
		if j < 0 {
			return nil, fmt.Errorf("unterminated placeholder at offset %d in %q", start, s)
		}
		name := strings.TrimSpace(s[start+2 : start+2+j])
		if !isIdent(name) {
			return nil, fmt.Errorf("malformed placeholder %q in %q: names are upper-case letters, digits and '_'", s[start:start+4+j], s)
		}
		refs = append(refs, Ref{Name: name, Start: start, End: start + 4 + j})
		off = start + 4 + j
	}
	return refs, nil
}

func isIdent(s string) bool {
	if s == "" || s[0] < 'A' || s[0] > 'Z' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// Check validates every placeholder in s for a field kind: the name must be
// known and allowed there. It returns the names found.
func Check(s string, f Field) ([]string, error) {
	refs, err := Find(s)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(refs))
	for _, r := range refs {
		if _, ok := specs[r.Name]; !ok {
			return nil, fmt.Errorf("%w {{%s}} (known: %s)", ErrUnknown, r.Name, strings.Join(Names(), ", "))
		}
		if !Allowed(r.Name, f) {
			return nil, fmt.Errorf("%w: {{%s}} may not appear in a %s field", ErrField, r.Name, f)
		}
		names = append(names, r.Name)
	}
	return names, nil
}

// Expand replaces the placeholders of s that have a value in v and leaves
// the others in place. It returns the expanded string and the names left open.
// Values must already be validated (see Values.Set).
func Expand(s string, f Field, v Values) (string, []string, error) {
	refs, err := Find(s)
	if err != nil || len(refs) == 0 {
		return s, nil, err
	}
	var b strings.Builder
	var open []string
	last := 0
	for _, r := range refs {
		if !Allowed(r.Name, f) {
			if _, known := specs[r.Name]; !known {
				return "", nil, fmt.Errorf("%w {{%s}} (known: %s)", ErrUnknown, r.Name, strings.Join(Names(), ", "))
			}
			return "", nil, fmt.Errorf("%w: {{%s}} may not appear in a %s field", ErrField, r.Name, f)
		}
		b.WriteString(s[last:r.Start])
		if val, ok := v[r.Name]; ok {
			b.WriteString(val)
		} else {
			b.WriteString(s[r.Start:r.End])
			open = append(open, r.Name)
		}
		last = r.End
	}
	b.WriteString(s[last:])
	return b.String(), open, nil
}
