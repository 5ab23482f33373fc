package suggest

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/fullsend-ai/agent-sandbox/openshell/decide"
)

// probeMethods are the methods a suggestion must not open besides its own.
var probeMethods = []string{"GET", "POST", "PUT", "PATCH", "DELETE"}

// probesOf are the probes of all of s's requests, each once, in the order
// they were made.
func (p *planner) probesOf(s *Suggestion) []*decide.Request {
	var out []*decide.Request
	seen := map[string]bool{}
	for _, r := range s.requests {
		for _, probe := range p.probesFor(s, r) {
			if key := probe.String(); !seen[key] {
				seen[key] = true
				out = append(out, probe)
			}
		}
	}
	return out
}

// probesFor are the requests near r that must stay denied.
func (p *planner) probesFor(s *Suggestion, r *decide.Request) []*decide.Request {
	var texts []string
	if r.Method != "" {
		texts = l7Probes(s, r)
	} else if s.Provisional {
		texts = readOnlyProbes(r)
	}
	if !(s.Change == "add-binary" && s.Value == "/usr/bin/nc") {
		texts = append(texts, fmt.Sprintf("CONNECT %s from /usr/bin/nc", hostPort(r.Host, r.Port)))
	}
	return parseProbes(texts)
}

// parseProbes parses the probes' texts; a probe that does not parse is
// left out.
func parseProbes(texts []string) []*decide.Request {
	var out []*decide.Request
	for _, text := range texts {
		if q, err := decide.ParseRequest(text); err == nil {
			out = append(out, q)
		}
	}
	return out
}

// l7Probes are the requests near an HTTP request r: the other methods on
// its path, another value in each placeholder segment of the rule, and a
// sibling path.
func l7Probes(s *Suggestion, r *decide.Request) []string {
	var out []string
	for _, m := range probeMethods {
		if s.leavesDenied(m, r.Method) {
			out = append(out, l7Probe(r, m, r.Path))
		}
	}
	// Another issue, owner or repository: a segment the rule holds as
	// a placeholder, with a value the job does not have.
	for _, probe := range placeholderProbes(s, r.Path) {
		out = append(out, l7Probe(r, r.Method, probe))
	}
	if !strings.Contains(s.Value, "*") && strings.Count(r.Path, "/") >= 2 {
		sib := r.Path[:strings.LastIndexByte(r.Path, '/')+1] + "fullsend-probe"
		out = append(out, l7Probe(r, r.Method, sib))
	}
	return out
}

// leavesDenied reports whether a probe of method m belongs beside a
// request of method requested: m is not the request's, the suggestion
// does not grant it, and it is not the GET of a provisional read-only
// endpoint.
func (s *Suggestion) leavesDenied(m, requested string) bool {
	return !s.methods[m] && m != requested && !(s.Provisional && m == "GET")
}

// l7Probe is the text of HTTP request r with another method or path.
func l7Probe(r *decide.Request, method, path string) string {
	prefix := ""
	if r.Forward {
		prefix = "forward "
	}
	return fmt.Sprintf("%s%s %s://%s%s from %s", prefix, method, r.Scheme, hostPort(r.Host, r.Port), path, r.Binary)
}

// readOnlyProbes are the writes that access: read-only must not let the
// binary of the CONNECT r make.
func readOnlyProbes(r *decide.Request) []string {
	var out []string
	for _, m := range []string{"POST", "PUT", "DELETE"} {
		out = append(out, fmt.Sprintf("%s %s://%s/ from %s", m, schemeFor(r.Port), hostPort(r.Host, r.Port), r.Binary))
	}
	return out
}

// schemeFor is the scheme a request to port is taken to use: https on
// 443, else http.
func schemeFor(port int) string {
	if port == 443 {
		return "https"
	}
	return "http"
}

// placeholderProbes returns reqPath with one placeholder segment of the
// suggestion's rule changed: ISSUE_NUMBER to the next number, a name to
// "fullsend-probe".
func placeholderProbes(s *Suggestion, reqPath string) []string {
	rules := s.Rules
	if s.Change == "add-rule" {
		rules = []string{s.Value}
	}
	segs := strings.Split(reqPath, "/")
	var out []string
	for _, rule := range rules {
		_, rp, _ := strings.Cut(rule, " ")
		rsegs := strings.Split(rp, "/")
		if len(rsegs) != len(segs) {
			continue
		}
		for i, rs := range rsegs {
			if !strings.HasPrefix(rs, "{{") {
				continue
			}
			probe := "fullsend-probe"
			if n, err := strconv.Atoi(segs[i]); err == nil {
				probe = strconv.Itoa(n + 1)
			}
			cp := append([]string(nil), segs...)
			cp[i] = probe
			out = append(out, strings.Join(cp, "/"))
		}
	}
	return out
}
