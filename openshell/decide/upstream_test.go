package decide

import (
	"bytes"
	"errors"
	"io"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/fullsend-ai/agent-sandbox/internal/fixture"
	"github.com/fullsend-ai/agent-sandbox/openshell"

	"gopkg.in/yaml.v3"
)

// upstreamFixture is one document of the upstream fixtures (upstreamFile):
// a policy transcribed from one of OpenShell's own decision tests (opa.rs
// test data, l7/*.rs) and the verdicts its tests assert. Each case cites the upstream test as
// file:line per tag; a case is replayed only for the tags it cites.
type upstreamFixture struct {
	// Source is the upstream file the cases come from (cite lines refer to it).
	Source string `yaml:"source"`
	// Data names the upstream policy fixture the policy transcribes.
	Data string `yaml:"data"`
	// Policy is the policy in our YAML format.
	Policy string `yaml:"policy"`
	// Relaxed replays with binary identity relaxed (opa.rs
	// from_strings_with_binary_identity_required(.., false)).
	Relaxed bool                   `yaml:"relaxed"`
	Cases   []upstreamDecisionCase `yaml:"cases"`
}

type upstreamDecisionCase struct {
	// Test is the upstream #[test] function name.
	Test string `yaml:"test"`
	// Cite maps an OpenShell tag to the line of the test in Source.
	Cite map[string]int `yaml:"cite"`
	// Request in the policy-test syntax (requestSyntax).
	Request string `yaml:"request"`
	// Want is allow, deny or audit (a denial OpenShell's Rego returns on an
	// endpoint whose enforcement is not "enforce": the proxy lets it
	// through and logs it, l7/mod.rs enforcement).
	Want string `yaml:"want"`
	// Skip says why the case cannot be expressed in our request syntax.
	Skip string `yaml:"skip"`
	// Note explains a transcription choice.
	Note string `yaml:"note"`

	// Canonicalisation cases (a fixture without a policy, l7/path.rs):
	// Target is the request-target after the authority; Path the canonical
	// path OpenShell's Rego sees, or Error the CanonicalizeError variant.
	Target            string `yaml:"target"`
	AllowEncodedSlash bool   `yaml:"allow_encoded_slash"`
	Path              string `yaml:"path"`
	Error             string `yaml:"error"`
	// Query cases (l7/rest.rs parse_target_query): the decoded parameters,
	// or QueryError when OpenShell rejects the query.
	Query      map[string][]string `yaml:"query"`
	QueryError bool                `yaml:"query_error"`
}

// canonErrors maps path.rs CanonicalizeError variants to ours.
var canonErrors = map[string]error{
	"NullOrControlByte":       errPathControl,
	"InvalidPercentEncoding":  errPathPercent,
	"EncodedSlashNotAllowed":  errPathEncodedSlash,
	"FragmentInRequestTarget": errPathFragment,
	"NonAscii":                errPathNonASCII,
	"TraversalAboveRoot":      errPathAboveRoot,
	"ResidualDotSegment":      errPathResidualDot,
	"PathTooLong":             errPathTooLong,
}

// replayCanon checks one canonicalisation case through the request syntax.
func replayCanon(t *testing.T, f string, c *upstreamDecisionCase) {
	t.Helper()
	target := c.Target
	if target == "LONG" {
		target = "/" + strings.Repeat("a", 4096)
	}
	r, err := ParseRequest("GET https://canon.test" + target + " from /usr/bin/curl")
	if err != nil {
		t.Errorf("%s %s: %v", f, c.Test, err)
		return
	}
	if c.Query != nil || c.QueryError {
		want := url.Values(c.Query)
		if len(want) == 0 {
			want = nil
		}
		if (r.QueryError != "") != c.QueryError || !c.QueryError && !reflect.DeepEqual(r.Query, want) {
			t.Errorf("l7/rest.rs %s: %q: got query %v (error %q), want %v (error %v)", c.Test, c.Target, r.Query, r.QueryError, want, c.QueryError)
		}
		if c.Path == "" {
			return
		}
	}
	for tag := range c.Cite {
		got, err := canonicalRequestPath(r.Path, c.AllowEncodedSlash, tag)
		switch {
		case c.Error != "" && !errors.Is(err, canonErrors[c.Error]):
			t.Errorf("l7/path.rs:%d@%s %s: %q: got (%q, %v), want error %s", c.Cite[tag], tag, c.Test, c.Target, got, err, c.Error)
		case c.Error == "" && (err != nil || got != c.Path):
			t.Errorf("l7/path.rs:%d@%s %s: %q: got (%q, %v), want %q", c.Cite[tag], tag, c.Test, c.Target, got, err, c.Path)
		}
	}
}

