// Package config reads catraca's typed configuration from the environment.
// Settings come in parts (the databases, Redis, the PSP, each signing key…);
// a deployed function loads only the parts it uses (API, Sweep, … below),
// so it needs, and in AWS is given, only their variables and secrets. The
// local stack loads them all (Config).
package config

import (
	"fmt"
	"os"
	"reflect"
	"sort"
	"strings"
	"time"
)

// Config is every part: what the whole process of the local stack needs.
type Config struct {
	Site
	HTTP
	Database
	Readers
	SearchSnapshots
	Redis
	Sessions
	Passwords
	Admission
	Challenge
	Room
	Tickets
	PSP
	Queue
	Webhooks
	Mail
	Outbox
	Declines
	Edge
}

// Site is where fans reach the deployment.
type Site struct {
	// PublicURL is the base URL fans use (for links in emails and PSP pages).
	PublicURL string
}

func (p *Site) read(r *reader) {
	p.PublicURL = r.str("CATRACA_PUBLIC_URL", "http://localhost:8080")
}

// HTTP tunes the API's request handling.
type HTTP struct {
	// MaxBodyBytes caps request bodies; MaxLayoutBytes those of layout
	// imports (LayoutImportPath), the one route with large bodies.
	MaxBodyBytes   int64
	MaxLayoutBytes int64
	// AuthPerIP is how many log-ins, and separately sign-ups, one viewer
	// address may send per minute (and at once). Generous: a carrier NAT
	// puts many fans behind one address; the per-email limit is the tight one.
	AuthPerIP int
}

func (p *HTTP) read(r *reader) {
	p.MaxBodyBytes = int64(r.integer("CATRACA_MAX_BODY_BYTES", DefaultMaxBodyBytes))
	p.MaxLayoutBytes = int64(r.integer("CATRACA_MAX_LAYOUT_BYTES", LayoutMaxBodyBytes))
	p.AuthPerIP = r.integer("CATRACA_AUTH_PER_IP", 120)
}

// Database names the catalog and the shards' primaries.
type Database struct {
	// CatalogDSN points at the catalog database (accounts, venues, events).
	CatalogDSN string
	// Shards maps shard id to its primary DSN.
	Shards map[int]string
	// DBMaxConns caps each pool: Lambdas keep it small (RDS Proxy does the rest).
	DBMaxConns int32
	// DBMinConns are opened at start and kept: a new PostgreSQL backend
	// costs tens of milliseconds of CPU (fork, catalog caches, planning
	// the hold statements), which an on-sale burst should not pay.
	DBMinConns int32
	// DBProxy says the DSNs go through a multiplexing proxy (RDS Proxy):
	// no named prepared statements, which would pin each client connection
	// to one database connection.
	DBProxy bool
	// DBUser, when set, is the role every pool logs in as, whatever user
	// the DSNs name: each deployed function has its own, with only the
	// grants its code uses (DBRole; docs/database.md).
	DBUser string
	// DBIAMAuth logs in with an RDS IAM authentication token for DBUser
	// (signed with the function's credentials, fresh for each new
	// connection) instead of a password: RDS Proxy's end-to-end IAM
	// authentication, so no function but migrate holds a database password.
	DBIAMAuth bool
}

func (p *Database) read(r *reader) {
	p.CatalogDSN = r.required("CATRACA_CATALOG_DSN")
	p.Shards = r.idMap("CATRACA_SHARD_DSNS", true)
	p.DBMaxConns = int32(r.integer("CATRACA_DB_MAX_CONNS", 8))
	p.DBMinConns = int32(r.integer("CATRACA_DB_MIN_CONNS", 0))
	p.DBProxy = r.boolean("CATRACA_DB_PROXY", false)
	p.DBUser = r.str("CATRACA_DB_USER", "")
	p.DBIAMAuth = r.boolean("CATRACA_DB_IAM_AUTH", false)
}

