package lintcheck_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"testing/fstest"

	"github.com/fullsend-ai/agent-sandbox/agentdef"
	"github.com/fullsend-ai/agent-sandbox/compile"
	"github.com/fullsend-ai/agent-sandbox/compile/lintcheck"
	"github.com/fullsend-ai/agent-sandbox/lint"
	"github.com/fullsend-ai/agent-sandbox/policycue"
)

// genProject builds an in-memory project of n agents in four shapes, each
// with its own skill: the same shapes bench/compile.sh generates.
func genProject(n int) fstest.MapFS {
	fsys := fstest.MapFS{}
	for i := 0; i < n; i++ {
		fsys[fmt.Sprintf("skills/skill-%d/SKILL.md", i)] = &fstest.MapFile{Data: []byte(fmt.Sprintf(
			"---\nname: skill-%d\ndescription: Generated skill %d.\nallowed-tools: Read Grep\n---\nBody.\n", i, i))}
		var tools, extra string
		switch i % 4 {
		case 0:
			tools = "Read, Grep, Bash(grep *), Bash(cat *)"
		case 1:
			tools = "Bash(gh,jq), Read"
		case 2:
			tools = fmt.Sprintf("WebFetch(domain:docs-%d.example.com), Read", i)
		case 3:
			tools = "Bash(curl *)"
			extra = fmt.Sprintf("sandbox:\n  tier: full\n  endpoints:\n    - host: api-%d.example.com\n      rules:\n        - GET /v1/items/**\n        - POST /v1/items/{{ISSUE_NUMBER}}/notes\n", i)
		}
		fsys[fmt.Sprintf("agents/agent-%d.md", i)] = &fstest.MapFile{Data: []byte(fmt.Sprintf(
			"---\nname: agent-%d\ndescription: Generated agent %d.\ntools: %s\nskills: [skill-%d]\n%s---\nBody.\n", i, i, tools, i, extra))}
	}
	return fsys
}

func BenchmarkCompile(b *testing.B) {
	for _, n := range []int{1, 10, 100, 1000} {
		fsys := genProject(n)
		b.Run(fmt.Sprintf("agents=%d", n), func(b *testing.B) {
			opts, err := options()
			if err != nil {
				b.Fatal(err)
			}
			opts.Checks = []compile.Check{compile.ValidateCheck, lintcheck.New(lint.Options{})}
			b.ReportAllocs()
			for b.Loop() {
				proj, err := agentdef.Load(fsys)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := compile.Compile(context.Background(), proj, fsys, opts); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N)/float64(n), "ms/agent")
		})
	}
}

// options are the compile options of `fullsend policy compile` without
// flags: the built-in catalog, no values.
func options() (compile.Options, error) {
	cat, err := policycue.LoadCatalog(nil, "")
	return compile.Options{Catalog: cat}, err
}

// writeMapFS writes fsys under a new temporary directory and returns it.
func writeMapFS(t testing.TB, fsys fstest.MapFS) string {
	t.Helper()
	dir := t.TempDir()
	for name, f := range fsys {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}
