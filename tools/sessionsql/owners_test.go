package sessionsql

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go/ast"

	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/tools/testenv"
)

var (
	createTable = regexp.MustCompile(`(?i)CREATE TABLE (?:IF NOT EXISTS )?(\w+)`)
	// tableRef finds the table a statement reads or writes; the keywords
	// are upper case, as all the code's SQL is, so that prose ("read from
	// events") does not count.
	tableRef = regexp.MustCompile(`\b(?:FROM|JOIN|INTO|UPDATE|TABLE|USING)\s+(?:ONLY\s+)?([a-z_]\w*)`)
)

// TestEveryTableHasOneOwner: every statement on a shard's tables is in
// shared/shardstore and every statement on the catalog's in
// shared/catalogstore (the migrations aside), the outbox's in
// shared/outbox; SQL on a table sent from any other package fails here,
// with its file.
func TestEveryTableHasOneOwner(t *testing.T) {
	owners := map[string][]string{} // table: the packages that may send SQL to it
	for db, owner := range map[string]string{"catalog": "shared/catalogstore", "shard": "shared/shardstore"} {
		for _, table := range tables(t, db) {
			owners[table] = append(owners[table], owner)
		}
	}
	// The outbox is alike in both databases: its worker's statements are
	// written once, in shared/outbox, and each store runs them on its
	// transactions (a shard's also writes messages inside its own set-based
	// statements).
	require.Len(t, owners["outbox"], 2, "both databases have an outbox")
	owners["outbox"] = append(owners["outbox"], "shared/outbox")
	require.Contains(t, owners, "events")
	require.Contains(t, owners, "event_seats")
	var offending []string
	refs := 0
	walkProduction(t, func(rel string, f *ast.File, _ []byte) {
		dir := filepath.ToSlash(filepath.Dir(rel))
		if f == nil || strings.HasPrefix(dir, "shared/migrate") {
			return // the migrations create and change the tables
		}
		eachString(f, func(s string) {
			for _, m := range tableRef.FindAllStringSubmatch(s, -1) {
				allowed, ok := owners[m[1]]
				if !ok {
					continue
				}
				refs++
				if !slices.Contains(allowed, dir) {
					offending = append(offending, rel+": "+m[1])
				}
			}
		})
	})
	require.Greater(t, refs, 100, "the scan found the statements")
	slices.Sort(offending)
	offending = slices.Compact(offending)
	require.Empty(t, offending, "%d statements (file: table) on a table another package owns (docs/architecture.md, Who writes which table)", len(offending))
}

// tables returns the tables the migrations of a database create.
func tables(t *testing.T, db string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(testenv.RepoRoot(), "shared", "migrate", db, "*.sql"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	var out []string
	for _, f := range files {
		raw, err := os.ReadFile(f)
		require.NoError(t, err)
		for _, m := range createTable.FindAllStringSubmatch(string(raw), -1) {
			out = append(out, m[1])
		}
	}
	return out
}
