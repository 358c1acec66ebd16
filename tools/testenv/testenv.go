// Package testenv gives tests real PostgreSQL and Redis servers (started by
// package localenv on their own ports, or reused when already up) and fresh
// migrated databases per test, cloned from cached template databases.
package testenv

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/redis/go-redis/v9"

	"github.com/catraca/catraca/shared/config"
	"github.com/catraca/catraca/shared/migrate"
	"github.com/catraca/catraca/shared/redisconn"
	"github.com/catraca/catraca/tools/localenv"
)

var (
	once       sync.Once
	env        localenv.Env
	envErr     error
	clusterOne sync.Once
	clusterErr error
	slotOnce   sync.Once
	slotClient *redis.Client // asks the cluster for slots (RequireOneSlot)
	tmplMu     sync.Mutex
	tmplFor    = map[migrate.Kind]string{}
)

// RepoRoot finds the directory holding go.mod.
func RepoRoot() string {
	dir, _ := os.Getwd()
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			panic("testenv: go.mod not found above the working directory")
		}
		dir = parent
	}
}

func portFromEnv(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}

// Servers describes the test servers without starting them: PostgreSQL,
// Redis and PgBouncer in transaction pooling mode in front of PostgreSQL
// (Proxied). CATRACA_TEST_DIR, CATRACA_TEST_PG_PORT,
// CATRACA_TEST_REDIS_PORT and CATRACA_TEST_POOLER_PORT point them elsewhere
// (make bench runs its own private servers).
func Servers() localenv.Env {
	dir := os.Getenv("CATRACA_TEST_DIR")
	if dir == "" {
		dir = localenv.DataDir(RepoRoot(), ".local/test")
	}
	return localenv.Env{
		Dir:        dir,
		PGPort:     portFromEnv("CATRACA_TEST_PG_PORT", sharedPGPort),
		RedisPort:  portFromEnv("CATRACA_TEST_REDIS_PORT", 26379),
		PoolerPort: portFromEnv("CATRACA_TEST_POOLER_PORT", 26432),
	}
}

// Env returns the running test servers, starting them on first use.
func Env(t testing.TB) localenv.Env {
	t.Helper()
	once.Do(func() {
		env = Servers()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		envErr = env.Up(ctx)
	})
	if envErr != nil {
		t.Fatalf("testenv: start PostgreSQL and Redis: %v", envErr)
	}
	return env
}

// sharedPGPort is the shared test PostgreSQL's port. The test servers'
// fixed ports lie below Linux's ephemeral range (32768–60999): a server
// started on a port in it could find the port taken by the source port of
// an outgoing connection of a test running at the same time (a cluster
// node once failed with "bind: Address already in use").
const sharedPGPort = 25432

// ClusterServers describes the test Redis Cluster without starting it:
// six nodes from port 26380 (CATRACA_TEST_REDIS_CLUSTER_PORT), their
// cluster buses ten above, data beside the other servers'.
func ClusterServers() localenv.Cluster {
	return localenv.NewCluster(filepath.Join(Servers().Dir, "redis-cluster"),
		portFromEnv("CATRACA_TEST_REDIS_CLUSTER_PORT", 26380))
}

// Cluster returns the running test Redis Cluster, starting (or creating)
// it on first use.
func Cluster(t testing.TB) localenv.Cluster {
	t.Helper()
	c := ClusterServers()
	clusterOne.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		clusterErr = c.Up(ctx)
	})
	if clusterErr != nil {
		t.Fatalf("testenv: start the Redis Cluster: %v", clusterErr)
	}
	return c
}

// OnCluster reports whether CATRACA_TEST_REDIS=cluster: the tests then
// give the code under test a client of the Redis Cluster, as ElastiCache
// Serverless serves it, instead of the single node.
func OnCluster() bool { return os.Getenv("CATRACA_TEST_REDIS") == "cluster" }

// Redis returns the Redis part of a configuration on the test servers:
// the cluster's when OnCluster, else the single node's.
func Redis(t testing.TB) config.Redis {
	t.Helper()
	if OnCluster() {
		return config.Redis{RedisAddr: strings.Join(Cluster(t).Addrs(), ","), RedisCluster: true}
	}
	return config.Redis{RedisAddr: Env(t).RedisAddr()}
}

