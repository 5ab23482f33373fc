package stage

import (
	"errors"
	"net/url"
	"sort"
	"strings"
)

// gitConfigEntry is one variable of a git config file.
type gitConfigEntry struct {
	section    string // lower case
	subsection string // case kept (legacy [a.b] headers: lower case)
	key        string // lower case
	value      string
	hasValue   bool // "key" alone (boolean true) has none
}

// name is the entry's name with any subsection elided: subsections can hold
// URLs, and a URL can hold a credential, so they are never logged.
func (e gitConfigEntry) name() string {
	if e.subsection != "" {
		return e.section + ".<...>." + e.key
	}
	return e.section + "." + e.key
}

var errGitConfig = errors.New("malformed git config")

// parseGitConfig parses the git config file syntax (git-config(1),
// "Syntax"): sections with quoted or legacy dotted subsections, variables
// with or without values, quotes, backslash escapes and line continuations,
// '#' and ';' comments. Include directives are ordinary variables here;
// nothing is read but data.
func parseGitConfig(data []byte) ([]gitConfigEntry, error) {
	p := &gitConfigParser{data: data}
	var out []gitConfigEntry
	for {
		c, ok := p.next()
		switch {
		case !ok:
			return out, nil
		case c == '\n' || c == ' ' || c == '\t':
		case c == '#' || c == ';':
			p.skipLine()
		case c == '[':
			if err := p.header(); err != nil {
				return nil, err
			}
		case isASCIILetter(c):
			if p.section == "" {
				return nil, errGitConfig
			}
			e, err := p.variable(c)
			if err != nil {
				return nil, err
			}
			out = append(out, e)
		default:
			return nil, errGitConfig
		}
	}
}

type gitConfigParser struct {
	data             []byte
	i                int
	section, subsect string
}

// next returns the next byte, "\r\n" read as "\n".
func (p *gitConfigParser) next() (byte, bool) {
	if p.i >= len(p.data) {
		return 0, false
	}
	c := p.data[p.i]
	p.i++
	if c == '\r' && p.i < len(p.data) && p.data[p.i] == '\n' {
		p.i++
		c = '\n'
	}
	return c, true
}

func (p *gitConfigParser) peek() (byte, bool) {
	i := p.i
	c, ok := p.next()
	p.i = i
	return c, ok
}

func (p *gitConfigParser) skipLine() {
	for {
		if c, ok := p.next(); !ok || c == '\n' {
			return
		}
	}
}

// header reads "[section]", "[section "subsection"]" or "[section.sub]".
func (p *gitConfigParser) header() error {
	var name []byte
	for {
		c, ok := p.next()
		switch {
		case !ok:
			return errGitConfig
		case c == ']':
			s := strings.ToLower(string(name))
			p.section, p.subsect = s, ""
			if sec, sub, dotted := strings.Cut(s, "."); dotted {
				p.section, p.subsect = sec, sub
			}
			if p.section == "" {
				return errGitConfig
			}
			return nil
		case c == ' ' || c == '\t':
			if len(name) == 0 {
				return errGitConfig
			}
			return p.quotedSubsection(strings.ToLower(string(name)))
		case isASCIILetter(c) || isASCIIDigit(c) || c == '-' || c == '.':
			name = append(name, c)
		default:
			return errGitConfig
		}
	}
}

func (p *gitConfigParser) quotedSubsection(section string) error {
	c, ok := p.next()
	for ok && (c == ' ' || c == '\t') {
		c, ok = p.next()
	}
	if c != '"' {
		return errGitConfig
	}
	var sub []byte
	for {
		c, ok = p.next()
		switch {
		case !ok || c == '\n':
			return errGitConfig
		case c == '\\':
			if c, ok = p.next(); !ok || c == '\n' {
				return errGitConfig
			}
			sub = append(sub, c)
		case c == '"':
			if c, ok = p.next(); !ok || c != ']' {
				return errGitConfig
			}
			p.section, p.subsect = section, string(sub)
			return nil
		default:
			sub = append(sub, c)
		}
	}
}

// variable reads "name [= value]" whose first byte is first.
func (p *gitConfigParser) variable(first byte) (gitConfigEntry, error) {
	e := gitConfigEntry{section: p.section, subsection: p.subsect}
	name := []byte{first}
	for {
		c, ok := p.peek()
		if !ok || !(isASCIILetter(c) || isASCIIDigit(c) || c == '-') {
			break
		}
		p.next()
		name = append(name, c)
	}
	e.key = strings.ToLower(string(name))
	for {
		c, ok := p.next()
		switch {
		case !ok || c == '\n':
			return e, nil
		case c == ' ' || c == '\t':
		case c == '#' || c == ';':
			p.skipLine()
			return e, nil
		case c == '=':
			v, err := p.value()
			e.value, e.hasValue = v, true
			return e, err
		default:
			return e, errGitConfig
		}
	}
}

// value reads a value as git does: unquoted leading and trailing blanks
// dropped, inner ones kept, quotes removed, \\ \" \n \t \b escapes, a
// backslash-newline joins lines, an unquoted # or ; starts a comment.
func (p *gitConfigParser) value() (string, error) {
	var b []byte
	quoted, pending := false, 0
	for {
		c, ok := p.next()
		if !ok || c == '\n' {
			if quoted {
				return "", errGitConfig
			}
			return string(b), nil
		}
		if !quoted && (c == '#' || c == ';') {
			p.skipLine()
			return string(b), nil
		}
		if !quoted && (c == ' ' || c == '\t') {
			if len(b) > 0 {
				pending++
			}
			continue
		}
		for ; pending > 0; pending-- {
			b = append(b, ' ')
		}
		switch c {
		case '"':
			quoted = !quoted
		case '\\':
			e, err := p.escape()
			if err != nil {
				return "", err
			}
			b = append(b, e...)
		default:
			b = append(b, c)
		}
	}
}

