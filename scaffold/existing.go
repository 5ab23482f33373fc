package scaffold

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/fullsend-ai/agent-sandbox/internal/atomicfile"
)

// What Write does about the files an existing repository kept: a
// .gitignore lacking the scaffold's patterns, a SIGNING.md describing
// another signing choice.

// gitignoreFile is the scaffold's .gitignore path.
const gitignoreFile = ".gitignore"

// signingFile is the scaffold's signing instructions path.
const signingFile = "SIGNING.md"

// gitignorePatterns are the patterns of the scaffold's .gitignore (its
// lines that are neither blank nor comments), in order.
func gitignorePatterns(data []byte) []string {
	var out []string
	for _, l := range strings.Split(string(data), "\n") {
		l = strings.TrimSpace(l)
		if l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return out
}

// missingPatterns are the patterns of want that have no line of their own
// in have.
func missingPatterns(have []byte, want []string) []string {
	lines := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(have))
	sc.Buffer(nil, len(have)+1)
	for sc.Scan() {
		lines[strings.TrimSpace(sc.Text())] = true
	}
	var out []string
	for _, p := range want {
		if !lines[p] {
			out = append(out, p)
		}
	}
	return out
}

// maxGitignore bounds the kept .gitignore Write reads.
const maxGitignore = 1 << 20

// keptGitignore completes a .gitignore the repository kept: one the
// scaffold wrote (it starts with the scaffold's first line) gets the
// patterns it lacks appended; any other is left alone and the returned
// note names the patterns to add. "" when nothing is missing.
func keptGitignore(root *os.Root, ours []byte) (string, error) {
	have, err := readKept(root, gitignoreFile, maxGitignore)
	if err != nil || have == nil {
		return "", err
	}
	missing := missingPatterns(have, gitignorePatterns(ours))
	if len(missing) == 0 {
		return "", nil
	}
	first, _, _ := bytes.Cut(ours, []byte("\n"))
	if !bytes.HasPrefix(have, first) {
		return fmt.Sprintf("%s kept: add %s to it, so that run output, evidence and keys stay out of commits", gitignoreFile, strings.Join(missing, " ")), nil
	}
	data := bytes.Clone(have)
	if len(data) > 0 && data[len(data)-1] != '\n' {
		data = append(data, '\n')
	}
	data = append(data, "# added by a later fullsend init\n"+strings.Join(missing, "\n")+"\n"...)
	if err := atomicfile.WriteIn(root, gitignoreFile, data, 0o644); err != nil {
		return "", fmt.Errorf("%s: %w", gitignoreFile, err)
	}
	return fmt.Sprintf("%s (written by an earlier fullsend init) completed with %s", gitignoreFile, strings.Join(missing, " ")), nil
}

// keptSigning says what a SIGNING.md the repository kept describes when
// it is not the instructions for signing: "" when it matches them.
func keptSigning(root *os.Root, signing string, ours []byte) (string, error) {
	have, err := readKept(root, signingFile, maxGitignore)
	if err != nil || have == nil || bytes.Equal(have, ours) {
		return "", err
	}
	what := "was not written by fullsend init and may not describe " + signing + " signing"
	for _, other := range []string{SigningKey, SigningKeyless} {
		if data, err := fs.ReadFile(tree, "tree/SIGNING-"+other+".md"); err == nil && bytes.Equal(have, data) {
			what = "describes " + other + " signing"
		}
	}
	return fmt.Sprintf("%s kept: it %s; fullsend init --force replaces it with the %s instructions", signingFile, what, signing), nil
}

// readKept reads the regular file name under root, at most limit bytes;
// nil when there is none or it is something else.
func readKept(root *os.Root, name string, limit int64) ([]byte, error) {
	st, err := root.Lstat(name)
	if errors.Is(err, fs.ErrNotExist) || (err == nil && !st.Mode().IsRegular()) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if st.Size() > limit {
		return nil, fmt.Errorf("%s: larger than %d bytes", name, limit)
	}
	data, err := root.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return data, nil
}
