// Package sessionsql recognises SQL that leaves state in a database
// session. Behind a transaction-pooling proxy (RDS Proxy in production,
// PgBouncer in the tests) consecutive transactions of one client run on
// different server connections, so such state is lost or leaks into
// another client; RDS Proxy instead pins the client to one server
// connection for the rest of its session, which defeats the multiplexing.
// The rules follow AWS's list of what pins a PostgreSQL session
// (docs/database.md).
package sessionsql

import "regexp"

// Rule is one kind of session state and the SQL that creates it.
type Rule struct {
	Name string
	re   *regexp.Regexp
}

// start matches the start of a statement: the text's, after a semicolon,
// or where PL/pgSQL starts one (a function body, BEGIN, THEN, ELSE, LOOP).
const start = `(?is)(?:^|;|\$\$|\bBEGIN\b|\bTHEN\b|\bELSE\b|\bLOOP\b)\s*`

// Rules are the session-state rules, each matched case-insensitively
// against SQL text with its comments removed.
var Rules = []Rule{
	{"named prepared statement (PREPARE, DEALLOCATE)", regexp.MustCompile(start + `(?:PREPARE\s+\w+\s*(?:\(|AS\b)|DEALLOCATE\b)`)},
	{"session setting (SET without LOCAL, RESET, set_config(…, false))", regexp.MustCompile(start + `(?:SET\s+(?:SESSION\s+)?(?:\w+\s*(?:=|\bTO\b)|ROLE\s+\w+\s*(?:;|$)|TIME\s+ZONE\b)|RESET\b)|(?i)\bset_config\s*\([^;]*,\s*false\s*\)`)},
	{"session advisory lock (pg_advisory_lock, not pg_advisory_xact_lock)", regexp.MustCompile(`(?i)\bpg_(?:try_)?advisory_(?:lock|unlock)(?:_shared|_all)?\s*\(`)},
	{"temporary table, sequence or view", regexp.MustCompile(`(?is)\bCREATE\s+(?:OR\s+REPLACE\s+)?(?:GLOBAL\s+|LOCAL\s+)?TEMP(?:ORARY)?\s+(?:TABLE|SEQUENCE|VIEW)\b`)},
	{"notification channel (LISTEN)", regexp.MustCompile(start + `(?:UN)?LISTEN\s+\w+`)},
	{"cursor (DECLARE … CURSOR)", regexp.MustCompile(start + `DECLARE\s+\w+\s+(?:BINARY\s+|INSENSITIVE\s+|ASENSITIVE\s+|NO\s+SCROLL\s+|SCROLL\s+)*CURSOR\b`)},
	{"session reset or module load (DISCARD, LOAD)", regexp.MustCompile(start + `(?:DISCARD\s+(?:ALL|PLANS|SEQUENCES|TEMP|TEMPORARY)|LOAD\s+')`)},
	{"sequence function called in a statement (nextval, setval, currval, lastval)", regexp.MustCompile(`(?i)\b(?:nextval|setval|currval|lastval)\s*\(`)},
}

var (
	comments = regexp.MustCompile(`(?m)--.*$|/\*(?s:.*?)\*/`)
	// A column default's nextval runs inside the INSERT; the proxy sees
	// only the INSERT's text, and the sequence holds no state the next
	// transaction needs.
	columnDefault = regexp.MustCompile(`(?i)\bDEFAULT\s+nextval\s*\(`)
)

// Find returns the names of the rules sql breaks.
func Find(sql string) []string {
	sql = comments.ReplaceAllString(sql, "")
	sql = columnDefault.ReplaceAllString(sql, "DEFAULT (")
	var out []string
	for _, r := range Rules {
		if r.re.MatchString(sql) {
			out = append(out, r.Name)
		}
	}
	return out
}
