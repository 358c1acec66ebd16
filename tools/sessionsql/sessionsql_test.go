package sessionsql

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/tools/testenv"
)

func TestFindRecognisesSessionState(t *testing.T) {
	for sql, want := range map[string]bool{
		"PREPARE hold (bigint) AS SELECT 1":                         true,
		"DEALLOCATE ALL":                                            true,
		"SET statement_timeout = 0":                                 true,
		"SELECT 1; SET search_path TO app":                          true,
		"SET ROLE catraca_api":                                      true,
		"RESET ALL":                                                 true,
		"SELECT set_config('app.user', $1, false)":                  true,
		"SELECT pg_advisory_lock(1)":                                true,
		"SELECT pg_try_advisory_lock_shared(hashtext($1))":          true,
		"CREATE TEMP TABLE x (id int)":                              true,
		"create temporary sequence s":                               true,
		"LISTEN orders":                                             true,
		"DECLARE c SCROLL CURSOR WITH HOLD FOR SELECT 1":            true,
		"DISCARD ALL":                                               true,
		"LOAD 'auto_explain'":                                       true,
		"SELECT nextval('orders_seq')":                              true,
		"DO $$ BEGIN SET work_mem = '1GB'; END $$":                  true,
		"SET LOCAL lock_timeout = '1s'":                             false,
		"SET TRANSACTION ISOLATION LEVEL SERIALIZABLE":              false,
		"SELECT set_config('app.user', $1, true)":                   false,
		"SELECT pg_advisory_xact_lock(hashtextextended($1, 0))":     false,
		"UPDATE seats\n\tSET status = 'held' WHERE id = $1":         false,
		"INSERT INTO t VALUES (1) ON CONFLICT DO UPDATE SET n = 1":  false,
		"id BIGINT PRIMARY KEY DEFAULT nextval('holds_seq') * 1024": false,
		"EXECUTE format('ALTER TABLE %I OWNER TO x', t)":            false,
		"-- SET statement_timeout = 0\nSELECT 1":                    false,
		"CREATE FUNCTION f() RETURNS int LANGUAGE sql SET search_path = pg_catalog AS 'SELECT 1'": false,
	} {
		require.Equal(t, want, len(Find(sql)) > 0, "%q: %v", sql, Find(sql))
	}
}

// allowed are the places that may create session state, with the reason.
var allowed = map[string]string{
	// Warm prepares the hold statements on direct connections only:
	// poolConfig skips it with CATRACA_DB_PROXY on, and
	// TestOnSaleThroughTransactionPooler fails when it runs through the
	// pooler ("prepared statement … does not exist").
	"shared/shardstore/warm.go: Prepare": "direct connections only",
}

// TestNoSessionStateInProductionSQL scans every SQL text the functions send
// (string literals of the Go code that runs in production, and the
// migrations, whose functions run inside the functions' transactions,
// where RDS Proxy does not see what they change) and every named
// statement the Go code prepares, for state that outlives a transaction.
func TestNoSessionStateInProductionSQL(t *testing.T) {
	var found []string
	scanned := 0
	walkProduction(t, func(rel string, f *ast.File, raw []byte) {
		scanned++
		if f == nil {
			for _, rule := range Find(string(raw)) {
				found = append(found, rel+": "+rule)
			}
			return
		}
		found = append(found, scanGo(rel, f)...)
	})
	require.Greater(t, scanned, 100, "the scan reached the code")
	var offending []string
	for _, f := range found {
		if _, ok := allowed[f]; !ok {
			offending = append(offending, f)
		}
	}
	require.Empty(t, offending, "SQL that leaves session state behind a transaction-pooling proxy (docs/database.md)")
}

// walkProduction calls fn with every file of the code that runs in
// production under shared/ and functions/ (the tooling lives in tools/):
// each Go file (tests aside) parsed, and each .sql file's text with f nil.
// rel is the path from the repository's root.
func walkProduction(t *testing.T, fn func(rel string, f *ast.File, raw []byte)) {
	t.Helper()
	root := testenv.RepoRoot()
	for _, dir := range []string{"shared", "functions"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, path)
			switch {
			case d.IsDir():
				return nil
			case strings.HasSuffix(path, ".sql"):
				raw, err := os.ReadFile(path)
				if err != nil {
					return err
				}
				fn(rel, nil, raw)
			case strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go"):
				f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
				if err != nil {
					return err
				}
				fn(rel, f, nil)
			}
			return nil
		})
		require.NoError(t, err)
	}
}

// eachString calls fn with the value of every string literal in f.
func eachString(f *ast.File, fn func(s string)) {
	ast.Inspect(f, func(n ast.Node) bool {
		if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
			if s, err := strconv.Unquote(lit.Value); err == nil {
				fn(s)
			}
		}
		return true
	})
}

// scanGo checks a Go file's string literals and its calls of Prepare.
func scanGo(rel string, f *ast.File) []string {
	var found []string
	eachString(f, func(s string) {
		for _, rule := range Find(s) {
			found = append(found, rel+": "+rule+": "+strings.Join(strings.Fields(s), " "))
		}
	})
	ast.Inspect(f, func(n ast.Node) bool {
		if call, ok := n.(*ast.CallExpr); ok {
			if sel, ok := call.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Prepare" {
				found = append(found, rel+": Prepare")
			}
		}
		return true
	})
	return found
}
