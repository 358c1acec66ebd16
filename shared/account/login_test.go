package account_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/catraca/catraca/shared/account"
	"github.com/catraca/catraca/shared/account/pgstore"
	"github.com/catraca/catraca/tools/testenv"
)

// queries records each query's SQL and what the database answered.
type queries struct {
	mu  sync.Mutex
	log []string
}

func (q *queries) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	return context.WithValue(ctx, q, d.SQL)
}

func (q *queries) TraceQueryEnd(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryEndData) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.log = append(q.log, fmt.Sprintf("%s → %s, %v", ctx.Value(q), d.CommandTag, d.Err))
}

func (q *queries) take() []string {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := q.log
	q.log = nil
	return out
}

// A wrong password for a registered email and any password for an unknown
// one cost the same work, so the time of a log-in does not tell which
// emails have accounts: the same read, answering one row, and one argon2id
// derivation of the same cost. Counted rather than timed, so a busy
// machine cannot make it flake.
func TestLogInWorksAsHardForAnUnknownEmail(t *testing.T) {
	ctx := context.Background()
	d := testenv.NewDatabases(t, 0)
	cfg, err := pgxpool.ParseConfig(d.DSN(d.Catalog))
	if err != nil {
		t.Fatal(err)
	}
	trace := &queries{}
	cfg.ConnConfig.Tracer = trace
	cfg.MaxConns = 1 // one statement cache: neither log-in prepares
	db, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	accounts, err := account.NewService(pgstore.New(db), account.Argon2{MemoryKiB: 64, Time: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := accounts.SignUp(ctx, "known@example.com", "a long enough password", "Known"); err != nil {
		t.Fatal(err)
	}
	derived := account.RecordDerivations(t)
	work := func(email string) (q, hashes []string) {
		trace.take()
		derived()
		if _, err := accounts.LogIn(ctx, email, "not the password"); err != account.ErrInvalidCredentials {
			t.Fatalf("%s: got %v, want ErrInvalidCredentials", email, err)
		}
		return trace.take(), derived()
	}
	work("warm-up@example.com")
	knownQ, knownH := work("known@example.com")
	unknownQ, unknownH := work("nobody@example.com")
	if len(knownQ) != 1 || len(knownH) != 1 {
		t.Fatalf("a wrong password: %d queries %q, %d derivations %q; want one of each", len(knownQ), knownQ, len(knownH), knownH)
	}
	if fmt.Sprint(knownQ) != fmt.Sprint(unknownQ) || fmt.Sprint(knownH) != fmt.Sprint(unknownH) {
		t.Errorf("a known email did\n  %q, %q\nan unknown one\n  %q, %q", knownQ, knownH, unknownQ, unknownH)
	}
	if a, err := accounts.LogIn(ctx, "KNOWN@example.com", "a long enough password"); err != nil || a.Email != "known@example.com" {
		t.Errorf("the right password: %+v, %v", a, err)
	}
}
