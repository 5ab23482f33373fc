package suggest_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/fullsend-ai/agent-sandbox/openshell"
	"github.com/fullsend-ai/agent-sandbox/openshell/decide"
	"github.com/fullsend-ai/agent-sandbox/placeholder"
	"github.com/fullsend-ai/agent-sandbox/suggest"
)

// decider prepares pol for decisions with the job's values.
func decider(t *testing.T, pol *openshell.Policy) *decide.Decider {
	t.Helper()
	p := pol.Clone()
	vals := placeholder.Examples()
	for k, v := range job {
		vals[k] = v
	}
	if _, err := openshell.ApplyPlaceholders(p, vals); err != nil {
		t.Fatal(err)
	}
	d, err := decide.New(p, "")
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// instance turns a rule path into a concrete path it matches: the job's
// values, "x" for "*", "a/b" for "**".
func instance(t *testing.T, path string) string {
	out, _, err := placeholder.Expand(path, placeholder.FieldPath, job)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return strings.ReplaceAll(strings.ReplaceAll(out, "**", "a/b"), "*", "x")
}

// pathRE is a rule path (placeholders expanded) as a regular expression:
// "**" any characters, "*" any within a segment.
func pathRE(t *testing.T, path string) *regexp.Regexp {
	out, _, err := placeholder.Expand(path, placeholder.FieldPath, job)
	if err != nil {
		t.Fatal(err)
	}
	q := regexp.QuoteMeta(out)
	q = strings.ReplaceAll(q, `/\*\*`, `(/.*)?`)
	q = strings.ReplaceAll(q, `\*`, `[^/]*`)
	return regexp.MustCompile("^" + q + "$")
}

// universe is the requests the property is checked on: every binary and
// endpoint of both policies and of the denials, every method, every path
// a rule, a grant or a denial names, and paths no rule names.
type universe struct {
	bins  []string
	dests []string // host:port
	paths []string
}

func (u *universe) add(list *[]string, v string) {
	if v != "" && !strings.Contains(v, "{{") && !slices.Contains(*list, v) {
		*list = append(*list, v)
	}
}

func (u *universe) policy(t *testing.T, pol *openshell.Policy) {
	for _, np := range pol.NetworkPolicies {
		for _, b := range np.Binaries {
			u.add(&u.bins, b.Path)
		}
		for _, ep := range np.Endpoints {
			h, _, _ := placeholder.Expand(ep.Host, placeholder.FieldHost, job)
			u.add(&u.dests, net.JoinHostPort(strings.ReplaceAll(h, "*", "x"), strconv.Itoa(ep.Port)))
			for _, r := range ep.Rules {
				u.add(&u.paths, instance(t, r.Allow.Path))
			}
		}
	}
}

// newlyAllowed checks the property of issue 29 §3 on one result: after the
// patch is written and the project recompiled, the requests allowed now and
// denied before are exactly those the suggestions' grants list.
func newlyAllowed(t *testing.T, res *suggest.Result) {
	t.Helper()
	dir := copyProject(t)
	if err := suggest.Write(dir, res, noCI); err != nil {
		t.Fatal(err)
	}
	after, err := compiler(t)(context.Background(), os.DirFS(dir))
	if err != nil {
		t.Fatalf("the patched project does not compile: %v", err)
	}
	beforePol := target(t, triage).Policy
	u := &universe{bins: []string{"/usr/bin/nc", "/usr/bin/jq"}, paths: []string{"/", "/fullsend-probe"}}
	u.policy(t, beforePol)
	u.policy(t, after.Policy)
	var grants []suggest.Grant
	for _, s := range res.Suggestions {
		grants = append(grants, s.Grants...)
		for _, g := range s.Grants {
			u.add(&u.paths, instance(t, g.Path))
		}
	}
	for _, d := range res.Denials {
		u.add(&u.bins, d.Binary)
		u.add(&u.paths, d.Path)
		if d.Host != "" && d.Port != 0 {
			u.add(&u.dests, net.JoinHostPort(d.Host, strconv.Itoa(d.Port)))
		}
	}
	before, now := decider(t, beforePol), decider(t, after.Policy)
	for _, text := range u.requests() {
		r, err := decide.ParseRequest(text)
		if err != nil {
			continue
		}
		newly := now.Decide(r).Allowed && !before.Decide(r).Allowed
		listed := !before.Decide(r).Allowed && claimed(t, grants, r)
		if newly != listed {
			t.Errorf("%s: newly allowed %v, listed in a grant %v", text, newly, listed)
		}
	}
}

func (u *universe) requests() []string {
	var out []string
	for _, b := range u.bins {
		for _, hp := range u.dests {
			out = append(out, fmt.Sprintf("CONNECT %s from %s", hp, b))
			_, port, _ := net.SplitHostPort(hp)
			scheme := map[bool]string{true: "https", false: "http"}[port == "443"]
			for _, m := range []string{"GET", "HEAD", "OPTIONS", "POST", "PUT", "PATCH", "DELETE"} {
				for _, p := range u.paths {
					out = append(out, fmt.Sprintf("%s %s://%s%s from %s", m, scheme, hp, p, b))
				}
			}
		}
	}
	return out
}

// claimed reports whether a grant covers request r.
func claimed(t *testing.T, grants []suggest.Grant, r *decide.Request) bool {
	return slices.ContainsFunc(grants, func(g suggest.Grant) bool {
		if g.Binary != r.Binary || g.Host != r.Host || g.Port != r.Port {
			return false
		}
		return r.Method == "" || (g.Method == "*" || g.Method == r.Method) && pathRE(t, g.Path).MatchString(r.Path)
	})
}

// Issue 29 §3: apply any patch, recompile, and the set of newly allowed
// (binary, host, port, method, path) is exactly what the grants list; every
// binary a patch adds is named. T4-1: a binary-not-allowed reason naming
// another policy copies none of its binaries.
func TestGrantsAreExactlyNewlyAllowed(t *testing.T) {
	t41 := writeLog(t, "2026-04-01T04:08:00.000Z OCSF NET:OPEN [MED] DENIED /usr/bin/jq(88) -> host.docker.internal:8081 [policy:- engine:opa] [reason:binary '/usr/bin/jq' not allowed in policy 'iamcredentials_googleapis_com_443' (ancestors: [/usr/bin/bash], cmdline: []). SYMLINK HINT: the binary path is the kernel-resolved target]")
	curlOnly := writeLog(t, "2026-04-01T04:00:00.000Z OCSF NET:OPEN [MED] DENIED /usr/bin/curl(1) -> downloads.example.com:443 [policy:- engine:opa] [reason:endpoint downloads.example.com:443 is not allowed by any policy]")
	tests := []struct {
		name  string
		files []string
	}{
		{"l7 write", []string{logs + "l7-write.log"}},
		{"l4", []string{logs + "l4.log"}},
		{"binary", []string{logs + "binary.log"}},
		{"query", []string{logs + "query.log"}},
		{"siblings", []string{logs + "siblings.log"}},
		{"mixed", []string{logs + "l7-write.log", logs + "l4.log", logs + "binary.log", logs + "query.log"}},
		{"reproducer", []string{writeLog(t, reproducer...)}},
		{"T4-1 reason names another policy", []string{t41}},
		{"curl-only L4", []string{curlOnly}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := run(t, runOpts{values: job}, tt.files...)
			if len(res.Suggestions) == 0 {
				t.Fatalf("no suggestion to apply (manual %+v)", res.Manual)
			}
			newlyAllowed(t, res)
			for _, s := range res.Suggestions {
				if len(s.Grants) == 0 {
					t.Errorf("%s %s lists no grant", s.ID, s.Value)
				}
			}
		})
	}
	t.Run("curl-only endpoint declares curl", func(t *testing.T) {
		res := run(t, runOpts{values: job}, curlOnly)
		if !strings.Contains(res.Patch, "+      binaries:\n+        - /usr/bin/curl\n") {
			t.Errorf("the endpoint does not declare exactly curl:\n%s", res.Patch)
		}
	})
	t.Run("T4-1 copies no binary", func(t *testing.T) {
		res := run(t, runOpts{values: job}, t41)
		if strings.Contains(res.Patch, "node") || strings.Contains(res.Patch, "claude") || strings.Contains(res.Patch, "python") {
			t.Errorf("another policy's binaries were copied:\n%s", res.Patch)
		}
	})
}

