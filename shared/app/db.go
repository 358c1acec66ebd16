package app

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/feature/rds/auth"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/catraca/catraca/shared/config"
	"github.com/catraca/catraca/shared/shard"
	"github.com/catraca/catraca/shared/shardstore"
)

// Databases are the pools of the catalog and of every shard.
type Databases struct {
	Catalog *pgxpool.Pool
	// CatalogRO is the catalog's reader (the catalog without one).
	CatalogRO *pgxpool.Pool
	Shards    *shard.Router
	pools     []*pgxpool.Pool
	iam       aws.Config // signs IAM authentication tokens (DBIAMAuth)
}

// OpenDatabases opens a pool per database of c, and per reader of r.
// Connections are lazy: a Lambda cold start does not wait for every shard.
func OpenDatabases(ctx context.Context, c config.Database, r config.Readers) (*Databases, error) {
	d := &Databases{}
	var err error
	if c.DBIAMAuth {
		if d.iam, err = awsconfig.LoadDefaultConfig(ctx); err != nil {
			return nil, fmt.Errorf("aws config for IAM database authentication: %w", err)
		}
	}
	if d.Catalog, err = d.open(ctx, c, c.CatalogDSN, false); err != nil {
		return nil, d.fail(err)
	}
	d.CatalogRO = d.Catalog
	if r.CatalogReadDSN != "" && r.CatalogReadDSN != c.CatalogDSN {
		if d.CatalogRO, err = d.open(ctx, c, r.CatalogReadDSN, false); err != nil {
			return nil, d.fail(err)
		}
	}
	primary, reader := map[int]*pgxpool.Pool{}, map[int]*pgxpool.Pool{}
	for id, dsn := range c.Shards {
		if primary[id], err = d.open(ctx, c, dsn, true); err != nil {
			return nil, d.fail(fmt.Errorf("shard %d: %w", id, err))
		}
	}
	for id, dsn := range r.ShardReads {
		if reader[id], err = d.open(ctx, c, dsn, false); err != nil {
			return nil, d.fail(fmt.Errorf("shard %d reader: %w", id, err))
		}
	}
	d.Shards = shard.New(d.Catalog, primary, reader)
	return d, nil
}

func (d *Databases) open(ctx context.Context, c config.Database, dsn string, shard bool) (*pgxpool.Pool, error) {
	pc, err := poolConfig(c, dsn, shard, d.iam)
	if err != nil {
		return nil, err
	}
	p, err := pgxpool.NewWithConfig(ctx, pc)
	if err != nil {
		return nil, err
	}
	d.pools = append(d.pools, p)
	return p, nil
}

// poolConfig is the configuration of one pool on dsn. A shard primary's
// new connections prepare and plan the hold statements (shardstore.Warm),
// except through a proxy: there every statement is unnamed
// (QueryExecModeCacheDescribe keeps one round trip per query), because
// RDS Proxy pins a client connection that creates a named prepared
// statement to its database connection, which defeats multiplexing.
func poolConfig(c config.Database, dsn string, shard bool, iam aws.Config) (*pgxpool.Config, error) {
	pc, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, errors.New("invalid database DSN") // the DSN may hold a password: do not echo it
	}
	if c.DBUser != "" {
		pc.ConnConfig.User = c.DBUser
	}
	if c.DBIAMAuth {
		if c.DBUser == "" || iam.Credentials == nil {
			return nil, errors.New("IAM database authentication needs CATRACA_DB_USER and AWS credentials")
		}
		// A token is valid for 15 minutes and only for opening a
		// connection: each new connection signs its own (locally, no call).
		pc.BeforeConnect = func(ctx context.Context, cc *pgx.ConnConfig) error {
			token, err := auth.BuildAuthToken(ctx, fmt.Sprintf("%s:%d", cc.Host, cc.Port), iam.Region, cc.User, iam.Credentials)
			cc.Password = token
			return err
		}
	}
	pc.MaxConns = c.DBMaxConns
	pc.MinConns = min(c.DBMinConns, pc.MaxConns)
	pc.MaxConnIdleTime = 5 * time.Minute
	switch {
	case c.DBProxy:
		pc.ConnConfig.DefaultQueryExecMode = pgx.QueryExecModeCacheDescribe
	case shard && holds(c):
		pc.AfterConnect = shardstore.Warm
	}
	return pc, nil
}

// holds tells whether c's pools take holds: the API's role does, or the
// owner's (tests, make dev); the other functions' roles may not run the
// hold path, so warming it up would only fail on their grants.
func holds(c config.Database) bool { return c.DBUser == "" || c.DBUser == config.DBRole("api") }

// fail closes what was opened before err.
func (d *Databases) fail(err error) error {
	d.Close()
	return err
}

// Close closes every pool.
func (d *Databases) Close() {
	for _, p := range d.pools {
		p.Close()
	}
}
