package shardstore_test

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/tools/testenv"
)

// TestStatesMatchTheSchema: the constants of each state type are exactly
// the values its table's CHECK constraint allows, in the migrated
// databases; a state added on one side only fails here.
func TestStatesMatchTheSchema(t *testing.T) {
	t.Parallel()
	dbs := testenv.NewDatabases(t, 1)
	for _, c := range []struct {
		db, table, dir, typ string
	}{
		{dbs.Shards[1], "event_seats", ".", "SeatStatus"},
		{dbs.Shards[1], "holds", ".", "HoldStatus"},
		{dbs.Shards[1], "orders", ".", "OrderStatus"},
		{dbs.Shards[1], "payments", ".", "PaymentStatus"},
		{dbs.Shards[1], "cancel_refunds", ".", "CancelRefundStatus"},
		{dbs.Shards[1], "refunds", ".", "RefundStatus"},
		{dbs.Catalog, "events", "../event", "Status"},
		{dbs.Shards[1], "event_status", "../event", "Status"},
	} {
		t.Run(c.table, func(t *testing.T) {
			inGo := constants(t, c.dir, c.typ)
			inSQL := allowed(t, dbs.DSN(c.db), c.table)
			require.NotEmpty(t, inSQL)
			require.Equal(t, inSQL, inGo, "%s.status CHECK against the %s constants in %s", c.table, c.typ, c.dir)
		})
	}
}

// constants returns the sorted values of the string constants of type typ
// declared in the Go package in dir.
func constants(t *testing.T, dir, typ string) []string {
	t.Helper()
	pkgs, err := parser.ParseDir(token.NewFileSet(), dir, nil, 0)
	require.NoError(t, err)
	var out []string
	for name, pkg := range pkgs {
		if name != "shardstore" && name != "event" {
			continue
		}
		ast.Inspect(pkg, func(n ast.Node) bool {
			spec, ok := n.(*ast.ValueSpec)
			if !ok || spec.Type == nil {
				return true
			}
			if id, ok := spec.Type.(*ast.Ident); !ok || id.Name != typ {
				return true
			}
			for _, v := range spec.Values {
				lit, ok := v.(*ast.BasicLit)
				require.True(t, ok && lit.Kind == token.STRING, "a %s constant is a string literal", typ)
				s, err := strconv.Unquote(lit.Value)
				require.NoError(t, err)
				out = append(out, s)
			}
			return true
		})
	}
	slices.Sort(out)
	return out
}

var quoted = regexp.MustCompile(`'([^']*)'`)

// allowed returns the sorted values the CHECK constraint on a table's
// status column allows.
func allowed(t *testing.T, dsn, table string) []string {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	require.NoError(t, err)
	defer conn.Close(ctx)
	var def string
	require.NoError(t, conn.QueryRow(ctx, `SELECT pg_get_constraintdef(c.oid) FROM pg_constraint c
		WHERE c.conrelid = $1::regclass AND c.contype = 'c' AND pg_get_constraintdef(c.oid) LIKE '%status = ANY%'`, table).Scan(&def))
	var out []string
	for _, m := range quoted.FindAllStringSubmatch(def, -1) {
		out = append(out, m[1])
	}
	slices.Sort(out)
	return out
}

// statusLiteral finds the state words the statements compare or set a
// status column to: status = 'x', status <> 'x', status [NOT] IN ('x', 'y').
var statusLiteral = regexp.MustCompile(`status\s*(?:=|<>|!=)\s*'(\w+)'|status\s+(?:NOT\s+)?IN\s*\(([^)]*)\)`)

var sqlComment = regexp.MustCompile(`--.*`)

// TestStatementsUseKnownStates: every state word written into SQL (the
// string literals of every Go package under shared/ and functions/, and
// the migrations, the plpgsql of their functions and their CHECKs
// included) is a constant of one of the state types (on the catalog, of
// event.Status), so a renamed or misspelt state cannot hide in a
// statement or a function.
func TestStatementsUseKnownStates(t *testing.T) {
	known := map[string]bool{}
	for _, typ := range []string{"SeatStatus", "HoldStatus", "OrderStatus", "PaymentStatus", "CancelRefundStatus", "RefundStatus"} {
		for _, s := range constants(t, ".", typ) {
			known[s] = true
		}
	}
	// The catalog's one status column is events.status: its statements
	// and migrations may use event.Status's words only.
	catalog := map[string]bool{}
	for _, s := range constants(t, "../event", "Status") {
		known[s], catalog[s] = true, true
	}
	n, files := 0, map[string]bool{}
	check := func(where, sql string) {
		known := known
		if strings.Contains(where, "catalogstore") || strings.Contains(where, filepath.Join("migrate", "catalog")) {
			known = catalog
		}
		for _, m := range statusLiteral.FindAllStringSubmatch(sql, -1) {
			words := []string{m[1]}
			if m[2] != "" {
				words = nil
				for _, q := range quoted.FindAllStringSubmatch(m[2], -1) {
					words = append(words, q[1])
				}
			}
			for _, w := range words {
				if w == "" {
					continue
				}
				n++
				files[where] = true
				assert.True(t, known[w], "%s: state %q in a statement is no state constant", where, w)
			}
		}
	}
	root := testenv.RepoRoot()
	for _, dir := range []string{"shared", "functions"} {
		require.NoError(t, filepath.WalkDir(filepath.Join(root, dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			rel, _ := filepath.Rel(root, path)
			switch {
			case strings.HasSuffix(path, ".sql"):
				raw, err := os.ReadFile(path)
				if err != nil {
					return err
				}
				check(rel, sqlComment.ReplaceAllString(string(raw), ""))
			case strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go"):
				fset := token.NewFileSet()
				f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
				if err != nil {
					return err
				}
				ast.Inspect(f, func(node ast.Node) bool {
					if lit, ok := node.(*ast.BasicLit); ok && lit.Kind == token.STRING {
						check(fset.Position(lit.Pos()).String(), lit.Value)
					}
					return true
				})
			}
			return nil
		}))
	}
	require.Greater(t, n, 100, "the statements were read")
	t.Logf("%d state words in %d places checked", n, len(files))
	for _, want := range []string{"00013_event_status.sql", "catalogstore", "shardstore"} {
		found := false
		for f := range files {
			found = found || strings.Contains(f, want)
		}
		require.True(t, found, "state words found in %s", want)
	}
}
