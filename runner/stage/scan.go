package stage

import (
	"bytes"
	"encoding/base64"
	"io"
	"sort"
)

// JobCredentialEnv names the environment variables that hold the job's
// own forge and CI credentials: their values must never reach a sandbox.
// GitHub Actions: the workflow token (as actions and the gh CLI read it)
// and the runtime and OIDC request tokens. GitLab CI: the job token and
// the variables that carry it or another credential (registry, dependency
// proxy, deploy token, ID token JWTs). Each call returns a new slice.
func JobCredentialEnv() []string {
	return []string{
		"GITHUB_TOKEN", "GH_TOKEN", "GH_ENTERPRISE_TOKEN", "GITHUB_ENTERPRISE_TOKEN",
		"ACTIONS_RUNTIME_TOKEN", "ACTIONS_ID_TOKEN_REQUEST_TOKEN",
		"CI_JOB_TOKEN", "CI_REGISTRY_PASSWORD", "CI_DEPENDENCY_PROXY_PASSWORD", "CI_DEPLOY_PASSWORD",
		"CI_JOB_JWT", "CI_JOB_JWT_V1", "CI_JOB_JWT_V2", "GITLAB_TOKEN", "GL_TOKEN",
	}
}

// minScanLen is the shortest environment value scanned for: shorter
// values ("true", a number) would match ordinary text.
const minScanLen = 12

// tokenShape is a credential format recognised by its fixed prefix: the
// prefix, then at least min bytes of its alphabet. Sources: GitHub's token
// formats (ghp_ gho_ ghu_ ghs_ ghr_ and github_pat_), GitLab's token
// prefixes table (security/tokens, "Token prefixes"; an instance prefix
// such as "acme-glcbt-" contains the standard one), actions/checkout's
// basic credential (base64 of "x-access-token:TOKEN" in
// http.<origin>.extraheader), the GitLab runner's clone URL
// (https://gitlab-ci-token:TOKEN@host/...), and model and cloud keys.
type tokenShape struct {
	prefix string
	what   string
	alpha  func(byte) bool
	min    int
}

func alnum(c byte) bool    { return isASCIILetter(c) || isASCIIDigit(c) }
func alnumUnd(c byte) bool { return alnum(c) || c == '_' }
func urlSafe(c byte) bool  { return alnum(c) || c == '_' || c == '-' }
func jwtish(c byte) bool   { return urlSafe(c) || c == '.' }
func b64(c byte) bool      { return alnum(c) || c == '+' || c == '/' || c == '=' }
func upperNum(c byte) bool { return c >= 'A' && c <= 'Z' || isASCIIDigit(c) }
func userinfo(c byte) bool {
	return c > ' ' && c != '@' && c != '/' && c != '"' && c != '\'' && c < 0x7f
}
func notLetter(c byte) bool { return !alnum(c) }

var tokenShapes = func() []tokenShape {
	s := []tokenShape{
		{"github_pat_", "a GitHub fine-grained token", alnumUnd, 40},
		{"sk-ant-", "an Anthropic key", urlSafe, 32},
		{"sk-proj-", "an OpenAI key", urlSafe, 32},
		{"sk-svcacct-", "an OpenAI key", urlSafe, 32},
		{"sk-admin-", "an OpenAI key", urlSafe, 32},
		{"ya29.", "a Google OAuth token", urlSafe, 30},
		{"AKIA", "an AWS access key id", upperNum, 16},
		{"ASIA", "an AWS access key id", upperNum, 16},
		{"hf_", "a Hugging Face token", alnum, 30},
		{"npm_", "an npm token", alnum, 36},
		{"xoxb-", "a Slack token", urlSafe, 20},
		{"xoxp-", "a Slack token", urlSafe, 20},
		// base64("x-access-token:") and base64("gitlab-ci-token"): the
		// start of a basic credential for either forge.
		{"eC1hY2Nlc3MtdG9rZW46", "a GitHub basic credential (x-access-token)", b64, 20},
		{"Z2l0bGFiLWNpLXRva2Vu", "a GitLab basic credential (gitlab-ci-token)", b64, 8},
		{"x-access-token:", "a GitHub token in a URL", userinfo, 20},
		{"gitlab-ci-token:", "a GitLab job token in a URL", userinfo, 20},
	}
	for _, p := range []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_"} {
		s = append(s, tokenShape{p, "a GitHub token (" + p + ")", alnum, 30})
	}
	for _, p := range []string{"glpat-", "glcbt-", "gldt-", "glrt-", "glrtr-", "glptt-", "glft-", "glimt-",
		"glagent-", "gloas-", "glsoat-", "glffct-", "glwt-"} {
		s = append(s, tokenShape{p, "a GitLab token (" + p + ")", jwtish, 20})
	}
	return s
}()

// needle is an exact byte string to find: a credential value or one of
// its encodings.
type needle struct {
	b    []byte
	what string
}

// Scanner finds the job's own credential values (exact, and base64
// encoded as a basic credential or at any alignment) and token-shaped
// strings in files. It never keeps or reports a matched value: a finding
// says what was found, not the bytes.
//
// It reads every byte once: a bitset of the patterns' first two bytes
// picks the positions worth a closer look.
type Scanner struct {
	needles []needle
	overlap int
	bits    [1 << 10]uint64        // set for each two-byte pattern start
	cands   map[uint16][]candidate // the patterns starting with those bytes
}