// Issue 29 §3: --only applies a chosen subset: those suggestions keep the
// ids a full run gives them, the patch holds only them (and still grants
// exactly what they list), the others are named in a warning; an id the
// analysis does not have is an error.
func TestOnlySubset(t *testing.T) {
	files := []string{logs + "l7-write.log", logs + "l4.log", logs + "binary.log"}
	full := run(t, runOpts{values: job}, files...)
	if ids := len(full.Suggestions); ids != 3 {
		t.Fatalf("want 3 suggestions to choose from, got %d", ids)
	}
	res := run(t, runOpts{values: job, only: []string{"S1", "S3"}}, files...)
	var ids []string
	for _, s := range res.Suggestions {
		ids = append(ids, s.ID)
	}
	if !slices.Equal(ids, []string{"S1", "S3"}) || res.Suggestions[0].Value != full.Suggestions[0].Value || res.Suggestions[1].Value != full.Suggestions[2].Value {
		t.Fatalf("suggestions %q (%v), want S1 and S3 of the full run", ids, suggested(res))
	}
	if strings.Contains(res.Patch, "python3.11") || !strings.Contains(full.Patch, "python3.11") {
		t.Errorf("S2 (add-binary python3.11) is in the --only patch:\n%s", res.Patch)
	}
	if !slices.ContainsFunc(res.Warnings, func(w string) bool { return strings.Contains(w, "--only): S2") }) {
		t.Errorf("warnings = %q", res.Warnings)
	}
	newlyAllowed(t, res)
	if _, err := tryRun(t, runOpts{values: job, only: []string{"S9"}}, files...); !errors.Is(err, suggest.ErrOnly) {
		t.Errorf("--only S9: err = %v, want ErrOnly", err)
	}
}
