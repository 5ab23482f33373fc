package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/fullsend-ai/agent-sandbox/bundle"
	"github.com/fullsend-ai/agent-sandbox/cienv"
	"github.com/fullsend-ai/agent-sandbox/ciout"
)

// checkStale applies bundle.StaleRule to the compiled bundle in
// policiesDir of the project in dir, the same way in every command: in CI
// a stale bundle is an error; elsewhere the warning goes to errw and the
// command goes on. It reports whether the bundle was stale. No bundle, or
// one whose sources are not under dir, is not judged.
func checkStale(dir, policiesDir string, getenv func(string) string, errw io.Writer) (bool, error) {
	rel, err := filepath.Rel(dir, policiesDir)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return false, nil
	}
	s, err := bundle.Freshness(os.DirFS(dir), filepath.ToSlash(rel))
	if errors.Is(err, bundle.ErrManifest) || (err == nil && !s.SourcesFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	ci := cienv.Detect(getenv)
	warning, err := bundle.StaleRule(s, ci.IsCI(), compileCommand(dir))
	if err != nil {
		// The file names come from the checkout: escaped for the CI log.
		return true, logSafeError{err: err, msg: ciout.Escape(ci.Kind(), err.Error())}
	}
	if warning != "" {
		fmt.Fprintln(errw, ciout.Escape(ci.Kind(), warning))
	}
	return s.Stale(), nil
}
