// Package localenv runs private PostgreSQL and Redis servers from local
// binaries, for make dev and the tests: no Docker, no cloud account; and,
// when asked, PgBouncer in transaction pooling mode in front of PostgreSQL
// as a stand-in for RDS Proxy's multiplexing. It
// installs what is missing with apt (as root), runs PostgreSQL as the
// postgres user when started as root, and reuses servers already running.
package localenv

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/redis/go-redis/v9"
)

// Env is one set of local servers with its data folder and ports.
type Env struct {
	Dir       string // data folder (git-ignored)
	PGPort    int
	RedisPort int
	// PoolerPort is PgBouncer's port in front of PostgreSQL (0: none).
	PoolerPort int
	// PoolSize is the pooler's server connections per database (4 when
	// zero): few, so that clients really share them.
	PoolSize int
	// Settings are extra postgresql.conf lines for a new cluster.
	Settings []string
}

// DSN returns the URL of database db on the local PostgreSQL.
func (e Env) DSN(db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", e.PGPort, db)
}

// RedisAddr is host:port of the local Redis.
func (e Env) RedisAddr() string { return fmt.Sprintf("127.0.0.1:%d", e.RedisPort) }

func (e Env) pgData() string    { return filepath.Join(e.Dir, "pg") }
func (e Env) redisDir() string  { return filepath.Join(e.Dir, "redis") }
func (e Env) redisPIDs() string { return filepath.Join(e.redisDir(), "redis.pid") }

// DataDir picks the data folder for repo-relative dir rel. As root, the
// postgres user must be able to reach it; when the checkout sits in a
// private home (e.g. /root), the data moves to /var/tmp under a name derived
// from the checkout path, so each clone still has its own.
func DataDir(repoRoot, rel string) string {
	dir := filepath.Join(repoRoot, rel)
	if os.Geteuid() != 0 || reachableByPostgres(repoRoot) {
		return dir
	}
	sum := sha256.Sum256([]byte(dir))
	return filepath.Join("/var/tmp", fmt.Sprintf("catraca-%x", sum[:6]))
}

func reachableByPostgres(path string) bool {
	return exec.Command("runuser", "-u", "postgres", "--", "test", "-x", path).Run() == nil
}

// Up makes sure both servers run, starting or installing what is needed.
// Concurrent callers (parallel test binaries) serialize on a file lock.
func (e Env) Up(ctx context.Context) error {
	if err := os.MkdirAll(e.Dir, 0o755); err != nil {
		return err
	}
	unlock, err := lockFile(filepath.Join(e.Dir, ".lock"))
	if err != nil {
		return err
	}
	defer unlock()
	if err := e.startPostgres(ctx); err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	if err := e.StartRedis(ctx); err != nil {
		return fmt.Errorf("redis: %w", err)
	}
	if e.PoolerPort > 0 {
		if err := e.startPooler(ctx); err != nil {
			return fmt.Errorf("pgbouncer: %w", err)
		}
	}
	return nil
}

// Down stops the servers, keeping their data.
func (e Env) Down() error {
	return errors.Join(e.stopPooler(), e.StopPostgres(), e.StopRedis())
}

func lockFile(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return func() { syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
}

func listening(port int) bool {
	c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), 300*time.Millisecond)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// pgBin finds a PostgreSQL server binary, installing PostgreSQL if absent.
func pgBin(name string) (string, error) {
	find := func() string {
		matches, _ := filepath.Glob("/usr/lib/postgresql/*/bin/" + name)
		sort.Strings(matches)
		if len(matches) > 0 {
			return matches[len(matches)-1]
		}
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
		return ""
	}
	if p := find(); p != "" {
		return p, nil
	}
	if err := aptInstall("postgresql", "postgresql-contrib"); err != nil {
		return "", err
	}
	if p := find(); p != "" {
		return p, nil
	}
	return "", fmt.Errorf("%s not found after installing postgresql", name)
}