// escape reads what follows a backslash in a value; a newline joins lines.
func (p *gitConfigParser) escape() ([]byte, error) {
	n, ok := p.next()
	switch {
	case !ok:
		return nil, errGitConfig
	case n == '\n':
		return nil, nil
	case n == 'n':
		return []byte{'\n'}, nil
	case n == 't':
		return []byte{'\t'}, nil
	case n == 'b':
		return []byte{'\b'}, nil
	case n == '\\' || n == '"':
		return []byte{n}, nil
	}
	return nil, errGitConfig
}

func isASCIILetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isASCIIDigit(c byte) bool  { return c >= '0' && c <= '9' }

// gitConfigAllowed lists the variables a staged repository keeps, by
// section and key ("*" = every key of the section). Everything else is
// dropped: credential helpers, http.*.extraheader, url.*.insteadOf,
// include and includeIf, core.sshCommand, core.hooksPath, core.fsmonitor,
// core.pager, core.editor, filters, diff and merge drivers, aliases... A
// variable the list does not know is dropped, so a new git feature cannot
// carry a credential or a command into the sandbox by default.
var gitConfigAllowed = map[string]map[string]bool{
	"core": {"repositoryformatversion": true, "filemode": true, "bare": true, "logallrefupdates": true,
		"ignorecase": true, "precomposeunicode": true, "symlinks": true, "autocrlf": true, "eol": true,
		"safecrlf": true, "sparsecheckout": true, "sparsecheckoutcone": true, "checkstat": true, "trustctime": true},
	"extensions": {"*": true},
	"remote":     {"url": true, "pushurl": true, "fetch": true, "promisor": true, "partialclonefilter": true, "tagopt": true},
	"branch":     {"remote": true, "merge": true},
	"submodule":  {"url": true, "active": true},
	"index":      {"version": true, "sparse": true},
	"init":       {"defaultbranch": true},
}

// sanitizeGitConfig keeps the allowlisted variables of a git config file,
// with URLs stripped of credentials, and returns the rewritten file and
// the names (subsections elided) of what it dropped or changed. A file it
// cannot parse is replaced by a minimal one.
func sanitizeGitConfig(data []byte) (out []byte, dropped []string) {
	entries, err := parseGitConfig(data)
	if err != nil {
		minimal := []gitConfigEntry{{section: "core", key: "repositoryformatversion", value: "0", hasValue: true}}
		return writeGitConfig(minimal), []string{"(unparsable file, replaced)"}
	}
	seen := map[string]bool{}
	drop := func(s string) {
		if !seen[s] {
			seen[s] = true
			dropped = append(dropped, s)
		}
	}
	var kept []gitConfigEntry
	for _, e := range entries {
		keys := gitConfigAllowed[e.section]
		if !keys[e.key] && !keys["*"] || !e.hasValue {
			drop(e.name())
			continue
		}
		switch {
		case e.key == "url" || e.key == "pushurl":
			clean, ok := sanitizeRemoteURL(e.value)
			if !ok {
				drop(e.name())
				continue
			}
			if clean != e.value {
				drop(e.name() + " (credentials or query removed)")
			}
			e.value = clean
		case e.key == "tagopt" && e.value != "--no-tags" && e.value != "--tags":
			drop(e.name())
			continue
		}
		kept = append(kept, e)
	}
	sort.Strings(dropped)
	return writeGitConfig(kept), dropped
}

const gitConfigHeader = "# Rewritten by fullsend run from an allowlist (docs/runner.md, Workspace).\n"

// writeGitConfig writes entries grouped under their section headers, every
// value quoted and escaped.
func writeGitConfig(entries []gitConfigEntry) []byte {
	var b strings.Builder
	b.WriteString(gitConfigHeader)
	cur := "\x00"
	for _, e := range entries {
		if h := e.section + "\x00" + e.subsection; h != cur {
			cur = h
			if e.subsection == "" {
				b.WriteString("[" + e.section + "]\n")
			} else {
				r := strings.NewReplacer(`\`, `\\`, `"`, `\"`)
				b.WriteString("[" + e.section + ` "` + r.Replace(e.subsection) + "\"]\n")
			}
		}
		r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\t", `\t`, "\b", `\b`)
		b.WriteString("\t" + e.key + ` = "` + r.Replace(e.value) + "\"\n")
	}
	return []byte(b.String())
}

// sanitizeRemoteURL returns a remote URL without credentials: http(s)
// URLs lose their user information, ssh and git URLs their password, every
// URL its query and fragment. Transports that run commands ("ext::"),
// local paths and file URLs are refused (false): they mean nothing inside
// the sandbox or run something there.
func sanitizeRemoteURL(raw string) (string, bool) {
	if strings.Contains(raw, "::") || strings.ContainsAny(raw, "\n\r\x00") {
		return "", false
	}
	scheme, _, hasScheme := strings.Cut(raw, "://")
	if !hasScheme {
		// scp-like [user@]host:path; a path (./x, /x, x/y:z) is local.
		host, _, ok := strings.Cut(raw, ":")
		if !ok || host == "" || strings.ContainsAny(host, "/\\") {
			return "", false
		}
		return raw, true
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "", false
	}
	switch strings.ToLower(scheme) {
	case "https", "http":
		u.User = nil
	case "ssh", "git", "git+ssh", "ssh+git":
		if u.User != nil {
			u.User = url.User(u.User.Username())
		}
	default:
		return "", false
	}
	u.RawQuery, u.ForceQuery, u.Fragment, u.RawFragment = "", false, "", ""
	return u.String(), true
}
