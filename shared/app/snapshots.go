package app

import (
	"context"
	"log/slog"

	"github.com/catraca/catraca/shared/config"
	"github.com/catraca/catraca/shared/searchindex"
	"github.com/catraca/catraca/shared/searchindex/snapstore"
)

// SearchSnapshotBuilder returns what a scheduled run calls to keep the
// search snapshot current: it reads the catalog and saves a snapshot when
// the stored one is older than cfg.SearchSnapshotEvery, so the catalog is
// read once per period whatever the number of API instances. Without a
// snapshot location it does nothing. A failed build is logged, never
// fails the run: instances then read the catalog as before.
func SearchSnapshotBuilder(ctx context.Context, cfg config.SearchSnapshots, catalog searchindex.Querier, log *slog.Logger) (func(context.Context), error) {
	if cfg.SearchSnapshot == "" {
		return func(context.Context) {}, nil
	}
	store, err := snapstore.Open(ctx, cfg.SearchSnapshot)
	if err != nil {
		return nil, err
	}
	x := searchindex.New(catalog, searchindex.Options{Log: log})
	return func(ctx context.Context) {
		built, err := x.BuildSnapshotEvery(ctx, store, cfg.SearchSnapshotEvery)
		switch {
		case err != nil:
			log.Warn("search snapshot not built: new API instances read the catalog", "err", err)
		case built:
			log.Info("search snapshot built", "location", cfg.SearchSnapshot)
		}
	}, nil
}
