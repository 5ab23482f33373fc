package decide

import (
	"cmp"
	"errors"
	"strconv"
	"strings"

	"github.com/fullsend-ai/agent-sandbox/openshell"
)

// Request-path canonicalisation as OpenShell's L7 parser does it before
// policy evaluation (crates/openshell-supervisor-network/src/l7/path.rs
// canonicalize_request_target, :115 @ v0.0.111). Rego sees only the
// canonical path (sandbox-policy.rego:729-735, the INVARIANT comment).

// Errors canonicalize_request_target returns (path.rs CanonicalizeError).
var (
	errPathControl      = errors.New("request-target contains a null or control byte")
	errPathPercent      = errors.New("request-target contains an invalid percent-encoded sequence")
	errPathEncodedSlash = errors.New("request-target contains an encoded slash '/' (%2F), not allowed on this endpoint (allow_encoded_slash)")
	errPathFragment     = errors.New("request-target contains a fragment")
	errPathNonASCII     = errors.New("request-target contains raw non-ASCII bytes")
	errPathAboveRoot    = errors.New("request-target's `..` segment climbs above / (would escape the path root)")
	errPathResidualDot  = errors.New("request-target still contains a `.`/`..` segment after canonicalization")
	errPathTooLong      = errors.New("request-target exceeds the maximum length (4096)")
	errPathMalformed    = errors.New("request-target is not a valid origin-form path")
)

// pathSlashSentinel stands for a decoded %2F (path.rs ENCODED_SLASH_SENTINEL).
const pathSlashSentinel = byte(0x01)

// canonicalRequestPath canonicalises raw (an origin-form path, already
// without its query) for the given OpenShell version:
//
//   - control bytes and raw non-ASCII are rejected, as is '#';
//   - percent-escapes are decoded, %2F only with allow_encoded_slash (kept
//     as %2F), a decoded control byte is rejected;
//   - segments split on '/'; since v0.0.111 ";params" are stripped from each
//     segment BEFORE dot resolution (so "/x/..;/y" is "/y"); @ v0.0.83 they
//     are stripped only when the path is rebuilt (so "/x/..;/y" stays
//     "/x/../y");
//   - "." and ".." resolve (".." above the root is rejected; a final "." or
//     ".." leaves a trailing slash), empty segments other than the last are
//     dropped ("//" collapses, a trailing '/' stays: "/x/;p" is "/x/");
//   - bytes other than unreserved/sub-delims/':'/'@' are re-encoded as %XX.
func canonicalRequestPath(raw string, allowEncodedSlash bool, version string) (string, error) {
	raw, err := checkRequestTarget(raw)
	if err != nil {
		return "", err
	}
	dec, err := percentDecodePath(raw, allowEncodedSlash)
	if err != nil {
		return "", err
	}
	v111 := openshell.CompareVersions(version, "v0.0.111") >= 0
	stack, err := resolveDotSegments(pathSegments(dec, v111))
	if err != nil {
		return "", err
	}
	if v111 && residualDot(stack) {
		return "", errPathResidualDot
	}
	return encodePath(stack), nil
}

// pathSegments splits the decoded path dec at '/', each segment without
// its ";params" when stripParams (v0.0.111 strips them before dot
// resolution).
func pathSegments(dec string, stripParams bool) []string {
	segs := strings.Split(dec[1:], "/")
	if stripParams {
		for i, s := range segs {
			segs[i], _, _ = strings.Cut(s, ";")
		}
	}
	return segs
}

// checkRequestTarget refuses control bytes, raw non-ASCII and a fragment,
// drops the query, and refuses what is not an origin-form path of at most
// 4096 bytes ("" is "/").
func checkRequestTarget(raw string) (string, error) {
	if err := checkTargetBytes(raw); err != nil {
		return "", err
	}
	if strings.Contains(raw, "#") {
		return "", errPathFragment
	}
	raw, _, _ = strings.Cut(raw, "?")
	raw = cmp.Or(raw, "/")
	if !strings.HasPrefix(raw, "/") {
		return "", errPathMalformed
	}
	if len(raw) > 4096 {
		return "", errPathTooLong
	}
	return raw, nil
}