// ShardIDs returns the configured shard ids in ascending order.
func (p Database) ShardIDs() []int {
	ids := make([]int, 0, len(p.Shards))
	for id := range p.Shards {
		ids = append(ids, id)
	}
	sort.Ints(ids)
	return ids
}

// Readers are the replicas the read path (snapshots, listings) uses.
type Readers struct {
	// CatalogReadDSN is a reader for browse traffic ("" = the catalog).
	CatalogReadDSN string
	// ShardReads maps shard id to a reader DSN; missing ids use the primary.
	ShardReads map[int]string
	// SearchIndex answers event search from an in-memory index in each
	// instance, refreshed from the catalog reader (docs/read-path.md).
	SearchIndex bool
	// SearchMaxEvents bounds the index's memory: a larger catalog is not
	// loaded, PostgreSQL answers (0: searchindex's default, 500,000).
	SearchMaxEvents int
}

func (p *Readers) read(r *reader) {
	p.CatalogReadDSN = r.str("CATRACA_CATALOG_READ_DSN", "")
	p.ShardReads = r.idMap("CATRACA_SHARD_READ_DSNS", false)
	p.SearchIndex = r.boolean("CATRACA_SEARCH_INDEX", true)
	p.SearchMaxEvents = r.integer("CATRACA_SEARCH_MAX_EVENTS", 0)
}

// SearchSnapshots is where the search index's snapshot is kept: the
// sweep function builds it from the catalog every SearchSnapshotEvery, a
// new API instance starts its index from it instead of reading the whole
// catalog (docs/read-path.md, searchindex/snapshot.go).
type SearchSnapshots struct {
	// SearchSnapshot is s3://bucket/key in AWS, a directory locally ("":
	// none, every instance reads the catalog).
	SearchSnapshot      string
	SearchSnapshotEvery time.Duration
}

func (p *SearchSnapshots) read(r *reader) {
	p.SearchSnapshot = r.str("CATRACA_SEARCH_SNAPSHOT", "")
	p.SearchSnapshotEvery = r.duration("CATRACA_SEARCH_SNAPSHOT_EVERY", 10*time.Minute)
}

// Redis is the waiting room's, the caches' and the limiters' store.
type Redis struct {
	// RedisAddr is host:port of Redis (ElastiCache in AWS), or of a
	// cluster's nodes separated by commas.
	RedisAddr string
	// RedisCluster speaks the Redis Cluster protocol (following MOVED and
	// ASK) to RedisAddr: ElastiCache Serverless is always a cluster. A
	// list of several addresses is a cluster too.
	RedisCluster bool
	// RedisTLS turns on TLS (ElastiCache Serverless requires it).
	RedisTLS bool
	// RedisPrefix starts every key, so several stacks can share one Redis.
	RedisPrefix string
}

func (p *Redis) read(r *reader) {
	p.RedisAddr = r.str("CATRACA_REDIS_ADDR", "127.0.0.1:6379")
	p.RedisCluster = r.boolean("CATRACA_REDIS_CLUSTER", false)
	p.RedisTLS = r.boolean("CATRACA_REDIS_TLS", false)
	p.RedisPrefix = r.str("CATRACA_REDIS_PREFIX", "")
}

// Sessions sign fans' log-ins.
type Sessions struct {
	// SessionKeys sign session JWTs; the first one signs, all verify.
	SessionKeys []Key
	// SessionTTL is how long a login lasts.
	SessionTTL time.Duration
}

func (p *Sessions) read(r *reader) {
	p.SessionKeys = r.keys("CATRACA_SESSION_KEYS")
	p.SessionTTL = r.duration("CATRACA_SESSION_TTL", 2*time.Hour)
}

// Passwords is the cost of hashing passwords (Argon2id); production keeps
// OWASP's minimum or more.
type Passwords struct {
	Argon2MemoryKiB uint32
	Argon2Time      uint32
}

