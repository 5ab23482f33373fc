package main

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fullsend-ai/agent-sandbox/bundle"
)

// A missing argument is named from the usage line; run lists the agents
// it could run.
func TestMissingArgumentsAreNamed(t *testing.T) {
	dir := initProject(t)
	t.Chdir(dir)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"verify", "--key", "cosign.pub"}, "missing IMAGE (usage: fullsend verify IMAGE [flags])"},
		{[]string{"image", "sign"}, "missing IMAGE (usage: fullsend image sign IMAGE [flags])"},
		{[]string{"policy", "explain"}, "missing AGENT (usage: fullsend policy explain AGENT [DIR] [flags])"},
		{[]string{"run"}, "missing AGENT (usage: fullsend run AGENT [DIR] [flags]; no compiled project in /opt/fullsend to list agents from; agents in .: summarizer, given as DIR)"},
		{[]string{"run", "x", ".", "extra"}, "3 arguments, at most 2 (usage: fullsend run AGENT [DIR] [flags])"},
		{[]string{"run", "--dir", ".", "--verified-image", "x"}, "missing AGENT (usage: fullsend run AGENT [DIR] [flags]; agents in .: summarizer)"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			_, _, err := runFullsend(t, tc.args...)
			if exitCode(err) != 2 || err.Error() != tc.want {
				t.Fatalf("exit %d: %v\nwant: %s", exitCode(err), err, tc.want)
			}
		})
	}
}

// A typo'd agent gets a did-you-mean, before the runner starts: no
// diagnostic bundle is left behind.
func TestRunUnknownAgent(t *testing.T) {
	dir := initProject(t)
	t.Chdir(dir)
	_, _, err := runFullsend(t, "run", "sumarizer", ".", "--diag-dir", "diag")
	want := "agent sumarizer is not in policies/manifest.json; did you mean summarizer? (agents in .: summarizer)"
	if exitCode(err) != 78 || !errors.Is(err, bundle.ErrUnknownAgent) || err.Error() != want {
		t.Fatalf("exit %d: %v\nwant: %s", exitCode(err), err, want)
	}
	for _, d := range []string{"diag", "fullsend-diag"} {
		if _, err := os.Stat(filepath.Join(dir, d)); !os.IsNotExist(err) {
			t.Errorf("%s left behind: %v", d, err)
		}
	}
}

func TestUsageArgs(t *testing.T) {
	for _, tc := range []struct {
		use           string
		req, optional []string
	}{
		{"run AGENT [DIR]", []string{"AGENT"}, []string{"DIR"}},
		{"verify IMAGE", []string{"IMAGE"}, nil},
		{"suggest AGENT [DIR] --logs PATH...", []string{"AGENT"}, []string{"DIR"}},
		{"validate [FILE...]", nil, nil},
		{"version", nil, nil},
	} {
		req, opt := usageArgs(tc.use)
		if !slices.Equal(req, tc.req) || !slices.Equal(opt, tc.optional) {
			t.Errorf("usageArgs(%q) = %v, %v", tc.use, req, opt)
		}
	}
}

// doctor takes the project as a positional DIR, like every other command;
// --dir stays as a deprecated alias, and an agent name is still an agent.
func TestDoctorPositionalDir(t *testing.T) {
	dir := initProject(t)
	t.Chdir(dir)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"doctor", ".", "-o", "json"}, `"agent summarizer: placeholders"`},
		{[]string{"doctor", dir, "summarizer", "-o", "json"}, `"agent summarizer: placeholders"`},
		{[]string{"doctor", "--dir", ".", "-o", "json"}, `"agent summarizer: placeholders"`},
		{[]string{"doctor", "summarizer", "-o", "json"}, "/opt/fullsend"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			stdout, _, err := runFullsend(t, tc.args...)
			if exitCode(err) != 1 || !strings.Contains(stdout, tc.want) {
				t.Fatalf("exit %d: %v\n%s", exitCode(err), err, stdout)
			}
		})
	}
	if _, _, err := runFullsend(t, "doctor", ".", "--dir", "/elsewhere"); exitCode(err) != 2 {
		t.Errorf("DIR and a different --dir: %v", err)
	}
}
