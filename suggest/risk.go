package suggest

import (
	"fmt"
	"net"
	"net/netip"
	"strconv"
)

// assess sets the risk, categories and notes of a suggestion, in the
// vocabulary of OpenShell's prover (capability_expansion,
// docs/sandboxes/policy-advisor.mdx:167-182@v0.0.111) and the day-2 risk
// table: a write method is high, a new read-only host medium, a new rule
// that only reads low, an interpreter or raw network binary high, a tier
// raised to full critical.
func (s *Suggestion) assess() {
	// Each part adds its notes: they are called in the order the notes
	// print.
	r := max(riskLow, s.changeRisk(), s.binariesRisk(), s.writeRisk(), s.widenRisk(), s.destinationRisk(), s.tierRisk())
	s.Risk = riskNames[r]
}

// risk ranks a suggestion's risk; riskNames spells it.
type risk int

const (
	riskLow risk = iota
	riskMedium
	riskHigh
	riskCritical
)

var riskNames = [...]string{riskLow: "low", riskMedium: "medium", riskHigh: "high", riskCritical: "critical"}

// changeRisk is the risk of the change itself: a new endpoint or binary is
// medium, an interpreter or raw network binary high.
func (s *Suggestion) changeRisk() risk {
	switch s.Change {
	case "add-endpoint":
		if s.Provisional {
			s.addNote("new host, read methods only (access: read-only)")
		}
		return riskMedium
	case "add-binary":
		if rawTool(s.Value) {
			s.addNote("interpreter or raw network tool: it can send anything the endpoint allows")
			return riskHigh
		}
		return riskMedium
	}
	return riskLow
}

// binariesRisk is high when a new endpoint declares an interpreter or a
// raw network tool that no policy let reach the network before.
func (s *Suggestion) binariesRisk() risk {
	r := riskLow
	for _, b := range s.unknownBins {
		if rawTool(b) {
			r = riskHigh
			s.addNote("declares " + b + ", an interpreter or raw network tool")
		}
	}
	return r
}

// writeRisk is high, a capability_expansion, when the suggestion grants a
// write method.
func (s *Suggestion) writeRisk() risk {
	if !s.writes() {
		return riskLow
	}
	s.Categories = append(s.Categories, "capability_expansion")
	s.addNote("write method")
	return riskHigh
}

// widenRisk grades a rule widened to "*" as the widest request it allows:
// any value in its last segment, one never denied included (the agent chose
// the values seen). A write there is critical (every branch, main too), a
// read at least medium.
func (s *Suggestion) widenRisk() risk {
	if !s.Widened {
		return riskLow
	}
	if s.writes() {
		s.addNote("widened write: the agent chose the values that were seen, the rule allows every value")
		return riskCritical
	}
	return riskMedium
}

// writes reports whether the suggestion grants a method that changes state.
func (s *Suggestion) writes() bool {
	for m := range s.methods {
		if writeMethods[m] {
			return true
		}
	}
	return false
}

// servicePorts are the well-known database and service ports the
// mechanistic mapper notes.
var servicePorts = map[int]bool{5432: true, 3306: true, 6379: true, 27017: true, 9200: true, 11211: true, 5672: true}

// destinationRisk notes the destination as the mechanistic mapper does
// (crates/openshell-sandbox/src/mechanistic_mapper.rs:303-325@v0.0.111):
// an internal or private address is high, a database or service port
// medium, an ephemeral port only noted.
func (s *Suggestion) destinationRisk() risk {
	host, port, err := net.SplitHostPort(hostPortOf(s))
	if err != nil {
		return riskLow
	}
	r := riskLow
	if a, err := netip.ParseAddr(host); err == nil && (a.Unmap().IsPrivate() || a.Unmap().IsLoopback()) {
		r = riskHigh
		s.addNote(fmt.Sprintf("%s is an internal or private address", host))
	}
	n, _ := strconv.Atoi(port)
	if n > 49152 {
		s.addNote(fmt.Sprintf("port %d is in the ephemeral range", n))
	}
	if servicePorts[n] {
		r = max(r, riskMedium)
		s.addNote(fmt.Sprintf("port %d is a well-known database or service port", n))
	}
	return r
}

// tierRisk is high when the suggestion raises the agent's tier, critical
// when it raises it to full.
func (s *Suggestion) tierRisk() risk {
	if s.TierAfter == s.TierBefore {
		return riskLow
	}
	s.addNote(fmt.Sprintf("raises the agent's tier from %s to %s", s.TierBefore, s.TierAfter))
	if s.TierAfter == "full" {
		return riskCritical
	}
	return riskHigh
}

func hostPortOf(s *Suggestion) string {
	if s.Change == "add-endpoint" {
		return s.Value
	}
	for _, r := range s.requests {
		return hostPort(r.Host, r.Port)
	}
	return ""
}