func (p *Passwords) read(r *reader) {
	p.Argon2MemoryKiB = uint32(r.integer("CATRACA_ARGON2_MEMORY_KIB", 19*1024))
	p.Argon2Time = uint32(r.integer("CATRACA_ARGON2_TIME", 2))
}

// Admission signs the waiting room's admission and queue tokens.
type Admission struct {
	// AdmissionKeys sign admission tokens; the first one signs, all verify.
	AdmissionKeys []Key
}

func (p *Admission) read(r *reader) { p.AdmissionKeys = r.keys("CATRACA_ADMISSION_KEYS") }

// Challenge is the waiting room's door: the risk score of a join and the
// challenge a risky one passes before it gets a place (docs/fairness.md).
type Challenge struct {
	// ChallengeMode is pow (the default), off, turnstile or hcaptcha.
	ChallengeMode string
	// ChallengeThreshold is the risk score from which a join is
	// challenged; ChallengeLookCloser the score of the free signals from
	// which the join counters are read (one more Redis round trip).
	ChallengeThreshold, ChallengeLookCloser int
	// ChallengeBits is the proof-of-work's leading zero bits at the
	// threshold, ChallengeBitsStep more per point above it, at most
	// ChallengeBitsMax.
	ChallengeBits, ChallengeBitsStep, ChallengeBitsMax int
	// ChallengeTTL is how long a challenge can be answered.
	ChallengeTTL time.Duration
	// ChallengeSiteKey and ChallengeSecret are the hosted CAPTCHA's.
	ChallengeSiteKey, ChallengeSecret string
	// RiskNewAccount is the age under which an account is new;
	// RiskDeviceJoins and RiskNetJoins the joins of one event per minute
	// from one device and from one /24 (/64) above which they are risky.
	RiskNewAccount                time.Duration
	RiskDeviceJoins, RiskNetJoins int
}

func (p *Challenge) read(r *reader) {
	p.ChallengeMode = r.str("CATRACA_CHALLENGE", "pow")
	switch p.ChallengeMode {
	case "pow", "off", "turnstile", "hcaptcha":
	default:
		r.errs = append(r.errs, fmt.Errorf("CATRACA_CHALLENGE=%q: want pow, off, turnstile or hcaptcha", p.ChallengeMode))
	}
	p.ChallengeThreshold = r.integer("CATRACA_CHALLENGE_THRESHOLD", 3)
	p.ChallengeLookCloser = r.integer("CATRACA_CHALLENGE_LOOK_CLOSER", 1)
	p.ChallengeBits = r.integer("CATRACA_CHALLENGE_BITS", 19)
	p.ChallengeBitsStep = r.integer("CATRACA_CHALLENGE_BITS_STEP", 1)
	p.ChallengeBitsMax = r.integer("CATRACA_CHALLENGE_BITS_MAX", 22)
	p.ChallengeTTL = r.duration("CATRACA_CHALLENGE_TTL", 2*time.Minute)
	p.ChallengeSiteKey = r.str("CATRACA_CHALLENGE_SITE_KEY", "")
	p.ChallengeSecret = r.str("CATRACA_CHALLENGE_SECRET", "")
	p.RiskNewAccount = r.duration("CATRACA_RISK_NEW_ACCOUNT", 24*time.Hour)
	p.RiskDeviceJoins = r.integer("CATRACA_RISK_DEVICE_JOINS", 5)
	p.RiskNetJoins = r.integer("CATRACA_RISK_NET_JOINS", 30)
}

// Room tunes the admission controller.
type Room struct {
	// RoomAdmitDelay starts waiting-room admission this long after the draw.
	RoomAdmitDelay time.Duration
}

func (p *Room) read(r *reader) { p.RoomAdmitDelay = r.duration("CATRACA_ROOM_ADMIT_DELAY", 0) }

// Tickets signs ticket codes.
type Tickets struct {
	// TicketKey signs ticket codes.
	TicketKey []Key
}

func (p *Tickets) read(r *reader) { p.TicketKey = r.keys("CATRACA_TICKET_KEY") }

