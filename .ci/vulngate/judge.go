package main

import (
	"fmt"
	"io"
	"sort"
)

// Verdict sorts the called vulnerabilities against the exceptions.
type Verdict struct {
	Scan *Scan
	// Accepted are exceptions whose vulnerability is still called.
	Accepted []Exception
	// Unexpected are called vulnerabilities no exception accepts.
	Unexpected []Key
	// Stale are exceptions whose vulnerability is no longer called.
	Stale []Exception
}

// OK reports whether the gate passes.
func (v Verdict) OK() bool { return len(v.Unexpected) == 0 && len(v.Stale) == 0 }

// Judge matches the scan's called vulnerabilities with the exceptions on
// (ID, module).
func Judge(s *Scan, exceptions []Exception) Verdict {
	v := Verdict{Scan: s}
	listed := map[Key]bool{}
	for _, e := range exceptions {
		listed[e.Key()] = true
		if s.Called[e.Key()] != nil {
			v.Accepted = append(v.Accepted, e)
		} else {
			v.Stale = append(v.Stale, e)
		}
	}
	for k := range s.Called {
		if !listed[k] {
			v.Unexpected = append(v.Unexpected, k)
		}
	}
	sort.Slice(v.Unexpected, func(i, j int) bool {
		a, b := v.Unexpected[i], v.Unexpected[j]
		return a.ID < b.ID || a.ID == b.ID && a.Module < b.Module
	})
	return v
}

// maxPaths bounds the call paths printed per unexpected vulnerability.
const maxPaths = 10

// Write prints the accepted exceptions to stdout and the failures, if
// any, to stderr.
func (v Verdict) Write(stdout, stderr io.Writer, path string) {
	s := v.Scan
	fmt.Fprintf(stdout, "govulncheck (%s, %s): %d called vulnerabilities, %d accepted by %s\n",
		s.GoVersion, s.DB, len(s.Called), len(v.Accepted), path)
	for _, e := range v.Accepted {
		c := s.Called[e.Key()]
		fmt.Fprintf(stdout, "ACCEPTED %s %s@%s: %s\n", e.ID, e.Module, c.Version, s.Summaries[e.ID])
		fmt.Fprintf(stdout, "  why: %s\n  reachability: %s\n  remove when: %s\n", e.Why, e.Reachability, e.RemoveWhen)
		fmt.Fprintf(stdout, "  %d call paths (entry point -> module symbol)\n", len(c.Paths))
	}
	for _, k := range v.Unexpected {
		c := s.Called[k]
		fixed := "no fixed version"
		if c.Fixed != "" {
			fixed = "fixed in " + c.Fixed
		}
		fmt.Fprintf(stderr, "CALLED %s %s@%s (%s): %s\n", k.ID, k.Module, c.Version, fixed, s.Summaries[k.ID])
		paths := c.SortedPaths()
		for i, p := range paths {
			if i == maxPaths {
				fmt.Fprintf(stderr, "  ... and %d more\n", len(paths)-maxPaths)
				break
			}
			fmt.Fprintf(stderr, "  %s\n", p)
		}
	}
	for _, e := range v.Stale {
		fmt.Fprintf(stderr, "STALE %s:%d: %s in %s is no longer called; delete the line\n", path, e.Line, e.ID, e.Module)
	}
	if len(v.Unexpected) > 0 {
		fmt.Fprintf(stderr, "govulncheck: %d called vulnerabilities not accepted: upgrade to the fixed version, or add a reviewed line to %s\n", len(v.Unexpected), path)
	}
}
