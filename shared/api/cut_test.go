package api_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// maxGroupFields bounds a handler group: a struct that grows past it is
// turning back into a locator every handler reaches into.
const maxGroupFields = 10

// TestHTTPLayerHoldsNoClients keeps the cut of the HTTP layer honest: no
// file of shared/api (or its groups) imports the database driver's pools
// or the Redis client, no struct holds a pool, the shard router or a Redis
// client, and no handler group (a type with a Mount method) nor the
// router has more than maxGroupFields fields. SQL and Redis
// commands belong to the domain and store packages; each handler group is
// given the services it uses (shared/app builds them).
func TestHTTPLayerHoldsNoClients(t *testing.T) {
	forbiddenImports := map[string]bool{
		"github.com/jackc/pgx/v5":         true,
		"github.com/jackc/pgx/v5/pgxpool": true,
		"github.com/redis/go-redis/v9":    true,
	}
	forbiddenFields := map[string]bool{"pgxpool.Pool": true, "pgx.Conn": true, "shard.Router": true,
		"redis.Client": true, "redis.UniversalClient": true, "redis.ClusterClient": true}
	fset := token.NewFileSet()
	files := 0
	type sized struct {
		where  token.Pos
		fields int
	}
	structs := map[string]sized{}             // "dir.Type"
	groups := map[string]bool{"router": true} // "dir.Type" with a Mount method
	eachSource(t, fset, func(path string, f *ast.File) {
		files++
		for _, imp := range f.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); forbiddenImports[p] {
				t.Errorf("%s imports %s: send SQL and Redis commands through a domain or store package", path, p)
			}
		}
		dir := filepath.Dir(path)
		for _, decl := range f.Decls {
			if fn, ok := decl.(*ast.FuncDecl); ok && fn.Recv != nil && fn.Name.Name == "Mount" {
				groups[dir+"."+typeName(fn.Recv.List[0].Type)] = true
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			spec, ok := n.(*ast.TypeSpec)
			if !ok {
				return true
			}
			st, ok := spec.Type.(*ast.StructType)
			if !ok {
				return true
			}
			fields := 0
			for _, field := range st.Fields.List {
				fields += max(1, len(field.Names))
				if typ := typeName(field.Type); forbiddenFields[typ] {
					t.Errorf("%s: %s has a %s field: give the handlers the service that uses it instead", fset.Position(field.Pos()), spec.Name.Name, typ)
				}
			}
			structs[dir+"."+spec.Name.Name] = sized{spec.Pos(), fields}
			return true
		})
	})
	if files < 10 || len(groups) < 8 {
		t.Fatalf("read %d files, %d groups: the walk missed the HTTP layer", files, len(groups))
	}
	for name := range groups {
		if s, ok := structs[name]; ok && s.fields > maxGroupFields {
			t.Errorf("%s: %s has %d fields (at most %d): split the group by audience", fset.Position(s.where), name, s.fields, maxGroupFields)
		}
	}
}

// TestMessagesNameNoCode: moving handlers between packages renames their
// helpers (refused → web.Refused), and a rename that also reaches a string
// changes what clients read (the first cut's "The payment provider
// web.Refused this refund"). No string of the HTTP layer names one of its
// own packages' identifiers.
func TestMessagesNameNoCode(t *testing.T) {
	own := regexp.MustCompile(`\b(api|web|session|read|room|sale|console|door|webhook)\.[A-Z]\w*`)
	fset := token.NewFileSet()
	eachSource(t, fset, func(_ string, f *ast.File) {
		ast.Inspect(f, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				if m := own.FindString(lit.Value); m != "" {
					t.Errorf("%s: a string names %s: write what the client should read", fset.Position(lit.Pos()), m)
				}
			}
			return true
		})
	})
}

// eachSource parses every non-test Go file of the HTTP layer (this
// directory and its groups) and hands it to fn.
func eachSource(t *testing.T, fset *token.FileSet, fn func(path string, f *ast.File)) {
	t.Helper()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err == nil {
			fn(path, f)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// typeName is "pkg.Type" (or "Type") of a field's or receiver's type,
// through pointers.
func typeName(e ast.Expr) string {
	if star, ok := e.(*ast.StarExpr); ok {
		e = star.X
	}
	if id, ok := e.(*ast.Ident); ok {
		return id.Name
	}
	if sel, ok := e.(*ast.SelectorExpr); ok {
		if pkg, ok := sel.X.(*ast.Ident); ok {
			return pkg.Name + "." + sel.Sel.Name
		}
	}
	return ""
}