// checkTargetBytes refuses a control byte or a raw non-ASCII byte,
// whichever comes first.
func checkTargetBytes(raw string) error {
	for i := 0; i < len(raw); i++ {
		switch b := raw[i]; {
		case controlByte(b):
			return errPathControl
		case b >= 0x80:
			return errPathNonASCII
		}
	}
	return nil
}

// resolveDotSegments resolves "." and ".." (".." above the root is an
// error; a final "." or ".." leaves a trailing slash) and drops empty
// segments other than the last.
func resolveDotSegments(segs []string) ([]string, error) {
	var stack []string
	last := len(segs) - 1
	for i, s := range segs {
		switch {
		case s == "..":
			if len(stack) == 0 {
				return nil, errPathAboveRoot
			}
			stack = stack[:len(stack)-1]
			if i == last {
				stack = append(stack, "")
			}
		case s == ".":
			if i == last {
				stack = append(stack, "")
			}
		case s == "" && i != last:
		default:
			stack = append(stack, s)
		}
	}
	return stack, nil
}

// residualDot reports whether a segment, split at decoded slashes, still
// holds a "." or ".." part (v0.0.111's check after resolution).
func residualDot(stack []string) bool {
	for _, s := range stack {
		for _, part := range strings.Split(s, string(pathSlashSentinel)) {
			if part == "." || part == ".." {
				return true
			}
		}
	}
	return false
}

// encodePath rebuilds the path from its segments: ";params" stripped, a
// decoded slash as %2F, bytes other than pchar re-encoded as %XX.
func encodePath(stack []string) string {
	var b strings.Builder
	b.WriteByte('/')
	for i, s := range stack {
		if i > 0 {
			b.WriteByte('/')
		}
		s, _, _ = strings.Cut(s, ";")
		for j := 0; j < len(s); j++ {
			c := s[j]
			switch {
			case c == pathSlashSentinel:
				b.WriteString("%2F")
			case pcharUnreserved(c):
				b.WriteByte(c)
			default:
				const hex = "0123456789ABCDEF"
				b.WriteByte('%')
				b.WriteByte(hex[c>>4])
				b.WriteByte(hex[c&15])
			}
		}
	}
	return b.String()
}

// pcharUnreserved is path.rs is_pchar_unreserved.
func pcharUnreserved(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	}
	return strings.IndexByte("-._~!$&'()*+,;=:@", c) >= 0
}

// percentDecodePath is path.rs percent_decode_with_sentinel.
func percentDecodePath(raw string, allowEncodedSlash bool) (string, error) {
	out := make([]byte, 0, len(raw))
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if c == pathSlashSentinel {
			return "", errPathControl
		}
		if c != '%' {
			out = append(out, c)
			continue
		}
		e, ok := percentByte(raw, i)
		if !ok {
			return "", errPathPercent
		}
		d, err := decodedPathByte(e, allowEncodedSlash)
		if err != nil {
			return "", err
		}
		out = append(out, d)
		i += 2
	}
	return string(out), nil
}

// decodedPathByte is what the decoded escape d stands for in the path: a
// decoded slash is pathSlashSentinel with allow_encoded_slash and an error
// without, and a control byte is an error.
func decodedPathByte(d byte, allowEncodedSlash bool) (byte, error) {
	switch {
	case d == '/' && !allowEncodedSlash:
		return 0, errPathEncodedSlash
	case d == '/':
		return pathSlashSentinel, nil
	case controlByte(d):
		return 0, errPathControl
	}
	return d, nil
}

// controlByte reports whether b is an ASCII control byte (C0 or DEL).
func controlByte(b byte) bool {
	return b < 0x20 || b == 0x7f
}

// percentByte decodes the escape "%XX" at s[i]; false when it is truncated
// or not hex.
func percentByte(s string, i int) (byte, bool) {
	if i+2 >= len(s) {
		return 0, false
	}
	// Two hex digits, either case: ParseUint takes no sign or '_' here.
	d, err := strconv.ParseUint(s[i+1:i+3], 16, 8)
	return byte(d), err == nil
}
