package engine

import (
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"strings"
	"testing"
)

// TestRuntimeHoldsNoOfflineTools: the runtime package loads and runs
// models; the offline tools (quantize, synth, inspect) are packages of
// their own that it does not import, so a program embedding the engine
// carries none of them and a change to a tool cannot touch the runtime.
func TestRuntimeHoldsNoOfflineTools(t *testing.T) {
	pkg, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, imp := range pkg.Imports {
		for _, tool := range []string{"/engine/quantize", "/engine/synth", "/engine/inspect"} {
			if strings.HasSuffix(imp, tool) {
				t.Errorf("the runtime imports %s", imp)
			}
		}
	}
	offline := map[string]bool{"Synth": true, "SynthSpec": true, "QuantizeFile": true, "PlanQuantize": true, "QuantizeOptions": true, "Inspect": true, "FileInfo": true}
	fset := token.NewFileSet()
	for _, name := range pkg.GoFiles {
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			var ids []string
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil {
					ids = append(ids, d.Name.Name)
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					if ts, ok := s.(*ast.TypeSpec); ok {
						ids = append(ids, ts.Name.Name)
					}
				}
			}
			for _, id := range ids {
				if offline[id] {
					t.Errorf("%s: the runtime declares the offline tools' %s", name, id)
				}
			}
		}
	}
}