func aptInstall(pkgs ...string) error {
	if os.Geteuid() != 0 {
		return fmt.Errorf("%s missing: install it (e.g. sudo apt-get install %s)", pkgs[0], strings.Join(pkgs, " "))
	}
	fmt.Fprintf(os.Stderr, "localenv: installing %s with apt-get\n", strings.Join(pkgs, " "))
	update := exec.Command("apt-get", "update", "-qq")
	update.Stdout, update.Stderr = os.Stderr, os.Stderr
	if err := update.Run(); err != nil {
		return fmt.Errorf("apt-get update: %w", err)
	}
	install := exec.Command("apt-get", append([]string{"install", "-y", "-qq", "--no-install-recommends"}, pkgs...)...)
	install.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
	install.Stdout, install.Stderr = os.Stderr, os.Stderr
	if err := install.Run(); err != nil {
		return fmt.Errorf("apt-get install %s: %w", strings.Join(pkgs, " "), err)
	}
	return nil
}

// asPostgres runs a PostgreSQL binary, as the postgres user when we are root
// (the server refuses to run as root).
func asPostgres(bin string, args ...string) *exec.Cmd {
	var cmd *exec.Cmd
	if os.Geteuid() == 0 {
		cmd = exec.Command("runuser", append([]string{"-u", "postgres", "--", bin}, args...)...)
	} else {
		cmd = exec.Command(bin, args...)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	return cmd
}

func run(cmd *exec.Cmd) error {
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s: %w: %s", strings.Join(cmd.Args, " "), err, strings.TrimSpace(out.String()))
	}
	return nil
}

