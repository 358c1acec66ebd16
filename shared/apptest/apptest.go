// Package apptest opens a whole catraca app on fresh test databases and the
// test Redis, for tests that exercise more than one package.
package apptest

import (
	"context"
	"log/slog"
	"testing"

	"github.com/catraca/catraca/shared/app"
	"github.com/catraca/catraca/shared/config"
	"github.com/catraca/catraca/shared/testenv"
)

// New opens an app on fresh databases with the given number of shards;
// options may adjust the configuration first.
func New(t testing.TB, shards int, options ...func(*config.Config)) *app.App {
	t.Helper()
	cfg := testenv.Config(t, testenv.NewDatabases(t, shards))
	for _, o := range options {
		o(&cfg)
	}
	var opts []app.Option
	if !testing.Verbose() {
		opts = append(opts, app.WithLogger(slog.New(slog.DiscardHandler)))
	}
	a, err := app.Open(context.Background(), cfg, opts...)
	if err != nil {
		t.Fatalf("apptest: open app: %v", err)
	}
	t.Cleanup(a.Close)
	return a
}
