package compile

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/fullsend-ai/agent-sandbox/bundle"
)

// TestCompileDirPolicyFragment compiles a project shaped like fullsend
// experiment 0005 (fullsend-ai/experiments, 0005-agent-scoped-tools-triage),
// where an agent's `sandbox:` names a hand-written OpenShell policy under
// policies/. The fragment is an input like the agent file: the manifest pins
// it, and the written bundle opens with every source checked. It once failed
// with "source policies/readonly-with-web.yaml was not read by the loader".
func TestCompileDirPolicyFragment(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"agents/triage.md": `---
name: triage
description: Triage a new issue with read-only tools and the web.
tools: Read, Grep, Bash(curl *)
sandbox: policies/readonly-with-web.yaml
---
Triage the issue.
`,
		"policies/readonly-with-web.yaml": `version: 1
network_policies:
  web:
    name: web
    endpoints:
      - host: docs.python.org
        port: 443
        protocol: rest
        enforcement: enforce
        access: read-only
    binaries:
      - path: /usr/bin/curl
`,
	}
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, err := CompileDir(context.Background(), dir, ProjectOptions{Provider: "anthropic"})
	if err != nil {
		t.Fatal(err)
	}
	want := bundle.SourceFile{Path: "policies/readonly-with-web.yaml", SHA256: bundle.SHA256Hex([]byte(files["policies/readonly-with-web.yaml"]))}
	found := false
	for _, s := range out.Manifest.Agents["triage"].Sources {
		found = found || s == want
	}
	if !found {
		t.Fatalf("manifest sources %+v lack the fragment %+v", out.Manifest.Agents["triage"].Sources, want)
	}
	if _, ok := out.Agents["triage"].Policy.NetworkPolicies["docs_python_org_443"]; !ok {
		t.Errorf("fragment endpoint not merged: %v", out.Agents["triage"].Policy.PolicyKeys())
	}
	if err := Write(filepath.Join(dir, "policies"), out); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "policies", "readonly-with-web.yaml")); err != nil {
		t.Fatalf("the hand-written fragment must survive the write: %v", err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	if _, err := bundle.Open(root.FS(), "policies", bundle.WithAgents("triage"), bundle.WithSources(nil)); err != nil {
		t.Fatalf("the written bundle does not verify: %v", err)
	}
}
