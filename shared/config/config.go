// Package config reads catraca's typed configuration from the environment.
// The local stack and every Lambda read the same variables, so a setting
// means the same thing everywhere.
package config

import (
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Config is everything a catraca process needs to know at start.
type Config struct {
	// Env names the deployment ("local", "test", "prod"); it only changes
	// defaults that are unsafe in production, never behaviour silently.
	Env string
	// HTTPAddr is where the local server listens.
	HTTPAddr string
	// PublicURL is the base URL fans use (for links in emails and PSP pages).
	PublicURL string

	// CatalogDSN points at the catalog database (accounts, venues, events).
	CatalogDSN string
	// CatalogReadDSN is a reader for browse traffic; defaults to CatalogDSN.
	CatalogReadDSN string
	// Shards maps shard id to its primary DSN.
	Shards map[int]string
	// ShardReads maps shard id to a reader DSN; missing ids use the primary.
	ShardReads map[int]string
	// DBMaxConns caps each pool: Lambdas keep it small (RDS Proxy does the rest).
	DBMaxConns int32
	// DBMinConns are opened at start and kept: a new PostgreSQL backend
	// costs tens of milliseconds of CPU (fork, catalog caches, planning
	// the hold statements), which an on-sale burst should not pay.
	DBMinConns int32

	// RedisAddr is host:port of Redis (ElastiCache in AWS).
	RedisAddr string
	// RedisTLS turns on TLS (ElastiCache Serverless requires it).
	RedisTLS bool
	// RedisPrefix starts every key, so several stacks can share one Redis.
	RedisPrefix string

	// SessionKeys sign session JWTs; the first one signs, all verify.
	SessionKeys []Key
	// AdmissionKeys sign admission tokens; the first one signs, all verify.
	AdmissionKeys []Key
	// SessionTTL is how long a login lasts.
	SessionTTL time.Duration

	// Argon2 cost; production keeps OWASP's minimum or more.
	Argon2MemoryKiB uint32
	Argon2Time      uint32

	// MaxBodyBytes caps request bodies; MaxLayoutBytes those of layout
	// imports (LayoutImportPath), the one route with large bodies.
	MaxBodyBytes   int64
	MaxLayoutBytes int64
	// AuthPerIP is how many log-ins, and separately sign-ups, one viewer
	// address may send per minute (and at once). Generous: a carrier NAT
	// puts many fans behind one address; the per-email limit is the tight one.
	AuthPerIP int

	// PSPURL and PSPAPIKey reach the payment provider (the simulator
	// locally, with the key make dev generated).
	PSPURL    string
	PSPAPIKey string
	// PSPWebhookSecrets verify webhook signatures; several during rotation.
	PSPWebhookSecrets []Key
	// RoomAdmitDelay starts waiting-room admission this long after the draw.
	RoomAdmitDelay time.Duration
	// PSPRate is the provider's operations-per-second quota we stay under.
	PSPRate float64
	// TicketKey signs ticket codes.
	TicketKey []Key
	// Mailbox is where confirmation emails are written locally ("" = log only).
	Mailbox string
	// MailFrom, when set, sends confirmation emails with SES from this address.
	MailFrom string
	// PSPQueueURL, when set, queues PSP calls on this SQS FIFO queue
	// instead of the in-process queue.
	PSPQueueURL string
	// EdgeKVSARN, when set, is the CloudFront KeyValueStore the admit
	// function keeps in sync (signing keys, gated events).
	EdgeKVSARN string
}

// Key is one HMAC key with the id that travels in the JWT header.
type Key struct {
	ID     string
	Secret []byte
}

// Load reads the configuration from the process environment.
func Load() (Config, error) { return FromLookup(os.LookupEnv) }

// FromLookup reads the configuration through lookup, so tests can pass a map.
func FromLookup(lookup func(string) (string, bool)) (Config, error) {
	r := reader{lookup: lookup}
	c := Config{
		Env:             r.str("CATRACA_ENV", "local"),
		HTTPAddr:        r.str("CATRACA_HTTP_ADDR", "127.0.0.1:8080"),
		PublicURL:       r.str("CATRACA_PUBLIC_URL", "http://localhost:8080"),
		CatalogDSN:      r.required("CATRACA_CATALOG_DSN"),
		RedisAddr:       r.str("CATRACA_REDIS_ADDR", "127.0.0.1:6379"),
		RedisTLS:        r.boolean("CATRACA_REDIS_TLS", false),
		RedisPrefix:     r.str("CATRACA_REDIS_PREFIX", ""),
		DBMaxConns:      int32(r.integer("CATRACA_DB_MAX_CONNS", 8)),
		DBMinConns:      int32(r.integer("CATRACA_DB_MIN_CONNS", 0)),
		SessionTTL:      r.duration("CATRACA_SESSION_TTL", 2*time.Hour),
		Argon2MemoryKiB: uint32(r.integer("CATRACA_ARGON2_MEMORY_KIB", 19*1024)),
		Argon2Time:      uint32(r.integer("CATRACA_ARGON2_TIME", 2)),
		MaxBodyBytes:    int64(r.integer("CATRACA_MAX_BODY_BYTES", DefaultMaxBodyBytes)),
		MaxLayoutBytes:  int64(r.integer("CATRACA_MAX_LAYOUT_BYTES", LayoutMaxBodyBytes)),
		AuthPerIP:       r.integer("CATRACA_AUTH_PER_IP", 120),
	}
	c.CatalogReadDSN = r.str("CATRACA_CATALOG_READ_DSN", c.CatalogDSN)
	c.Shards = r.idMap("CATRACA_SHARD_DSNS", true)
	c.ShardReads = r.idMap("CATRACA_SHARD_READ_DSNS", false)
	c.PSPURL = r.str("CATRACA_PSP_URL", "http://127.0.0.1:8090")
	c.PSPAPIKey = r.required("CATRACA_PSP_API_KEY") // a secret: no default anywhere
	c.PSPRate = float64(r.integer("CATRACA_PSP_RATE", 80))
	c.RoomAdmitDelay = r.duration("CATRACA_ROOM_ADMIT_DELAY", 0)
	c.Mailbox = r.str("CATRACA_MAILBOX", "")
	c.MailFrom = r.str("CATRACA_MAIL_FROM", "")
	c.PSPQueueURL = r.str("CATRACA_PSP_QUEUE_URL", "")
	c.EdgeKVSARN = r.str("CATRACA_EDGE_KVS_ARN", "")
	c.PSPWebhookSecrets = r.keys("CATRACA_PSP_WEBHOOK_SECRETS")
	c.TicketKey = r.keys("CATRACA_TICKET_KEY")
	c.SessionKeys = r.keys("CATRACA_SESSION_KEYS")
	c.AdmissionKeys = r.keys("CATRACA_ADMISSION_KEYS")
	if len(r.errs) > 0 {
		return Config{}, fmt.Errorf("config: %w", errors.Join(r.errs...))
	}
	return c, nil
}

// ShardIDs returns the configured shard ids in ascending order.
func (c Config) ShardIDs() []int {
	ids := make([]int, 0, len(c.Shards))
	for id := range c.Shards {
		ids = append(ids, id)
	}
	sort.Ints(ids)
	return ids
}

type reader struct {
	lookup func(string) (string, bool)
	errs   []error
}

func (r *reader) str(name, def string) string {
	if v, ok := r.lookup(name); ok && v != "" {
		return v
	}
	return def
}

func (r *reader) required(name string) string {
	v := r.str(name, "")
	if v == "" {
		r.errs = append(r.errs, fmt.Errorf("%s is required", name))
	}
	return v
}

func (r *reader) integer(name string, def int) int {
	v := r.str(name, "")
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		r.errs = append(r.errs, fmt.Errorf("%s=%q: want a non-negative integer", name, v))
	}
	return n
}