// TestUpstreamDecisions replays OpenShell's own decision tests against
// Decide, for each tag the case cites.
func TestUpstreamDecisions(t *testing.T) {
	dir := upstreamFile(t, "")
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no upstream fixtures in %s: %v", dir, err)
	}
	perTag := map[string]int{}
	skipped := 0
	for _, f := range files {
		for _, fx := range readUpstreamFixtures(t, f) {
			n, s := replayUpstream(t, f, &fx)
			for k, v := range n {
				perTag[k] += v
			}
			skipped += s
		}
	}
	t.Logf("replayed per tag: %v; skipped: %d", perTag, skipped)
}

// upstreamFile is the path of name (the directory itself when name is
// empty) among OpenShell's decision tests transcribed as fixtures: they
// transcribe another project's tests, so they are read in ../shared/fixtures
// (internal/fixture), not carried here.
func upstreamFile(t testing.TB, name string) string {
	t.Helper()
	return fixture.Path(t, path.Join("from-project/openshell/decide/testdata/upstream", name))
}

// readUpstreamFixtures decodes every fixture document of file f.
func readUpstreamFixtures(t *testing.T, f string) []upstreamFixture {
	t.Helper()
	data, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	var out []upstreamFixture
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var fx upstreamFixture
		if err := dec.Decode(&fx); errors.Is(err, io.EOF) {
			return out
		} else if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out = append(out, fx)
	}
}

// replayUpstream replays one fixture document of file f and returns the
// cases replayed per tag and the number skipped.
func replayUpstream(t *testing.T, f string, fx *upstreamFixture) (map[string]int, int) {
	t.Helper()
	perTag := map[string]int{}
	skipped := 0
	if fx.Policy == "" {
		for i := range fx.Cases {
			c := &fx.Cases[i]
			if c.Skip != "" {
				skipped++
				continue
			}
			replayCanon(t, f, c)
			for tag := range c.Cite {
				perTag[tag]++
			}
		}
		return perTag, skipped
	}
	{
		p, err := openshell.Unmarshal([]byte(fx.Policy))
		if err != nil {
			t.Fatalf("%s: policy: %v", f, err)
		}
		deciders := map[string]*Decider{}
		for _, tag := range openshell.SupportedVersions() {
			d, err := New(p, tag)
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if fx.Relaxed {
				d = d.RelaxedBinaryIdentity()
			}
			deciders[tag] = d
		}
		for i, c := range fx.Cases {
			if len(c.Cite) == 0 {
				t.Errorf("%s case %d (%s): no cite", f, i, c.Test)
			}
			if c.Skip != "" {
				skipped++
				continue
			}
			r, err := ParseRequest(c.Request)
			if err != nil {
				t.Errorf("%s case %d (%s): %v", f, i, c.Test, err)
				continue
			}
			for tag, line := range c.Cite {
				d, ok := deciders[tag]
				if !ok {
					t.Errorf("%s case %d: unsupported tag %s", f, i, tag)
					continue
				}
				perTag[tag]++
				got := d.Decide(r)
				if got.Verdict() != c.Want {
					t.Errorf("%s:%d@%s %s\n  %s\n  got %s (%s), want %s",
						strings.TrimPrefix(fx.Source, "crates/openshell-supervisor-network/"), line, tag, c.Test,
						c.Request, got.Verdict(), got.Reason, c.Want)
				}
			}
		}
	}
	return perTag, skipped
}
