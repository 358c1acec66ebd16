package shardstore_test

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"regexp"
	"slices"
	"strconv"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/shared/dev/testenv"
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
// status column to: status = 'x', status <> 'x', status IN ('x', 'y').
var statusLiteral = regexp.MustCompile(`status\s*(?:=|<>)\s*'(\w+)'|status\s+IN\s*\(([^)]*)\)`)

// TestStatementsUseKnownStates: every state word written into the store's
// SQL is one of the state constants, so a renamed state cannot hide in a
// statement.
func TestStatementsUseKnownStates(t *testing.T) {
	known := map[string]bool{}
	for _, typ := range []string{"SeatStatus", "HoldStatus", "OrderStatus", "PaymentStatus", "CancelRefundStatus", "RefundStatus"} {
		for _, s := range constants(t, ".", typ) {
			known[s] = true
		}
	}
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, ".", nil, 0)
	require.NoError(t, err)
	n := 0
	ast.Inspect(pkgs["shardstore"], func(node ast.Node) bool {
		lit, ok := node.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			return true
		}
		for _, m := range statusLiteral.FindAllStringSubmatch(lit.Value, -1) {
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
				require.True(t, known[w], "%s: state %q in a statement is no state constant", fset.Position(lit.Pos()), w)
			}
		}
		return true
	})
	require.Greater(t, n, 20, "the statements were read")
}
