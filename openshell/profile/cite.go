package profile

import (
	"fmt"
	"strings"

	"github.com/fullsend-ai/agent-sandbox/openshell"
)

// builtinNote is what a citation of a built-in profile says of its
// position: the catalog holds the upstream file's facts, not its lines.
const builtinNote = "built in: fullsend's catalog of its facts, openshell/profile/catalog.go, cites that upstream file"

// Cite is the wording every message that cites a provider layer's grant
// uses (compile's expectation errors, policy test, explain): the layer's
// key, its provider, its profile and where in the profile the deciding
// element is written. path is a policy path in eff (decide.Decision.Path,
// e.g. network_policies._provider_github.endpoints[0].rules[1]); the
// position is the profile's file:line:col when it was read from a file,
// else, for a built-in profile, the upstream file, the element's path
// inside it and a note that the facts come from the catalog.
func (l Layer) Cite(eff *openshell.Policy, path string) string {
	return fmt.Sprintf("provider layer %s (provider %s, profile %s from %s)", l.Key, l.Provider, l.ProfileID, l.position(eff, path))
}

// Cite cites the layer under key with Layer.Cite, or returns "" when key
// is not one of c's layers (the sandbox's own policy decided).
func (c *Composed) Cite(key, path string) string {
	if c == nil {
		return ""
	}
	l, ok := c.LayerOf(key)
	if !ok {
		return ""
	}
	return l.Cite(c.Policy, path)
}

// position is where in the layer's profile the element at path is
// written (see Cite).
func (l Layer) position(eff *openshell.Policy, path string) string {
	prefix := "network_policies." + l.Key
	inner := strings.TrimPrefix(strings.TrimPrefix(path, prefix), ".")
	if l.Builtin {
		if inner != "" {
			return l.File + " " + inner + "; " + builtinNote
		}
		return l.File + "; " + builtinNote
	}
	if eff != nil && strings.HasPrefix(path, prefix) {
		prov := eff.Provenance()
		for p := path; len(p) >= len(prefix); p = parentPath(p) {
			for _, s := range prov[p] {
				if s.Line > 0 {
					return positionOf(s.File, s.Line, s.Column)
				}
			}
		}
	}
	return l.File
}

// parentPath drops the last element of a policy path: a.b[2].c -> a.b[2],
// a.b[2] -> a.b ("" at the root).
func parentPath(p string) string {
	if strings.HasSuffix(p, "]") {
		if i := strings.LastIndexByte(p, '['); i >= 0 {
			return p[:i]
		}
	}
	if i := strings.LastIndexByte(p, '.'); i >= 0 {
		return p[:i]
	}
	return ""
}

// positionOf renders file:line[:col].
func positionOf(file string, line, col int) string {
	if col > 0 {
		return fmt.Sprintf("%s:%d:%d", file, line, col)
	}
	return fmt.Sprintf("%s:%d", file, line)
}
