package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fullsend-ai/agent-sandbox/bundle"
)

// TestInitTwice runs init into a new directory and again: the second run
// skips every file, and the output names the next commands.
func TestInitTwice(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "agents repo")
	stdout, _, err := runFullsend(t, "init", dir)
	if err != nil {
		t.Fatal(err)
	}
	// A test binary is a devel build: it pins no version, and says so.
	for _, want := range []string{"wrote   " + filepath.Join(dir, "agents", "summarizer.md"), "compiled summarizer", "fullsend policy test '" + dir + "'", "signing: keyless",
		"note:   .fullsend-version not written: this fullsend (devel) is not a release version"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
	stdout, _, err = runFullsend(t, "init", "--key", "-o", "json", dir)
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Signing string   `json:"signing"`
		Written []string `json:"written"`
		Skipped []string `json:"skipped"`
		Agents  []string `json:"agents"`
		Next    []string `json:"next"`
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	if len(rep.Written) != 0 || len(rep.Skipped) < 8 || rep.Signing != "key" || len(rep.Next) != 3 || len(rep.Agents) != 1 {
		t.Errorf("second run: %+v", rep)
	}
	if _, _, err := runFullsend(t, "policy", "test", dir); err != nil {
		t.Errorf("policy test of the scaffold: %v", err)
	}
}

func TestInitUsage(t *testing.T) {
	if _, _, err := runFullsend(t, "init", "-o", "yaml", t.TempDir()); err == nil || !strings.Contains(err.Error(), "unknown output format") {
		t.Errorf("error %v", err)
	}
}

// TestInitKeepsOpenShellVersion runs init again over policies compiled for
// another OpenShell version: it keeps that version.
func TestInitKeepsOpenShellVersion(t *testing.T) {
	dir := t.TempDir()
	if _, _, err := runFullsend(t, "init", dir); err != nil {
		t.Fatal(err)
	}
	if _, _, err := runFullsend(t, "policy", "compile", "--openshell-version", "v0.0.83", dir); err != nil {
		t.Fatal(err)
	}
	if _, _, err := runFullsend(t, "init", dir); err != nil {
		t.Fatal(err)
	}
	m, _, err := bundle.ReadManifest(os.DirFS(filepath.Join(dir, "policies")))
	if err != nil || m.OpenShellVersion != "v0.0.83" {
		t.Errorf("manifest after init: %v, %v; want OpenShell v0.0.83 kept", m, err)
	}
}

// TestInitKeyInExistingRepository: init --key over a repository whose
// SIGNING.md and .gitignore are its own says it skipped SIGNING.md (which
// describes keyless signing) and names the run directories to ignore.
func TestInitKeyInExistingRepository(t *testing.T) {
	dir := t.TempDir()
	if _, _, err := runFullsend(t, "init", dir); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("node_modules/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, _, err := runFullsend(t, "init", "--key", dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"note:   SIGNING.md kept: it describes keyless signing; fullsend init --force replaces it with the key instructions",
		"note:   .gitignore kept: add /out/ /fullsend-out/ /fullsend-diag/ *.key to it",
		"(signing: key; " + filepath.Join(dir, "SIGNING.md") + " was skipped, see the note above)",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
}