// PSP reaches the payment provider's API.
type PSP struct {
	// PSPURL and PSPAPIKey reach the payment provider (the simulator
	// locally, with the key make dev generated).
	PSPURL    string
	PSPAPIKey string
	// PSPRate is the provider's operations-per-second quota we stay under.
	PSPRate float64
	// PSPNoPix keeps Pix off the BRL payment pages (CATRACA_PSP_PIX=false):
	// for a Stripe account that has not activated Pix, which refuses a
	// session that asks for it.
	PSPNoPix bool
}

func (p *PSP) read(r *reader) {
	p.PSPURL = r.str("CATRACA_PSP_URL", "http://127.0.0.1:8090")
	p.PSPAPIKey = r.required("CATRACA_PSP_API_KEY") // a secret: no default anywhere
	p.PSPRate = float64(r.integer("CATRACA_PSP_RATE", 80))
	p.PSPNoPix = !r.boolean("CATRACA_PSP_PIX", true)
}

// Queue is where checkout queues PSP calls once the quota is spent.
type Queue struct {
	// PSPQueueURL, when set, queues PSP calls on this SQS FIFO queue
	// instead of the in-process queue.
	PSPQueueURL string
}

func (p *Queue) read(r *reader) { p.PSPQueueURL = r.str("CATRACA_PSP_QUEUE_URL", "") }

// Webhooks verify the PSP's signed webhooks.
type Webhooks struct {
	// PSPWebhookSecrets verify webhook signatures (Stripe's whsec_…
	// signing secrets, comma-separated); several during rotation.
	PSPWebhookSecrets []string
}

func (p *Webhooks) read(r *reader) {
	p.PSPWebhookSecrets = SplitList(r.required("CATRACA_PSP_WEBHOOK_SECRETS")) // a secret: no default anywhere
}

// SplitList splits a comma-separated list, dropping blanks.
func SplitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// Mail sends ticket and transfer emails.
type Mail struct {
	// Mailbox is where emails are written locally ("" = log only).
	Mailbox string
	// MailFrom, when set, sends emails with SES from this address.
	MailFrom string
}

func (p *Mail) read(r *reader) {
	p.Mailbox = r.str("CATRACA_MAILBOX", "")
	p.MailFrom = r.str("CATRACA_MAIL_FROM", "")
}

// Outbox bounds the outbox worker's tries of a message (backing off up to
// a minute between tries).
type Outbox struct {
	// OutboxTries is how often a ticket mail or a payment cancel is tried
	// before it is set aside for an operator (0: order.DefaultOutboxTries).
	OutboxTries int
	// RefundTries is how often the PSP is asked for a refund it does not
	// answer before the refund has failed (0: order.DefaultRefundTries).
	RefundTries int
}

func (p *Outbox) read(r *reader) {
	p.OutboxTries = r.integer("CATRACA_OUTBOX_TRIES", 0)
	p.RefundTries = r.integer("CATRACA_REFUND_TRIES", 0)
}

// Declines slows and then blocks the checkouts of an account, or of a
// viewer address, whose payments the PSP keeps declining (card testing):
// within DeclineWindow, the SlowAfter-th decline and each after it make
// checkout wait DeclineSlowDelay; the BlockAfter-th blocks it for
// DeclineBlockFor (0 turns a threshold off). An address is shared by the
// fans behind one NAT: its thresholds are looser.
type Declines struct {
	DeclineWindow, DeclineSlowDelay, DeclineBlockFor time.Duration
	AccountSlowAfter, AccountBlockAfter              int
	AddressSlowAfter, AddressBlockAfter              int
	// NoCardLimit turns off the per-card limit (each card, by the
	// provider's fingerprint, limited per event as an account is): for
	// load tests whose fans all pay with one test card.
	NoCardLimit bool
	// NoClusterLimit turns off the limit of linked accounts (a cluster
	// sharing a card, device or payout of transfers limited per event as
	// one account is: docs/fairness.md).
	NoClusterLimit bool
	// More than VelocityMax purchases by one account, card or device
	// within VelocityWindow, across events, flag the account: its next
	// hold is refused until the window has passed (0: off).
	VelocityWindow time.Duration
	VelocityMax    int
}

