package policycue

import (
	"bytes"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"

	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/cuecontext"
	"cuelang.org/go/cue/format"
	"cuelang.org/go/cue/parser"

	"github.com/fullsend-ai/agent-sandbox/openshell"
)

// OpenShellSchemaCUE returns the OpenShell policy schema as one CUE file for
// the cue CLI (`cue vet -c policy.cue policy.yaml -d '#Policy'`): the
// embedded policy.cue as is when version is "", or, for a release, the
// same file with #Policy pinned to that release's #Features.
func OpenShellSchemaCUE(version string) ([]byte, error) {
	src, err := fs.ReadFile(openshellSchemaFS, path.Join(OpenShellSchemaDir, "policy.cue"))
	if err != nil {
		return nil, fmt.Errorf("reading the OpenShell schema: %w", err)
	}
	if version == "" {
		return src, nil
	}
	v, err := openshell.NormalizeVersion(version)
	if err != nil {
		return nil, err
	}
	pkg, err := LoadEmbedded(cuecontext.New(), openshellSchemaFS, OpenShellSchemaDir)
	if err != nil {
		return nil, err
	}
	switches, err := featureSwitches(pkg)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(switches))
	for n := range switches {
		names = append(names, n)
	}
	sort.Strings(names)
	var b bytes.Buffer
	b.Write(src)
	fmt.Fprintf(&b, "\n// #Policy is pinned to OpenShell %s: the features of that release.\n#Policy: #f: {\n", v)
	for _, n := range names {
		fmt.Fprintf(&b, "\t%s: %t\n", n, openshell.Supports(switches[n], v))
	}
	b.WriteString("}\n")
	return formatCUE("policy.cue", b.Bytes())
}

// InputSchemaCUE returns the frontmatter input schemas (CUE package input,
// several embedded files) merged into one CUE file for the cue CLI
// (`cue vet -c input.cue frontmatter.yaml -d '#ClaudeAgent'`).
func InputSchemaCUE() ([]byte, error) {
	entries, err := fs.ReadDir(inputSchemaFS, InputSchemaDir)
	if err != nil {
		return nil, fmt.Errorf("reading the input schemas: %w", err)
	}
	var files []*ast.File
	for _, e := range entries {
		name := path.Join(InputSchemaDir, e.Name())
		src, err := fs.ReadFile(inputSchemaFS, name)
		if err != nil {
			return nil, fmt.Errorf("reading the input schemas: %w", err)
		}
		f, err := parser.ParseFile(name, src, parser.ParseComments)
		if err != nil {
			return nil, fmt.Errorf("parsing %s: %w", name, err)
		}
		files = append(files, f)
	}
	merged, err := mergeFiles(files)
	if err != nil {
		return nil, err
	}
	src, err := format.Node(merged)
	if err != nil {
		return nil, fmt.Errorf("printing the input schemas: %w", err)
	}
	return formatCUE("input.cue", src)
}

// mergeFiles joins the files of one CUE package into one file: the package
// clause that carries the package's doc, one import declaration, then every
// other declaration in file order.
func mergeFiles(files []*ast.File) (*ast.File, error) {
	var pkg *ast.Package
	imports := map[string]bool{}
	var decls []ast.Decl
	for _, f := range files {
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.Package:
				if pkg == nil || len(ast.Comments(d)) > 0 {
					pkg = d
				}
			case *ast.ImportDecl:
				for _, s := range d.Specs {
					imports[s.Path.Value] = true
				}
			default:
				decls = append(decls, d)
			}
		}
	}
	if pkg == nil {
		return nil, fmt.Errorf("the input schemas have no package clause")
	}
	paths := make([]string, 0, len(imports))
	for p := range imports {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	imp := &ast.ImportDecl{}
	for _, p := range paths {
		u, err := strconv.Unquote(p)
		if err != nil {
			return nil, fmt.Errorf("import %s: %w", p, err)
		}
		imp.Specs = append(imp.Specs, ast.NewImport(nil, u))
	}
	return &ast.File{Decls: append([]ast.Decl{pkg, imp}, decls...)}, nil
}

// formatCUE checks that src parses and returns it in canonical format.
func formatCUE(name string, src []byte) ([]byte, error) {
	out, err := format.Source(src)
	if err != nil {
		return nil, fmt.Errorf("formatting %s: %w", name, err)
	}
	return out, nil
}