func (e Env) chownToPostgres(path string) error {
	if os.Geteuid() != 0 {
		return nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return fmt.Errorf("running as root needs a postgres user: %w", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return os.Chown(path, uid, gid)
}

func (e Env) startPostgres(ctx context.Context) error {
	if listening(e.PGPort) {
		return waitPostgres(ctx, e.DSN("postgres"))
	}
	initdb, err := pgBin("initdb")
	if err != nil {
		return err
	}
	pgctl, err := pgBin("pg_ctl")
	if err != nil {
		return err
	}
	data := e.pgData()
	if _, err := os.Stat(filepath.Join(data, "PG_VERSION")); err != nil {
		if err := os.MkdirAll(data, 0o700); err != nil {
			return err
		}
		if err := e.chownToPostgres(data); err != nil {
			return err
		}
		if err := run(asPostgres(initdb, "-D", data, "-U", "postgres", "--auth=trust", "--encoding=UTF8", "--locale=C.UTF-8")); err != nil {
			return err
		}
		conf := append([]string{
			"listen_addresses = '127.0.0.1'",
			"port = " + strconv.Itoa(e.PGPort),
			"unix_socket_directories = ''",
			"max_connections = 400",
			"shared_buffers = 256MB",
			"log_min_messages = warning",
		}, e.Settings...)
		f, err := os.OpenFile(filepath.Join(data, "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			return err
		}
		_, err = f.WriteString("\n# catraca local stack\n" + strings.Join(conf, "\n") + "\n")
		f.Close()
		if err != nil {
			return err
		}
	}
	logPath := filepath.Join(data, "server.log")
	// The port is given on the command line too: a data folder made when
	// the port was another keeps the old one in its postgresql.conf.
	if err := run(asPostgres(pgctl, "-D", data, "-l", logPath, "-o", "-p "+strconv.Itoa(e.PGPort), "-w", "-t", "60", "start")); err != nil {
		return err
	}
	return waitPostgres(ctx, e.DSN("postgres"))
}

// RestartPostgres stops PostgreSQL immediately (as a crash would) and starts
// it again; for chaos tests.
func (e Env) RestartPostgres(ctx context.Context) error {
	pgctl, err := pgBin("pg_ctl")
	if err != nil {
		return err
	}
	if err := run(asPostgres(pgctl, "-D", e.pgData(), "-m", "immediate", "-w", "stop")); err != nil {
		return err
	}
	return e.startPostgres(ctx)
}

// StopPostgres stops PostgreSQL cleanly if it runs from this data folder.
func (e Env) StopPostgres() error {
	if _, err := os.Stat(filepath.Join(e.pgData(), "postmaster.pid")); err != nil {
		return nil
	}
	pgctl, err := pgBin("pg_ctl")
	if err != nil {
		return err
	}
	return run(asPostgres(pgctl, "-D", e.pgData(), "-m", "fast", "-w", "stop"))
}

func waitPostgres(ctx context.Context, dsn string) error {
	deadline := time.Now().Add(60 * time.Second)
	for {
		c, err := pgx.Connect(ctx, dsn)
		if err == nil {
			err = c.Ping(ctx)
			c.Close(ctx)
			if err == nil {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("postgres not ready: %w", err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// StartRedis starts Redis with AOF on, or reuses one on the port, and
// returns once it answers commands (not while it replays its AOF).
func (e Env) StartRedis(ctx context.Context) error {
	if listening(e.RedisPort) {
		return waitPing(ctx, e.RedisAddr())
	}
	bin, err := redisServer()
	if err != nil {
		return err
	}
	dir := e.redisDir()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	cmd := exec.Command(bin,
		"--port", strconv.Itoa(e.RedisPort), "--bind", "127.0.0.1",
		"--dir", dir, "--appendonly", "yes", "--appendfsync", "everysec",
		"--save", "", "--daemonize", "yes",
		"--pidfile", e.redisPIDs(), "--logfile", filepath.Join(dir, "redis.log"))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := run(cmd); err != nil {
		return err
	}
	return waitPing(ctx, e.RedisAddr())
}

// waitPing waits until the Redis at addr answers PING: a Redis replaying
// its AOF accepts connections but answers LOADING.
func waitPing(ctx context.Context, addr string) error {
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	defer c.Close()
	deadline := time.Now().Add(60 * time.Second)
	for {
		err := c.Ping(ctx).Err()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("redis not ready: %w", err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// KillRedis kills Redis with SIGKILL, losing what was not yet in the AOF.
func (e Env) KillRedis() error { return signalPID(e.redisPIDs(), e.RedisPort, syscall.SIGKILL) }

// StopRedis shuts Redis down cleanly.
func (e Env) StopRedis() error { return signalPID(e.redisPIDs(), e.RedisPort, syscall.SIGTERM) }

// signalPID signals the process whose pid file is pidFile (none: no
// process) and waits (up to five seconds) until nothing listens on its port.
func signalPID(pidFile string, port int, sig syscall.Signal) error {
	b, err := os.ReadFile(pidFile)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return fmt.Errorf("pid file %s: %w", pidFile, err)
	}
	if err := syscall.Kill(pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	for i := 0; i < 100 && listening(port); i++ {
		time.Sleep(50 * time.Millisecond)
	}
	if sig == syscall.SIGKILL {
		os.Remove(pidFile)
	}
	return nil
}

// CreateDatabase creates db if it does not exist, optionally from a template.
func (e Env) CreateDatabase(ctx context.Context, db, template string) error {
	conn, err := pgx.Connect(ctx, e.DSN("postgres"))
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	var exists bool
	if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, db).Scan(&exists); err != nil {
		return err
	}
	if exists {
		return nil
	}
	stmt := "CREATE DATABASE " + pgx.Identifier{db}.Sanitize()
	if template != "" {
		stmt += " TEMPLATE " + pgx.Identifier{template}.Sanitize()
	}
	_, err = conn.Exec(ctx, stmt)
	return err
}

// DropDatabase drops db, closing its connections.
func (e Env) DropDatabase(ctx context.Context, db string) error {
	conn, err := pgx.Connect(ctx, e.DSN("postgres"))
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{db}.Sanitize()+" WITH (FORCE)")
	return err
}

// SetCommitDelay makes every commit in db sleep us microseconds before its
// WAL flush while it still holds its row locks, as a commit waiting for a
// storage quorum across zones does on Aurora. It applies to sessions opened
// afterwards and to this database only (no ALTER SYSTEM); commits of other
// databases that share the flush wait too, so use it on a private server.
// commit_delay has no effect with fsync off.
func (e Env) SetCommitDelay(ctx context.Context, db string, us int) error {
	conn, err := pgx.Connect(ctx, e.DSN("postgres"))
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	name := pgx.Identifier{db}.Sanitize()
	for _, stmt := range []string{
		fmt.Sprintf("ALTER DATABASE %s SET commit_delay = %d", name, us),
		// Zero siblings: every commit sleeps, not only crowded ones.
		"ALTER DATABASE " + name + " SET commit_siblings = 0",
	} {
		if _, err := conn.Exec(ctx, stmt); err != nil {
			return err
		}
	}
	return nil
}

// FreePort returns a TCP port free on 127.0.0.1 right now.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