// candidate is a needle (shape < 0) or a token shape (needle < 0).
type candidate struct{ needle, shape int }

// NewScanner builds a scanner for the values of the named variables, read
// through getenv.
func NewScanner(getenv func(name string) (string, bool), names []string) *Scanner {
	s := &Scanner{}
	seen := map[string]bool{}
	for _, name := range names {
		v, ok := getenv(name)
		if !ok || len(v) < minScanLen || seen[v] {
			continue
		}
		seen[v] = true
		s.addValue(name, v)
	}
	s.buildIndex()
	return s
}

// addValue adds the needles for the value v of the variable name: the
// value itself, and its base64 forms (as the user:token of a git
// credential, and inside any longer base64 text).
func (s *Scanner) addValue(name, v string) {
	s.add([]byte(v), "the value of "+name)
	for _, user := range []string{"x-access-token:", "gitlab-ci-token:", "oauth2:"} {
		s.add([]byte(base64.StdEncoding.EncodeToString([]byte(user+v))), "the value of "+name+", base64-encoded")
	}
	for _, m := range base64Middles([]byte(v)) {
		s.add(m, "the value of "+name+", base64-encoded")
	}
}

// buildIndex indexes the needles and the token shapes by their first two
// bytes, and sets the overlap a chunked scan must keep.
func (s *Scanner) buildIndex() {
	s.overlap = 64
	s.cands = map[uint16][]candidate{}
	for i, n := range s.needles {
		s.overlap = max(s.overlap, len(n.b))
		s.index(n.b, candidate{needle: i, shape: -1})
	}
	for i, t := range tokenShapes {
		s.overlap = max(s.overlap, len(t.prefix)+t.min+1)
		s.index([]byte(t.prefix), candidate{needle: -1, shape: i})
	}
}

func (s *Scanner) index(p []byte, c candidate) {
	k := uint16(p[0])<<8 | uint16(p[1])
	s.bits[k>>6] |= 1 << (k & 63)
	s.cands[k] = append(s.cands[k], c)
}

func (s *Scanner) add(b []byte, what string) {
	s.needles = append(s.needles, needle{b: b, what: what})
}

// base64Middles returns, for each of the three alignments a value can have
// inside a longer base64 text and for the standard and URL alphabets, the
// part of its encoding that does not depend on the neighbouring bytes.
func base64Middles(v []byte) [][]byte {
	var out [][]byte
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
		for pad := 0; pad < 3; pad++ {
			buf := append(make([]byte, pad), v...)
			e := enc.EncodeToString(buf)
			start := 0
			if pad > 0 {
				start = 4 // the first quantum mixes the padding bytes in
			}
			end := len(e)
			if len(buf)%3 != 0 {
				end -= 4 // the last quantum mixes what follows in
			}
			if end-start >= minScanLen {
				out = append(out, []byte(e[start:end]))
			}
		}
	}
	return out
}

// Finding is one kind of credential found in one file.
type Finding struct {
	// What names the kind ("a GitHub personal access token", "the value
	// of GITHUB_TOKEN"), never the value.
	What string
	// Exact is set for one of the job's own values, not only a shape.
	Exact bool
}

// scan reads r to its end and returns what it found, sorted and without
// duplicates.
func (s *Scanner) scan(r io.Reader) ([]Finding, error) {
	found := map[Finding]bool{}
	buf := make([]byte, 0, 256<<10+s.overlap)
	chunk := make([]byte, 256<<10)
	for {
		n, err := io.ReadFull(r, chunk)
		buf = append(buf, chunk[:n]...)
		eof := err == io.EOF || err == io.ErrUnexpectedEOF
		if err != nil && !eof {
			return nil, err
		}
		s.scanBuf(buf, found)
		if eof {
			break
		}
		// Keep the tail: a match may straddle two chunks.
		keep := min(len(buf), s.overlap)
		buf = append(buf[:0], buf[len(buf)-keep:]...)
	}
	out := make([]Finding, 0, len(found))
	for f := range found {
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].What < out[j].What })
	return out, nil
}

func (s *Scanner) scanBuf(buf []byte, found map[Finding]bool) {
	for i := 0; i+1 < len(buf); i++ {
		k := uint16(buf[i])<<8 | uint16(buf[i+1])
		if s.bits[k>>6]&(1<<(k&63)) == 0 {
			continue
		}
		for _, c := range s.cands[k] {
			if c.needle >= 0 {
				if n := s.needles[c.needle]; bytes.HasPrefix(buf[i:], n.b) {
					found[Finding{What: n.what, Exact: true}] = true
				}
			} else if t := tokenShapes[c.shape]; shapeAt(buf, i, t) {
				found[Finding{What: t.what}] = true
			}
		}
	}
}

// shapeAt reports whether a token of shape t starts at buf[i]: its prefix,
// not inside a longer word, then at least t.min bytes of its alphabet.
// Near the end of a chunk a short run may continue in the next one; it is
// seen again there, in the kept tail.
func shapeAt(buf []byte, i int, t tokenShape) bool {
	if !bytes.HasPrefix(buf[i:], []byte(t.prefix)) || i > 0 && !notLetter(buf[i-1]) {
		return false
	}
	run := 0
	for j := i + len(t.prefix); j < len(buf) && t.alpha(buf[j]) && run < t.min; j++ {
		run++
	}
	return run >= t.min
}
