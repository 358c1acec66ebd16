package shardstore_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// TestRowsHaveNoJSONTags: the store's rows are not the API's wire format.
// A JSON tag here would let a renamed column rename an API field or an
// outbox payload's; the domain packages (order, inventory, entry,
// controlroom, event) own those names and convert rows into them.
func TestRowsHaveNoJSONTags(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	n := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(node ast.Node) bool {
			field, ok := node.(*ast.Field)
			if !ok || field.Tag == nil {
				return true
			}
			tag, err := strconv.Unquote(field.Tag.Value)
			if _, has := reflect.StructTag(tag).Lookup("json"); err != nil || has {
				n++
				t.Errorf("%s: a JSON tag on a store row (%s): name it on the domain's type and convert", fset.Position(field.Pos()), tag)
			}
			return true
		})
	}
	if n > 0 {
		t.Errorf("%d JSON tags in shared/shardstore", n)
	}
}
