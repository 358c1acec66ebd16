package api

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/shared/problem"
)

func TestDatabaseOutagesAreRetryable(t *testing.T) {
	for name, err := range map[string]error{
		"shutting down":      &pgconn.PgError{Code: "57P01", Message: "terminating connection due to administrator command"},
		"starting up":        &pgconn.PgError{Code: "57P03", Message: "the database system is starting up"},
		"connection failure": &pgconn.PgError{Code: "08006"},
		"refused":            fmt.Errorf("hold: %w", &net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}),
		"closed mid-hold":    fmt.Errorf("hold for event 1: %w", pgconn.ErrConnClosed), // seen in the pg-restart chaos run
	} {
		p := problem.From(translate(err))
		require.Equal(t, http.StatusServiceUnavailable, p.Status, name)
		require.Equal(t, "temporarily-unavailable", p.Code, name)
		require.Equal(t, 2, p.RetryAfter, name)
	}
	for name, err := range map[string]error{
		"deadlock":      fmt.Errorf("checkout: %w", &pgconn.PgError{Code: "40P01", Message: "deadlock detected"}),
		"serialization": &pgconn.PgError{Code: "40001", Message: "could not serialize access"},
	} {
		p := problem.From(translate(err))
		require.Equal(t, http.StatusServiceUnavailable, p.Status, name)
		require.Equal(t, "concurrent-change", p.Code, name)
		require.Equal(t, 1, p.RetryAfter, name)
	}
	for name, err := range map[string]error{
		"constraint":     &pgconn.PgError{Code: "23514", Message: "check constraint"},
		"commit unknown": &pgconn.PgError{Code: "40003", Message: "statement completion unknown"},
		"bug":            errors.New("nil map"),
	} {
		require.Equal(t, http.StatusInternalServerError, problem.From(translate(err)).Status, name)
	}
}
