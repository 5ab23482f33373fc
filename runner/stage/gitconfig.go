package stage

import (
	"errors"
	"maps"
	"net/url"
	"slices"
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
	for {
		c, ok := p.next()
		if !ok {
			return p.entries, nil
		}
		if err := p.statement(c); err != nil {
			return nil, err
		}
	}
}

type gitConfigParser struct {
	data             []byte
	i                int
	section, subsect string
	entries          []gitConfigEntry
}

// statement reads what starts with c: a blank, a comment, a section
// header, or a variable (only inside a section).
func (p *gitConfigParser) statement(c byte) error {
	switch {
	case c == '\n' || isBlank(c):
		return nil
	case isComment(c):
		p.skipLine()
		return nil
	case c == '[':
		return p.header()
	case isASCIILetter(c) && p.section != "":
		return p.variable(c)
	}
	return errGitConfig
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

// nextNonBlank returns the next byte that is not a space or a tab.
func (p *gitConfigParser) nextNonBlank() (byte, bool) {
	c, ok := p.next()
	for ok && isBlank(c) {
		c, ok = p.next()
	}
	return c, ok
}

// inLine returns the next byte of the current line: the end of the line
// or of the file is an error.
func (p *gitConfigParser) inLine() (byte, error) {
	c, ok := p.next()
	if !ok || c == '\n' {
		return 0, errGitConfig
	}
	return c, nil
}

// expect reads want, or fails.
func (p *gitConfigParser) expect(want byte) error {
	if c, ok := p.next(); !ok || c != want {
		return errGitConfig
	}
	return nil
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
			return p.plainHeader(string(name))
		case isBlank(c) && len(name) > 0:
			return p.quotedSubsection(strings.ToLower(string(name)))
		case isNameByte(c) || c == '.':
			name = append(name, c)
		default:
			return errGitConfig
		}
	}
}

// plainHeader starts the section named by "[section]" or by a legacy
// "[section.sub]" header.
func (p *gitConfigParser) plainHeader(name string) error {
	p.section, p.subsect, _ = strings.Cut(strings.ToLower(name), ".")
	if p.section == "" {
		return errGitConfig
	}
	return nil
}

// quotedSubsection reads the ` "subsection"]` rest of a header.
func (p *gitConfigParser) quotedSubsection(section string) error {
	if c, _ := p.nextNonBlank(); c != '"' {
		return errGitConfig
	}
	sub, err := p.quotedText()
	if err != nil {
		return err
	}
	if err := p.expect(']'); err != nil {
		return err
	}
	p.section, p.subsect = section, sub
	return nil
}

// quotedText reads up to the closing quote, on the same line; a backslash
// takes the next byte as it is.
func (p *gitConfigParser) quotedText() (string, error) {
	var text []byte
	for {
		c, err := p.inLine()
		if err != nil {
			return "", err
		}
		if c == '"' {
			return string(text), nil
		}
		if c == '\\' {
			if c, err = p.inLine(); err != nil {
				return "", err
			}
		}
		text = append(text, c)
	}
}

// variable reads "name [= value]" whose first byte is first, and adds it
// to the entries.
func (p *gitConfigParser) variable(first byte) error {
	e := gitConfigEntry{section: p.section, subsection: p.subsect, key: p.varName(first)}
	c, ok := p.nextNonBlank()
	switch {
	case !ok || c == '\n':
	case isComment(c):
		p.skipLine()
	case c == '=':
		v, err := p.value()
		if err != nil {
			return err
		}
		e.value, e.hasValue = v, true
	default:
		return errGitConfig
	}
	p.entries = append(p.entries, e)
	return nil
}

// varName reads the rest of a variable name whose first byte is first,
// and returns it lower case.
func (p *gitConfigParser) varName(first byte) string {
	name := []byte{first}
	for c, ok := p.peek(); ok && isNameByte(c); c, ok = p.peek() {
		p.next()
		name = append(name, c)
	}
	return strings.ToLower(string(name))
}

// value reads a value as git does: unquoted leading and trailing blanks
// dropped, inner ones kept, quotes removed, \\ \" \n \t \b escapes, a
// backslash-newline joins lines, an unquoted # or ; starts a comment.
func (p *gitConfigParser) value() (string, error) {
	var v valueText
	for {
		c, ok := p.next()
		if !ok || c == '\n' {
			if v.quoted {
				return "", errGitConfig
			}
			return string(v.b), nil
		}
		if !v.quoted && isComment(c) {
			p.skipLine()
			return string(v.b), nil
		}
		if err := p.valueByte(&v, c); err != nil {
			return "", err
		}
	}
}

