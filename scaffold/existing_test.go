package scaffold

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// oldGitignore is the .gitignore init wrote before it listed fullsend
// run's directories.
const oldGitignore = `# fullsend build outputs (fullsend image build --oci-layout out/image ...).
/out/
# Private signing keys never go into the repository, even encrypted: keep
# them in the CI's secret store (see SIGNING.md).
*.key
`

// A repository's kept .gitignore and SIGNING.md: one an earlier init wrote
// is completed with the run directories; the user's own is left alone and
// the note names what to add; a SIGNING.md for another signing choice is
// named.
func TestWriteKeptFiles(t *testing.T) {
	keyless, err := os.ReadFile(filepath.Join("tree", "SIGNING-keyless.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name            string
		gitignore       string // "" = none
		signing         string // kept SIGNING.md, "" = none
		choice          string
		wantFile        string // the .gitignore after Write, "" = as it was
		wantNote        string
		wantSigningNote string
	}{
		{"fresh", "", "", SigningKey, "", "", ""},
		{"earlier init", oldGitignore, "", SigningKeyless, oldGitignore + "# added by a later fullsend init\n/fullsend-out/\n/fullsend-diag/\n",
			".gitignore (written by an earlier fullsend init) completed with /fullsend-out/ /fullsend-diag/", ""},
		{"the user's own", "node_modules/\n*.key\n/fullsend-out/", "", SigningKeyless, "",
			".gitignore kept: add /out/ /fullsend-diag/ to it, so that run output, evidence and keys stay out of commits", ""},
		{"complete", "/out/\n/fullsend-out/\n /fullsend-diag/\n*.key\n", "", SigningKeyless, "", "", ""},
		{"keyless instructions, key chosen", "", string(keyless), SigningKey, "", "",
			"SIGNING.md kept: it describes keyless signing; fullsend init --force replaces it with the key instructions"},
		{"the user's instructions", "", "we sign with gpg\n", SigningKey, "", "",
			"SIGNING.md kept: it was not written by fullsend init and may not describe key signing; fullsend init --force replaces it with the key instructions"},
		{"matching instructions", "", string(keyless), SigningKeyless, "", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, data := range map[string]string{".gitignore": tc.gitignore, "SIGNING.md": tc.signing} {
				if data != "" {
					if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
			res, err := Write(Options{Dir: dir, Signing: tc.choice})
			if err != nil {
				t.Fatal(err)
			}
			if res.GitignoreNote != tc.wantNote || res.SigningNote != tc.wantSigningNote {
				t.Errorf("notes:\n%q\n%q\nwant\n%q\n%q", res.GitignoreNote, res.SigningNote, tc.wantNote, tc.wantSigningNote)
			}
			got, _ := os.ReadFile(filepath.Join(dir, ".gitignore"))
			want := tc.wantFile
			if want == "" && tc.gitignore != "" {
				want = tc.gitignore
			}
			if want != "" && string(got) != want {
				t.Errorf(".gitignore:\n%s\nwant\n%s", got, want)
			}
			if tc.gitignore == "" && !strings.Contains(string(got), "/fullsend-diag/") {
				t.Errorf("new .gitignore lacks the run directories:\n%s", got)
			}
		})
	}
}
