package profile

import (
	"regexp"
	"strings"
)

// pathMatch is the glob crate's Pattern::matches with default options
// (MatchOptions::new: `*` crosses `/`, case sensitive), which
// method_matcher_matches_tools_call uses (profiles.rs:1018-1022 @ v0.0.111).
// An invalid pattern is an error, as Pattern::new fails.
func pathMatch(pattern, s string) (bool, error) {
	var b strings.Builder
	b.WriteString("^")
	for i := 0; i < len(pattern); i++ {
		switch ch := pattern[i]; ch {
		case '*':
			b.WriteString(".*")
		case '?':
			b.WriteString(".")
		case '[':
			j := strings.IndexByte(pattern[i+1:], ']')
			if j < 0 {
				return false, errBadGlob
			}
			class := pattern[i+1 : i+1+j]
			if strings.HasPrefix(class, "!") {
				class = "^" + class[1:]
			}
			b.WriteString("[" + strings.ReplaceAll(class, `\`, `\\`) + "]")
			i += j + 1
		default:
			b.WriteString(regexp.QuoteMeta(string(ch)))
		}
	}
	b.WriteString("$")
	re, err := regexp.Compile(b.String())
	if err != nil {
		return false, err
	}
	return re.MatchString(s), nil
}

type globError string

func (e globError) Error() string { return string(e) }

const errBadGlob = globError("unterminated [ in glob")
