package localenv

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5"

	"github.com/catraca/catraca/shared/config"
)

// DefaultPoolSize is the pooler's server connections per database when
// Env.PoolSize is zero.
const DefaultPoolSize = 4

// PoolerDSN returns the URL of database db through the pooler.
func (e Env) PoolerDSN(db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", e.PoolerPort, db)
}

func (e Env) poolerDir() string { return filepath.Join(e.Dir, "pgbouncer") }

// poolerConfig is PgBouncer's configuration: every database of the local
// PostgreSQL, transaction pooling (a server connection belongs to a client
// for one transaction, as RDS Proxy multiplexes), trust authentication on
// loopback, and the admin console for the postgres user (SHOW POOLS).
func (e Env) poolerConfig() string {
	dir := e.poolerDir()
	size := e.PoolSize
	if size <= 0 {
		size = DefaultPoolSize
	}
	return strings.Join([]string{
		"[databases]",
		fmt.Sprintf("* = host=127.0.0.1 port=%d", e.PGPort),
		"[pgbouncer]",
		"listen_addr = 127.0.0.1",
		"listen_port = " + strconv.Itoa(e.PoolerPort),
		"unix_socket_dir =",
		"auth_type = trust",
		"auth_file = " + filepath.Join(dir, "userlist.txt"),
		"admin_users = postgres",
		"pool_mode = transaction",
		"default_pool_size = " + strconv.Itoa(size),
		"max_client_conn = 5000",
		"ignore_startup_parameters = extra_float_digits",
		"logfile = " + filepath.Join(dir, "pgbouncer.log"),
		"pidfile = " + e.poolerPID(),
		"",
	}, "\n")
}

// poolerUsers is PgBouncer's auth_file: trust still logs in only the
// users it lists, postgres and every function's database role (the
// functions log in as theirs, config.DBRole).
func poolerUsers() string {
	users := append([]string{"postgres"}, slices.Sorted(maps.Values(config.DBRoles()))...)
	var b strings.Builder
	for _, u := range users {
		fmt.Fprintf(&b, "%q \"\"\n", u)
	}
	return b.String()
}

// syncPoolerUsers brings a running pooler's auth_file (wherever it was
// started from) up to poolerUsers and reloads it: a pooler started before
// a role existed would refuse it. It adds users and stops nothing.
func (e Env) syncPoolerUsers(ctx context.Context) error {
	return e.poolerAdmin(ctx, func(conn *pgx.Conn, settings map[string]string) error {
		path, ok := settings["auth_file"]
		if !ok {
			return errors.New("pooler users: the pooler names no auth_file")
		}
		if have, err := os.ReadFile(path); err == nil && string(have) == poolerUsers() {
			return nil
		}
		if err := os.WriteFile(path, []byte(poolerUsers()), 0o644); err != nil {
			return fmt.Errorf("pooler users: %w", err)
		}
		_, err := conn.Exec(ctx, "RELOAD")
		return err
	})
}

// PoolerPoolSize is the running pooler's server connections per database
// (default_pool_size), whatever configuration started it: a benchmark that
// compares the pooler with direct connections needs as many.
func (e Env) PoolerPoolSize(ctx context.Context) (int, error) {
	var size int
	err := e.poolerAdmin(ctx, func(_ *pgx.Conn, settings map[string]string) error {
		var err error
		size, err = strconv.Atoi(settings["default_pool_size"])
		return err
	})
	return size, err
}

// PoolerPID is the running pooler's process id, read from the pidfile its
// configuration names (whatever configuration started it).
func (e Env) PoolerPID(ctx context.Context) (int, error) {
	var pid int
	err := e.poolerAdmin(ctx, func(_ *pgx.Conn, settings map[string]string) error {
		raw, err := os.ReadFile(settings["pidfile"])
		if err == nil {
			pid, err = strconv.Atoi(strings.TrimSpace(string(raw)))
		}
		return err
	})
	return pid, err
}

// poolerAdmin runs fn on a connection to the pooler's admin console with
// its settings (SHOW CONFIG) by name.
func (e Env) poolerAdmin(ctx context.Context, fn func(conn *pgx.Conn, settings map[string]string) error) error {
	cfg, err := pgx.ParseConfig(e.PoolerDSN("pgbouncer"))
	if err != nil {
		return err
	}
	cfg.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol // the admin console speaks no other
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, "SHOW CONFIG")
	if err != nil {
		return err
	}
	all, err := pgx.CollectRows(rows, pgx.RowToMap)
	if err != nil {
		return err
	}
	settings := map[string]string{}
	for _, s := range all {
		k, _ := s["key"].(string)
		v, _ := s["value"].(string)
		settings[k] = v
	}
	return fn(conn, settings)
}

func (e Env) poolerPID() string { return filepath.Join(e.poolerDir(), "pgbouncer.pid") }

// startPooler starts PgBouncer (installing Debian's package if missing), or
// reuses one on the port, and returns once it passes a query through.
func (e Env) startPooler(ctx context.Context) error {
	if listening(e.PoolerPort) {
		if err := waitPostgres(ctx, e.PoolerDSN("postgres")); err != nil {
			return err
		}
		return e.syncPoolerUsers(ctx)
	}
	bin, err := pgbouncerBin()
	if err != nil {
		return err
	}
	dir := e.poolerDir()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	ini := filepath.Join(dir, "pgbouncer.ini")
	for path, text := range map[string]string{ini: e.poolerConfig(), filepath.Join(dir, "userlist.txt"): poolerUsers()} {
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			return err
		}
	}
	// PgBouncer refuses to run as root, and writes its log and pid here.
	if err := e.chownToPostgres(dir); err != nil {
		return err
	}
	if err := run(asPostgres(bin, "-d", ini)); err != nil {
		return err
	}
	return waitPostgres(ctx, e.PoolerDSN("postgres"))
}

// pgbouncerBin finds pgbouncer (Debian installs it in /usr/sbin), installing
// the package if absent.
func pgbouncerBin() (string, error) {
	find := func() string {
		if p, err := exec.LookPath("pgbouncer"); err == nil {
			return p
		}
		if _, err := os.Stat("/usr/sbin/pgbouncer"); err == nil {
			return "/usr/sbin/pgbouncer"
		}
		return ""
	}
	if p := find(); p != "" {
		return p, nil
	}
	if err := aptInstall("pgbouncer"); err != nil {
		return "", err
	}
	if p := find(); p != "" {
		return p, nil
	}
	return "", errors.New("pgbouncer not found after installing it")
}

// stopPooler stops the PgBouncer started from this data folder.
func (e Env) stopPooler() error {
	if err := signalPID(e.poolerPID(), e.PoolerPort, syscall.SIGTERM); err != nil {
		return fmt.Errorf("pgbouncer: %w", err)
	}
	return nil
}
