package resolve

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// maxEventBytes bounds the CI event payloads the runner reads (GitHub caps
// webhook payloads at 25 MB).
const maxEventBytes = 25 << 20

// number is a JSON value that holds an issue or merge request number: a JSON
// number or a decimal string (workflow_dispatch inputs are strings).
type number struct {
	set bool
	n   uint64
}

func (n *number) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if string(b) == "null" {
		return nil
	}
	s := string(b)
	if len(b) > 0 && b[0] == '"' {
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		if s == "" {
			return nil
		}
	}
	v, err := strconv.ParseUint(s, 10, 63)
	if err != nil || v == 0 {
		return fmt.Errorf("%s is not a positive integer", b)
	}
	n.set, n.n = true, v
	return nil
}

func (n number) String() string { return strconv.FormatUint(n.n, 10) }

// text is the number in decimal, "" when it was not set.
func (n number) text() string {
	if !n.set {
		return ""
	}
	return n.String()
}

// GitHubEvent holds the fields of a GitHub Actions event payload
// ($GITHUB_EVENT_PATH) that the runner reads.
type GitHubEvent struct {
	Number number `json:"number"`
	Issue  *struct {
		Number number `json:"number"`
	} `json:"issue"`
	PullRequest *struct {
		Number number `json:"number"`
	} `json:"pull_request"`
	Inputs map[string]json.RawMessage `json:"inputs"`
}

// ParseGitHubEvent decodes a GitHub Actions event payload.
func ParseGitHubEvent(data []byte) (*GitHubEvent, error) {
	if len(data) > maxEventBytes {
		return nil, fmt.Errorf("event payload is %d bytes, over %d", len(data), maxEventBytes)
	}
	var ev GitHubEvent
	if err := json.Unmarshal(data, &ev); err != nil {
		return nil, fmt.Errorf("decoding event payload: %w", err)
	}
	return &ev, nil
}

// IssueNumber returns the issue or pull request number the event is about:
// issue.number (issues, issue_comment), pull_request.number, the top-level
// number (pull_request events), or a workflow_dispatch input named
// issue_number, issue or pr_number. It returns "" when there is none.
func (e *GitHubEvent) IssueNumber() (string, error) {
	switch {
	case e.Issue != nil && e.Issue.Number.set:
		return e.Issue.Number.String(), nil
	case e.PullRequest != nil && e.PullRequest.Number.set:
		return e.PullRequest.Number.String(), nil
	case e.Number.set:
		return e.Number.String(), nil
	}
	return e.inputIssueNumber()
}

// inputIssueNumber returns the first of the workflow_dispatch inputs
// issue_number, issue and pr_number that holds a number, "" if none does.
func (e *GitHubEvent) inputIssueNumber() (string, error) {
	for _, key := range []string{"issue_number", "issue", "pr_number"} {
		raw, ok := e.Inputs[key]
		if !ok {
			continue
		}
		var n number
		if err := n.UnmarshalJSON(raw); err != nil {
			return "", fmt.Errorf("inputs.%s: %w", key, err)
		}
		if n.set {
			return n.String(), nil
		}
	}
	return "", nil
}

// GitLabPayload holds the fields of a GitLab webhook payload (the
// TRIGGER_PAYLOAD file of a pipeline started by a webhook trigger) that the
// runner reads.
type GitLabPayload struct {
	ObjectKind       string `json:"object_kind"`
	ObjectAttributes *struct {
		IID  number `json:"iid"`
		Type string `json:"noteable_type"`
	} `json:"object_attributes"`
	Issue *struct {
		IID number `json:"iid"`
	} `json:"issue"`
	MergeRequest *struct {
		IID number `json:"iid"`
	} `json:"merge_request"`
}

// ParseGitLabPayload decodes a GitLab webhook payload.
func ParseGitLabPayload(data []byte) (*GitLabPayload, error) {
	if len(data) > maxEventBytes {
		return nil, fmt.Errorf("trigger payload is %d bytes, over %d", len(data), maxEventBytes)
	}
	var p GitLabPayload
	if err := json.Unmarshal(data, &p); err != nil {
		return nil, fmt.Errorf("decoding trigger payload: %w", err)
	}
	return &p, nil
}

// IID returns the issue or merge request IID of the payload: the object's
// own iid for issue and merge_request events, the commented issue's or merge
// request's iid for note events. It returns "" when there is none.
func (p *GitLabPayload) IID() string {
	switch p.ObjectKind {
	case "issue", "work_item", "merge_request":
		if p.ObjectAttributes != nil {
			return p.ObjectAttributes.IID.text()
		}
	case "note":
		if p.Issue != nil && p.Issue.IID.set {
			return p.Issue.IID.String()
		}
		if p.MergeRequest != nil {
			return p.MergeRequest.IID.text()
		}
	}
	return ""
}

// ParseDefaultGateway returns the gateway of the default IPv4 route from the
// contents of /proc/net/route (hex, host byte order on little-endian hosts).
func ParseDefaultGateway(data []byte) (netip.Addr, error) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	for line := 0; sc.Scan(); line++ {
		fields := strings.Fields(sc.Text())
		if line == 0 && len(fields) > 0 && fields[0] == "Iface" {
			continue
		}
		addr, ok, err := routeGateway(fields)
		if err != nil {
			return netip.Addr{}, err
		}
		if ok {
			return addr, nil
		}
	}
	if err := sc.Err(); err != nil {
		return netip.Addr{}, fmt.Errorf("/proc/net/route: %w", err)
	}
	return netip.Addr{}, errors.New("/proc/net/route has no default route with a gateway")
}

// routeGateway returns the gateway of one /proc/net/route line (its
// fields) when it is a default route through a gateway (ok false for any
// other route).
func routeGateway(fields []string) (addr netip.Addr, ok bool, err error) {
	if len(fields) < 4 || fields[1] != "00000000" {
		return netip.Addr{}, false, nil
	}
	flags, err := strconv.ParseUint(fields[3], 16, 16)
	if err != nil || flags&0x2 == 0 { // RTF_GATEWAY
		return netip.Addr{}, false, nil
	}
	raw, err := hex.DecodeString(fields[2])
	if err != nil || len(raw) != 4 {
		return netip.Addr{}, false, fmt.Errorf("/proc/net/route: bad gateway field %q", fields[2])
	}
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], binary.LittleEndian.Uint32(raw))
	addr = netip.AddrFrom4(b)
	return addr, !addr.IsUnspecified(), nil
}
