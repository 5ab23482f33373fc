package lint

import (
	"context"
	"fmt"
	"go/build"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/fullsend-ai/agent-sandbox/openshell"
)

// benchDir writes n policies (the corpus, cycled) into a temp directory.
func benchDir(b *testing.B, n int) string {
	b.Helper()
	src, _ := filepath.Glob("testdata/bad/*.yaml")
	src = append(src, "testdata/good/triage.yaml", "../openshell/decide/testdata/policy.yaml")
	dir := b.TempDir()
	for i := 0; i < n; i++ {
		data, err := os.ReadFile(src[i%len(src)])
		if err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("p%04d.yaml", i)), data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return dir
}

// readPolicy reads and strictly decodes one policy file.
func readPolicy(b *testing.B, file string) ([]byte, *openshell.Policy) {
	b.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		b.Fatal(err)
	}
	p, err := openshell.Unmarshal(raw)
	if err != nil {
		b.Fatal(err)
	}
	return raw, p
}

// BenchmarkLint lints 1, 10, 100 and 1000 policy files in-process (read,
// strict decode, evaluate with the prepared query), and, when conftest is
// installed, runs `conftest test` with the same rules on the same files.
func BenchmarkLint(b *testing.B) {
	e := testEngine(b)
	conftest, _ := exec.LookPath("conftest")
	if gobin := filepath.Join(build.Default.GOPATH, "bin", "conftest"); conftest == "" && fileExists(gobin) {
		conftest = gobin
	}
	for _, n := range []int{1, 10, 100, 1000} {
		dir := benchDir(b, n)
		files, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
		b.Run(fmt.Sprintf("inprocess/policies=%d", n), func(b *testing.B) {
			start := processCPU()
			for b.Loop() {
				inputs := make([]Input, 0, len(files))
				for _, f := range files {
					raw, p := readPolicy(b, f)
					inputs = append(inputs, Input{File: f, Policy: p, Raw: raw})
				}
				if _, err := e.Lint(context.Background(), inputs); err != nil {
					b.Fatal(err)
				}
			}
			reportCPU(b, start)
		})
		if conftest == "" {
			continue
		}
		b.Run(fmt.Sprintf("conftest/policies=%d", n), func(b *testing.B) {
			for b.Loop() {
				cmd := exec.Command(conftest, "test", "--all-namespaces", "--no-color", "-o", "json", "-p", "rules", dir)
				if out, err := cmd.Output(); err != nil && len(out) == 0 {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkNew measures the engine's start-up: parsing and compiling the
// embedded rules, loading the secret rules' data and preparing the query.
func BenchmarkNew(b *testing.B) {
	start := processCPU()
	for b.Loop() {
		if _, err := New(context.Background(), Options{}); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, start)
}

// BenchmarkLintAgents lints n agents of one project in-process, each with
// its context as ProjectInputs builds it (tier, spawns, all n agents for
// privilege lifting): the lint stage of `policy compile` on a large project.
func BenchmarkLintAgents(b *testing.B) {
	e := testEngine(b)
	for _, n := range []int{100, 1000} {
		inputs := agentInputs(b, n)
		b.Run(fmt.Sprintf("agents=%d", n), func(b *testing.B) {
			start := processCPU()
			for b.Loop() {
				if _, err := e.Lint(context.Background(), inputs); err != nil {
					b.Fatal(err)
				}
			}
			reportCPU(b, start)
		})
	}
}

// agentInputs builds n agents over the policy corpus: tiers cycle through
// read-only, network and full, and every third agent spawns the next two.
func agentInputs(b *testing.B, n int) []Input {
	b.Helper()
	files, _ := filepath.Glob(filepath.Join(benchDir(b, n), "*.yaml"))
	tiers := []string{"read-only", "network", "full"}
	all := map[string]AgentInfo{}
	inputs := make([]Input, n)
	for i, f := range files {
		raw, p := readPolicy(b, f)
		name := fmt.Sprintf("agent-%d", i)
		var spawns []string
		if i%3 == 0 {
			spawns = []string{fmt.Sprintf("agent-%d", (i+1)%n), fmt.Sprintf("agent-%d", (i+2)%n)}
		}
		tier := tiers[i%len(tiers)]
		all[name] = AgentInfo{Tier: tier, Spawns: spawns, Writes: Writes(p)}
		inputs[i] = Input{Name: name, File: f, Policy: p, Raw: raw,
			Context: Context{Agent: name, Tier: tier, Spawns: spawns, Placeholders: []string{}}}
	}
	for i := range inputs {
		inputs[i].Context.Agents = all
	}
	return inputs
}