func (r *reader) boolean(name string, def bool) bool {
	v := r.str(name, "")
	if v == "" {
		return def
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		r.errs = append(r.errs, fmt.Errorf("%s=%q: want true or false", name, v))
	}
	return b
}

func (r *reader) duration(name string, def time.Duration) time.Duration {
	v := r.str(name, "")
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		r.errs = append(r.errs, fmt.Errorf("%s=%q: want a positive duration like 90s", name, v))
	}
	return d
}

// idMap parses "1=dsn,2=dsn".
func (r *reader) idMap(name string, required bool) map[int]string {
	out := map[int]string{}
	v := r.str(name, "")
	if v == "" {
		if required {
			r.errs = append(r.errs, fmt.Errorf("%s is required (e.g. 1=postgres://…,2=postgres://…)", name))
		}
		return out
	}
	for _, part := range strings.Split(v, ",") {
		idText, dsn, ok := strings.Cut(strings.TrimSpace(part), "=")
		id, err := strconv.Atoi(idText)
		if !ok || err != nil || id <= 0 || dsn == "" {
			r.errs = append(r.errs, fmt.Errorf("%s: entry %q is not <positive id>=<dsn>", name, part))
			continue
		}
		out[id] = dsn
	}
	return out
}

// keys parses "kid:base64secret,kid:base64secret"; the first one signs.
func (r *reader) keys(name string) []Key {
	v := r.str(name, "")
	if v == "" {
		r.errs = append(r.errs, fmt.Errorf("%s is required (kid:base64-secret[,kid:base64-secret])", name))
		return nil
	}
	var keys []Key
	for _, part := range strings.Split(v, ",") {
		kid, b64, ok := strings.Cut(strings.TrimSpace(part), ":")
		secret, err := base64.StdEncoding.DecodeString(b64)
		if !ok || kid == "" || err != nil {
			r.errs = append(r.errs, fmt.Errorf("%s: an entry is not kid:base64-secret", name))
			continue
		}
		if len(secret) < 32 {
			r.errs = append(r.errs, fmt.Errorf("%s: key %q is shorter than 32 bytes", name, kid))
			continue
		}
		keys = append(keys, Key{ID: kid, Secret: secret})
	}
	return keys
}
