package scaffold

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/fullsend-ai/agent-sandbox/templates"
)

// installRE finds a versioned install of fullsend in a document.
var installRE = regexp.MustCompile(`github\.com/fullsend-ai/agent-sandbox/cmd/fullsend@([^\s"'` + "`" + `]+)`)

// The install commands of the README and the getting-started page name the
// version in the one form .fullsend-version and the templates accept: a
// release tag (vX.Y.Z as the placeholder), never @latest or a branch.
func TestInstallDocsAgreeOnTheVersionForm(t *testing.T) {
	for _, doc := range []string{"README.md", "docs/getting-started.md"} {
		data, err := os.ReadFile(filepath.Join("..", filepath.FromSlash(doc)))
		if err != nil {
			t.Fatal(err)
		}
		found := installRE.FindAllStringSubmatch(string(data), -1)
		if len(found) == 0 {
			t.Errorf("%s installs no versioned fullsend", doc)
		}
		for _, m := range found {
			if v := m[1]; v != "vX.Y.Z" && !releaseVersion.MatchString(v) {
				t.Errorf("%s installs fullsend@%s; want a release tag (vX.Y.Z), the form .fullsend-version and the templates take", doc, v)
			}
		}
	}
	// The templates check the same form they are given.
	for _, kind := range []string{"github", "gitlab"} {
		fsys, err := templates.FS(kind)
		if err != nil {
			t.Fatal(err)
		}
		names, err := templates.List(kind)
		if err != nil {
			t.Fatal(err)
		}
		checks := 0
		for _, n := range names {
			data, err := readFS(fsys, n)
			if err != nil {
				t.Fatal(err)
			}
			checks += strings.Count(data, `'^v[0-9]+\.[0-9]+\.[0-9]+$'`)
		}
		if checks == 0 || releaseVersion.String() != `^v[0-9]+\.[0-9]+\.[0-9]+$` {
			t.Errorf("%s templates: %d release-tag checks; scaffold's form is %s", kind, checks, releaseVersion)
		}
	}
}

// readFS reads one file of a template file system as text.
func readFS(fsys fs.FS, name string) (string, error) {
	data, err := fs.ReadFile(fsys, name)
	return string(data), err
}
