package shardstore

import (
	"fmt"
	"strings"
)

// takeFunction is a one-statement take wrapped in a PL/pgSQL function
// (shard migration 00018): PL/pgSQL plans its statements once per session
// and keeps the plans (generic ones: plan_cache_mode on the shard), so
// behind a transaction-pooling proxy, where every statement the app sends
// is unnamed and planned on every execution, each pooled server connection
// still plans the take once. Without a proxy the pool prepares the take
// itself (Warm) and the function is not used.
type takeFunction struct {
	name   string
	params string // the statement's parameter types, in order
	sql    string
}

// takeResult is what every take returns (takeSQL's rows with oneStatement).
const takeResult = `hold_id BIGINT, expires_at TIMESTAMPTZ, order_id BIGINT, total_cents BIGINT, seat_id BIGINT,
    seat_index INT, pool_code TEXT, quantity INT, label TEXT, price_level TEXT, price_cents INT`

const gaParams = "BIGINT, INT, INT, BIGINT, BIGINT, TEXT, INT, INT, TEXT, BIGINT, DOUBLE PRECISION, TEXT, BYTEA"

// takeFunctions are the one-statement takes by their SQL.
var takeFunctions = map[string]takeFunction{
	seatTake:   {"hold_take_seats", "BIGINT, BIGINT[], DOUBLE PRECISION, BIGINT, BIGINT, TEXT, INT, INT, TEXT, BIGINT, DOUBLE PRECISION, TEXT, BYTEA", seatTake},
	gaTakeOne:  {"hold_take_ga_one", gaParams, gaTakeOne},
	gaTakeMany: {"hold_take_ga_many", gaParams, gaTakeMany},
}

// takeCalls are the statements that run each take's function, by the
// take's SQL.
var takeCalls = func() map[string]string {
	calls := map[string]string{}
	for sql, f := range takeFunctions {
		calls[sql] = f.call()
	}
	return calls
}()

// call is the statement that runs f with the take's arguments.
func (f takeFunction) call() string {
	args := make([]string, strings.Count(f.params, ",")+1)
	for i := range args {
		args[i] = fmt.Sprintf("$%d", i+1)
	}
	return "SELECT * FROM " + f.name + "(" + strings.Join(args, ", ") + ")"
}

// body is f's PL/pgSQL source as the migration defines it: the statement
// itself, its $n the function's parameters, its columns winning over the
// result's names.
func (f takeFunction) body() string {
	return "\n#variable_conflict use_column\nBEGIN\n    RETURN QUERY " + f.sql + ";\nEND\n"
}
