package denial

// Trust says whether an event's fields could have been written by the
// sandboxed agent. OpenShell prints a process's executable path raw into its
// shorthand line, so an agent that runs a binary from a path holding line
// breaks writes whole lines of its own into the shorthand log and the
// `openshell logs` output; the OCSF JSONL record escapes every string.
type Trust string

// The trust levels, from the most to the least trusted. The zero value ""
// means the event has not been assessed yet (Assess sets every event).
const (
	// TrustStructured is an event read from the OCSF JSONL record.
	TrustStructured Trust = "structured"
	// TrustCorroborated is a shorthand or CLI event whose structured
	// counterpart is in the same evidence.
	TrustCorroborated Trust = "corroborated"
	// TrustShorthand is a shorthand or CLI event in evidence that holds no
	// structured record at all, with nothing suspicious around it.
	TrustShorthand Trust = "shorthand"
	// TrustSuspect is an event the agent could have written: never a grant.
	TrustSuspect Trust = "suspect"
)

// Grantable reports whether a suggestion may be derived from an event of
// this trust.
func (t Trust) Grantable() bool {
	return t == TrustStructured || t == TrustCorroborated || t == TrustShorthand
}

// Assess sets the Trust of every event of one body of evidence (all the
// files of one run, read together), and returns how many events it found
// suspect.
//
// TODO(issue 33): not implemented yet; every event is left unassessed.
func Assess(events []Event) int {
	return 0
}
