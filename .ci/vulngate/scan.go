package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
)

// Scan is what the gate needs from a govulncheck JSON stream.
type Scan struct {
	GoVersion string
	DB        string
	// Summaries maps vulnerability IDs to their one-line summaries.
	Summaries map[string]string
	// Called holds the vulnerabilities whose symbols the code calls.
	Called map[Key]*Called
}

// Called is one called vulnerability in one module.
type Called struct {
	Version, Fixed string
	// Paths are "entry point -> vulnerable symbol" pairs, deduplicated.
	Paths map[string]bool
}

// SortedPaths returns the call paths in a stable order.
func (c *Called) SortedPaths() []string {
	out := make([]string, 0, len(c.Paths))
	for p := range c.Paths {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// message is one object of the stream (protocol v1.0.0); the fields the
// gate does not use are left out.
type message struct {
	Config *struct {
		GoVersion string `json:"go_version"`
		DB        string `json:"db"`
	} `json:"config"`
	OSV *struct {
		ID      string `json:"id"`
		Summary string `json:"summary"`
	} `json:"osv"`
	Finding *struct {
		OSV          string  `json:"osv"`
		FixedVersion string  `json:"fixed_version"`
		Trace        []frame `json:"trace"`
	} `json:"finding"`
}

type frame struct {
	Module   string `json:"module"`
	Version  string `json:"version"`
	Package  string `json:"package"`
	Function string `json:"function"`
	Receiver string `json:"receiver"`
}

func (f frame) String() string {
	name := f.Function
	if f.Receiver != "" {
		name = strings.TrimPrefix(f.Receiver, "*") + "." + name
	}
	return f.Package + "." + name
}

// ReadScan decodes a govulncheck -format json stream. A finding is called
// when its first trace frame (the vulnerable symbol) names a function;
// module- and package-level findings are only required or imported and
// never fail the gate.
func ReadScan(r io.Reader) (*Scan, error) {
	s := &Scan{Summaries: map[string]string{}, Called: map[Key]*Called{}}
	dec := json.NewDecoder(r)
	sawConfig := false
	for {
		var m message
		if err := dec.Decode(&m); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, err
		}
		switch {
		case m.Config != nil:
			sawConfig = true
			s.GoVersion, s.DB = m.Config.GoVersion, m.Config.DB
		case m.OSV != nil:
			s.Summaries[m.OSV.ID] = m.OSV.Summary
		case m.Finding != nil:
			s.add(m.Finding.OSV, m.Finding.FixedVersion, m.Finding.Trace)
		}
	}
	if !sawConfig {
		return nil, errors.New("no config message: not govulncheck -format json output")
	}
	return s, nil
}

func (s *Scan) add(id, fixed string, trace []frame) {
	if len(trace) == 0 || trace[0].Function == "" {
		return
	}
	k := Key{ID: id, Module: trace[0].Module}
	c := s.Called[k]
	if c == nil {
		c = &Called{Version: trace[0].Version, Fixed: fixed, Paths: map[string]bool{}}
		s.Called[k] = c
	}
	c.Paths[fmt.Sprintf("%s -> %s", trace[len(trace)-1], trace[0])] = true
}