// RedisClient returns a client of the test Redis (see Redis), as
// production opens it, closed when the test ends.
func RedisClient(t testing.TB) redis.UniversalClient {
	t.Helper()
	rdb := redisconn.Open(Redis(t))
	t.Cleanup(func() { rdb.Close() })
	return rdb
}

// Databases names one catalog and its shards.
type Databases struct {
	Catalog string
	Shards  map[int]string
	env     localenv.Env
}

// DSN returns the URL of a database of this set.
func (d Databases) DSN(name string) string { return d.env.DSN(name) }

// CommitDelay is the commit latency mode of the databases NewDatabases
// creates: CATRACA_TEST_COMMIT_DELAY microseconds of commit_delay (see
// localenv.Env.SetCommitDelay), 0 when unset.
func CommitDelay() int {
	n, _ := strconv.Atoi(os.Getenv("CATRACA_TEST_COMMIT_DELAY"))
	return max(n, 0)
}

// NewDatabases creates a fresh catalog and n shard databases, migrated, and
// drops them when the test ends.
func NewDatabases(t testing.TB, n int) Databases {
	t.Helper()
	e := Env(t)
	if CommitDelay() > 0 && e.PGPort == sharedPGPort {
		// The delay holds the WAL flush that every database shares.
		t.Fatal("testenv: CATRACA_TEST_COMMIT_DELAY needs a private server (set CATRACA_TEST_DIR and CATRACA_TEST_PG_PORT); it would slow every test on the shared one")
	}
	ctx := context.Background()
	suffix := randomHex(6)
	d := Databases{Catalog: "t_" + suffix + "_catalog", Shards: map[int]string{}, env: e}
	clone(t, e, migrate.Catalog, d.Catalog, 0)
	for i := 1; i <= n; i++ {
		d.Shards[i] = fmt.Sprintf("t_%s_shard%d", suffix, i)
		clone(t, e, migrate.Shard, d.Shards[i], i)
	}
	t.Cleanup(func() {
		e.DropDatabase(ctx, d.Catalog)
		for _, s := range d.Shards {
			e.DropDatabase(ctx, s)
		}
	})
	return d
}

// clone creates db from the template of kind, building the template once.
func clone(t testing.TB, e localenv.Env, kind migrate.Kind, db string, shardID int) {
	t.Helper()
	ctx := context.Background()
	tmpl, err := template(ctx, e, kind)
	if err != nil {
		t.Fatalf("testenv: template %s: %v", kind, err)
	}
	if err := e.CreateDatabase(ctx, db, tmpl); err != nil {
		t.Fatalf("testenv: create %s: %v", db, err)
	}
	if _, err := migrate.Up(ctx, e.DSN(db), kind, shardID); err != nil {
		t.Fatalf("testenv: migrate %s: %v", db, err)
	}
	if us := CommitDelay(); us > 0 {
		if err := e.SetCommitDelay(ctx, db, us); err != nil {
			t.Fatalf("testenv: commit delay on %s: %v", db, err)
		}
	}
}

// template returns a migrated template database for kind. Test binaries run
// in parallel, so its creation is serialized by an advisory lock.
func template(ctx context.Context, e localenv.Env, kind migrate.Kind) (string, error) {
	tmplMu.Lock()
	defer tmplMu.Unlock()
	if name, ok := tmplFor[kind]; ok {
		return name, nil
	}
	fp, err := migrate.Fingerprint(kind)
	if err != nil {
		return "", err
	}
	name := "tmpl_" + string(kind) + "_" + fp
	conn, err := pgx.Connect(ctx, e.DSN("postgres"))
	if err != nil {
		return "", err
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock(727272)`); err != nil {
		return "", err
	}
	defer conn.Exec(ctx, `SELECT pg_advisory_unlock(727272)`)
	var ready bool
	if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1 AND datistemplate)`, name).Scan(&ready); err != nil {
		return "", err
	}
	if !ready {
		if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()); err != nil {
			return "", err
		}
		if err := e.CreateDatabase(ctx, name, ""); err != nil {
			return "", err
		}
		tdsn := e.DSN(name)
		if _, err := migrate.Apply(ctx, tdsn, kind); err != nil {
			return "", err
		}
		if _, err := conn.Exec(ctx, "ALTER DATABASE "+pgx.Identifier{name}.Sanitize()+" WITH is_template = true"); err != nil {
			return "", err
		}
	}
	tmplFor[kind] = name
	return name, nil
}