// valueText is a value being read.
type valueText struct {
	b       []byte
	quoted  bool
	pending int // unquoted blanks not yet known to be inner ones
}

// valueByte adds c, a byte of a value that neither ends nor comments it.
func (p *gitConfigParser) valueByte(v *valueText, c byte) error {
	if !v.quoted && isBlank(c) {
		if len(v.b) > 0 {
			v.pending++
		}
		return nil
	}
	for ; v.pending > 0; v.pending-- {
		v.b = append(v.b, ' ')
	}
	switch c {
	case '"':
		v.quoted = !v.quoted
	case '\\':
		e, err := p.escape()
		if err != nil {
			return err
		}
		v.b = append(v.b, e...)
	default:
		v.b = append(v.b, c)
	}
	return nil
}

// gitConfigEscapes maps the byte after a backslash in a value to the byte
// it stands for.
var gitConfigEscapes = map[byte]byte{'n': '\n', 't': '\t', 'b': '\b', '\\': '\\', '"': '"'}

// escape reads what follows a backslash in a value; a newline joins lines.
func (p *gitConfigParser) escape() ([]byte, error) {
	n, ok := p.next()
	if !ok {
		return nil, errGitConfig
	}
	if n == '\n' {
		return nil, nil
	}
	if e, known := gitConfigEscapes[n]; known {
		return []byte{e}, nil
	}
	return nil, errGitConfig
}

func isBlank(c byte) bool   { return c == ' ' || c == '\t' }
func isComment(c byte) bool { return c == '#' || c == ';' }

// isNameByte reports whether c may be part of a section or variable name.
func isNameByte(c byte) bool { return isASCIILetter(c) || isASCIIDigit(c) || c == '-' }

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
	notes := map[string]bool{}
	var kept []gitConfigEntry
	for _, e := range entries {
		clean, note, keep := sanitizeGitConfigEntry(e)
		if note != "" {
			notes[note] = true
		}
		if keep {
			kept = append(kept, clean)
		}
	}
	return writeGitConfig(kept), slices.Sorted(maps.Keys(notes))
}

// gitConfigValueFilters rewrite, or refuse (false), the values of the
// allowlisted keys that can carry a credential or a command.
var gitConfigValueFilters = map[string]func(string) (string, bool){
	"url":     sanitizeRemoteURL,
	"pushurl": sanitizeRemoteURL,
	"tagopt":  tagOpt,
}

// tagOpt accepts the two values of remote.<name>.tagOpt.
func tagOpt(v string) (string, bool) { return v, v == "--no-tags" || v == "--tags" }

// sanitizeGitConfigEntry returns e as it is kept, or keep false, and the
// note (if any) for the list of what was dropped or changed.
func sanitizeGitConfigEntry(e gitConfigEntry) (clean gitConfigEntry, note string, keep bool) {
	keys := gitConfigAllowed[e.section]
	if !keys[e.key] && !keys["*"] || !e.hasValue {
		return e, e.name(), false
	}
	filter := gitConfigValueFilters[e.key]
	if filter == nil {
		return e, "", true
	}
	v, ok := filter(e.value)
	if !ok {
		return e, e.name(), false
	}
	if v != e.value {
		note = e.name() + " (credentials or query removed)"
	}
	e.value = v
	return e, note, true
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
		return scpLikeRemote(raw)
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "", false
	}
	return withoutCredentials(u, scheme)
}

// withoutCredentials returns u, a remote URL of the given scheme, without
// its password (ssh, git) or its whole user information (http, https), its
// query and its fragment; another scheme is refused (false).
func withoutCredentials(u *url.URL, scheme string) (string, bool) {
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

// scpLikeRemote accepts a [user@]host:path remote as it is; a path (./x,
// /x, x/y:z) is local and refused (false).
func scpLikeRemote(raw string) (string, bool) {
	host, _, ok := strings.Cut(raw, ":")
	if !ok || host == "" || strings.ContainsAny(host, "/\\") {
		return "", false
	}
	return raw, true
}