func (p *Declines) read(r *reader) {
	p.DeclineWindow = r.duration("CATRACA_DECLINE_WINDOW", 15*time.Minute)
	p.DeclineSlowDelay = r.duration("CATRACA_DECLINE_SLOW_DELAY", 30*time.Second)
	p.DeclineBlockFor = r.duration("CATRACA_DECLINE_BLOCK_FOR", time.Hour)
	p.AccountSlowAfter = r.integer("CATRACA_ACCOUNT_DECLINES_SLOW", 3)
	p.AccountBlockAfter = r.integer("CATRACA_ACCOUNT_DECLINES_BLOCK", 6)
	p.AddressSlowAfter = r.integer("CATRACA_ADDRESS_DECLINES_SLOW", 10)
	p.AddressBlockAfter = r.integer("CATRACA_ADDRESS_DECLINES_BLOCK", 30)
	p.NoCardLimit = !r.boolean("CATRACA_CARD_LIMIT", true)
	p.NoClusterLimit = !r.boolean("CATRACA_CLUSTER_LIMIT", true)
	p.VelocityWindow = r.duration("CATRACA_VELOCITY_WINDOW", 7*24*time.Hour)
	p.VelocityMax = r.integer("CATRACA_VELOCITY_MAX", 24)
}

// Edge is the CloudFront KeyValueStore the edge function reads.
type Edge struct {
	// EdgeKVSARN, when set, is the store the admit function keeps in sync
	// (signing keys, gated events).
	EdgeKVSARN string
}

func (p *Edge) read(r *reader) { p.EdgeKVSARN = r.str("CATRACA_EDGE_KVS_ARN", "") }

// Key is one HMAC key with the id that travels in the JWT header.
type Key struct {
	ID     string
	Secret []byte
}

// part is one group of settings; read fills it through r.
type part interface{ read(r *reader) }

// Load reads configuration T (Config, or one function's, such as Sweep)
// from the process environment.
func Load[T any]() (T, error) { return FromLookup[T](os.LookupEnv) }

// FromLookup reads configuration T through lookup, so tests can pass a map.
func FromLookup[T any](lookup func(string) (string, bool)) (T, error) {
	var c T
	r := &reader{lookup: lookup}
	parts(&c, r)
	if err := r.err(); err != nil {
		var zero T
		return zero, err
	}
	return c, nil
}

// Var is one environment variable a configuration reads.
type Var struct {
	Name     string
	Required bool
}

// Vars lists the variables configuration c (a value such as API{}) reads,
// in the order it reads them. infra/stacks gives each function exactly
// these.
func Vars(c any) []Var {
	v := reflect.New(reflect.TypeOf(c))
	r := &reader{lookup: func(string) (string, bool) { return "", false }}
	parts(v.Interface(), r)
	return r.vars
}

// parts reads every part of the struct ptr points at (or ptr itself).
func parts(ptr any, r *reader) {
	if p, ok := ptr.(part); ok {
		p.read(r)
		return
	}
	v := reflect.ValueOf(ptr).Elem()
	if v.Kind() != reflect.Struct {
		panic(fmt.Sprintf("config: %T is not a configuration", ptr))
	}
	for i := range v.NumField() {
		p, ok := v.Field(i).Addr().Interface().(part)
		if !ok {
			panic(fmt.Sprintf("config: field %s of %T is not a part", v.Type().Field(i).Name, ptr))
		}
		p.read(r)
	}
}

// DefaultChallenge is the challenge part as an environment without its
// variables reads it (proof-of-work on): for configurations built in code.
func DefaultChallenge() Challenge {
	c, _ := FromLookup[Challenge](func(string) (string, bool) { return "", false })
	return c
}
