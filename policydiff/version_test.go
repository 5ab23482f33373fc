package policydiff

import (
	"os"
	"slices"
	"strings"
	"testing"
)

// A change of the fullsend release the project pins (.fullsend-version)
// and of the OpenShell target is a row of each agent, graded by what it
// changes: review attaches provider github-ro with a credential, which
// OpenShell before v0.0.103 resolves at every endpoint of the policy.
func TestTargetChange(t *testing.T) {
	pinned := func(r string) pin { return pin{release: r, file: "../.fullsend-version", read: true} }
	none := pin{read: true}
	for _, tc := range []struct {
		name                 string
		basePin, headPin     pin
		baseOS, headOS       string
		kind, risk, category string
		blamed               bool // on .fullsend-version line 1
	}{
		{"an older release", pinned("v0.2.0"), pinned("v0.1.0"), "v0.0.111", "v0.0.111", "fullsend_version", RiskHigh, "", true},
		{"a newer release", pinned("v0.1.0"), pinned("v0.2.0"), "v0.0.111", "v0.0.111", "fullsend_version", RiskMedium, "", true},
		{"a first pin", none, pinned("v0.1.0"), "v0.0.111", "v0.0.111", "fullsend_version", RiskMedium, "", true},
		{"the pin removed", pinned("v0.1.0"), none, "v0.0.111", "v0.0.111", "fullsend_version", RiskHigh, "", true},
		{"a release targeting an OpenShell before credential binding", pinned("v0.2.0"), pinned("v0.1.0"), "v0.0.111", "v0.0.83",
			"openshell_version", RiskCritical, CatCredentialScope, true},
		{"the same by flags", pin{}, pin{}, "v0.0.111", "v0.0.83", "openshell_version", RiskCritical, CatCredentialScope, false},
		{"an OpenShell that binds credentials", pin{}, pin{}, "v0.0.83", "v0.0.111", "openshell_version", RiskMedium, "", false},
		{"releases alike for this policy", none, none, "v0.0.111", "v0.0.111", "", "", "", false},
		{"a bundle has no pin to compare", pin{}, pinned("v0.1.0"), "v0.0.111", "v0.0.111", "", "", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bundleDir := providersBundle(t)
			var sides [2]*Side
			for i, v := range []struct {
				p  pin
				os string
			}{{tc.basePin, tc.baseOS}, {tc.headPin, tc.headOS}} {
				s, err := ReadBundle("bundle", os.DirFS(bundleDir))
				if err != nil {
					t.Fatal(err)
				}
				s.OpenShellVersion, s.pin = v.os, v.p
				sides[i] = s
			}
			r := Compare(sides[0], sides[1], Options{Agents: []string{"review"}})
			var got []Change
			for _, ad := range r.Agents {
				for _, c := range ad.Changes {
					if strings.HasSuffix(c.Kind, "_version") {
						got = append(got, c)
					}
				}
			}
			if tc.kind == "" {
				if len(got) > 0 {
					t.Fatalf("want no version row: %+v", got)
				}
				return
			}
			i := slices.IndexFunc(got, func(c Change) bool { return c.Kind == tc.kind })
			if i < 0 {
				t.Fatalf("no %s row: %+v", tc.kind, r.Agents)
			}
			c := got[i]
			if c.Risk != tc.risk || (tc.category != "" && !slices.Contains(c.Categories, tc.category)) {
				t.Errorf("%s: risk %s %v (%s), want %s %q", c.Kind, c.Risk, c.Categories, c.Why, tc.risk, tc.category)
			}
			if blamed := len(c.From) > 0 && c.From[0].File == "../.fullsend-version" && c.From[0].Line == 1; blamed != tc.blamed {
				t.Errorf("sources %+v, want blamed on .fullsend-version: %v", c.From, tc.blamed)
			}
		})
	}
}

// A side compiles for the OpenShell version asked for, else for the one
// its pinned release targets when the caller knows that release.
func TestTarget(t *testing.T) {
	req := Request{Releases: map[string]string{"v0.2.0": "v0.0.83"}}
	for _, tc := range []struct {
		asked   string
		release string
		want    string
	}{
		{"", "v0.2.0", "v0.0.83"},
		{"v0.0.111", "v0.2.0", "v0.0.111"},
		{"", "v0.3.0", ""},
		{"", "", ""},
	} {
		if got := req.target(tc.asked, pin{release: tc.release}); got != tc.want {
			t.Errorf("target(%q, %q) = %q, want %q", tc.asked, tc.release, got, tc.want)
		}
	}
}

// The first line of .fullsend-version is one release tag, as the
// templates read it; anything else is an error at its line.
func TestParsePin(t *testing.T) {
	for _, tc := range []struct {
		data, want, err string
	}{
		{"v0.1.0\n", "v0.1.0", ""},
		{"  v1.22.3  \r\nanything\n", "v1.22.3", ""},
		{"", "", ".fullsend-version:1: \"\" is not a fullsend release tag"},
		{"0.1.0\n", "", "is not a fullsend release tag"},
		{"v0.1.0-rc1\n", "", "is not a fullsend release tag"},
		{"main\n", "", "is not a fullsend release tag"},
	} {
		p, err := parsePin(".fullsend-version", []byte(tc.data))
		if p.release != tc.want || (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("parsePin(%q) = %q, %v; want %q, %q", tc.data, p.release, err, tc.want, tc.err)
		}
	}
}

func FuzzParsePin(f *testing.F) {
	for _, s := range []string{"v0.1.0\n", "v1.2.3", "\x00", "v0.1.0\x1b[31m\n", strings.Repeat("v", 5000)} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := parsePin(".fullsend-version", data)
		if err == nil && !releaseTag.MatchString(p.release) {
			t.Fatalf("accepted %q", p.release)
		}
		if err != nil && strings.ContainsAny(err.Error(), "\x00\x1b\n") {
			t.Fatalf("raw control characters in %q", err)
		}
	})
}