// Config returns a configuration for databases d on the test servers, with
// test keys, cheap password hashing and a Redis key prefix of its own.
func Config(t testing.TB, d Databases) config.Config {
	t.Helper()
	e := Env(t)
	c := BaseConfig()
	c.CatalogDSN, c.CatalogReadDSN = e.DSN(d.Catalog), e.DSN(d.Catalog)
	for id, db := range d.Shards {
		c.Shards[id] = e.DSN(db)
	}
	prefix := c.RedisPrefix
	c.Redis = Redis(t)
	c.RedisPrefix = prefix
	return c
}

// Proxied is c with every database reached through the test servers'
// PgBouncer in transaction pooling mode and CATRACA_DB_PROXY on, as the
// functions reach RDS Proxy in production: consecutive transactions of one
// pool connection run on whichever server connection is free, so code that
// leaves state in a session (a named prepared statement, a SET, a session
// advisory lock, a temporary table) fails or leaks into another client.
func Proxied(t testing.TB, c config.Config) config.Config {
	t.Helper()
	e := Env(t)
	direct := fmt.Sprintf("127.0.0.1:%d", e.PGPort)
	via := func(dsn string) string {
		u, err := url.Parse(dsn)
		if err != nil || u.Host != direct {
			t.Fatalf("testenv: %q is not a database of the test server", dsn)
		}
		u.Host = fmt.Sprintf("127.0.0.1:%d", e.PoolerPort)
		return u.String()
	}
	c.CatalogDSN = via(c.CatalogDSN)
	if c.CatalogReadDSN != "" {
		c.CatalogReadDSN = via(c.CatalogReadDSN)
	}
	c.Shards, c.ShardReads = maps.Clone(c.Shards), maps.Clone(c.ShardReads)
	for _, m := range []map[int]string{c.Shards, c.ShardReads} {
		for id, dsn := range m {
			m[id] = via(dsn)
		}
	}
	c.DBProxy = true
	return c
}

// BaseConfig is a configuration with fresh random keys, cheap password
// hashing and no databases yet (tests and the simulator fill them in).
func BaseConfig() config.Config {
	c := config.Config{}
	c.PublicURL = "http://localhost"
	c.Shards, c.ShardReads = map[int]string{}, map[int]string{}
	c.DBMaxConns = 32
	c.RedisPrefix = "t" + randomHex(4) + ":"
	c.SessionKeys, c.AdmissionKeys, c.SessionTTL = []config.Key{NewKey("s1")}, []config.Key{NewKey("a1")}, time.Hour
	c.Argon2MemoryKiB, c.Argon2Time = 1024, 1
	c.MaxBodyBytes, c.MaxLayoutBytes = config.DefaultMaxBodyBytes, config.LayoutMaxBodyBytes
	c.AuthPerIP = 1_000_000 // every test client is 127.0.0.1
	c.PSPAPIKey, c.PSPRate = "sk_test_"+randomHex(16), 50
	c.PSPWebhookSecrets = []string{"whsec_" + randomHex(24)}
	c.TicketKey = []config.Key{NewKey("t1")}
	return c
}

// NewKey returns a random 32-byte key with id kid.
func NewKey(kid string) config.Key {
	b := make([]byte, 32)
	rand.Read(b)
	return config.Key{ID: kid, Secret: b}
}

// KeyString renders a key as the environment expects it.
func KeyString(k config.Key) string { return k.ID + ":" + base64.StdEncoding.EncodeToString(k.Secret) }

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// RequireOneSlot fails t unless the test Redis Cluster puts every key in
// one hash slot (CLUSTER KEYSLOT): a script or MULTI over keys of two
// slots fails there with CROSSSLOT, and only there.
func RequireOneSlot(t testing.TB, what string, keys ...string) {
	t.Helper()
	slotOnce.Do(func() { slotClient = redis.NewClient(&redis.Options{Addr: Cluster(t).Addrs()[0]}) })
	rdb := slotClient
	slots := map[int64][]string{}
	for _, k := range keys {
		s, err := rdb.ClusterKeySlot(context.Background(), k).Result()
		if err != nil {
			t.Fatalf("CLUSTER KEYSLOT %s: %v", k, err)
		}
		slots[s] = append(slots[s], k)
	}
	if len(slots) > 1 {
		t.Errorf("%s: its keys span %d slots: %v", what, len(slots), slots)
	}
}
