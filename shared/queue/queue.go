// Package queue is the virtual waiting room: a per-event sorted set in
// Redis, a fair random draw of everyone who arrived before the sale, FIFO
// after it, and an admission controller that lets fans in up to a ceiling of
// active shoppers. Every key of an event shares the hash tag {evt:ID}, so
// each Lua script runs on one Redis Cluster slot.
package queue

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/catraca/catraca/shared/event"
)

// ErrUnavailable means Redis could not be reached: the room fails closed.
var ErrUnavailable = errors.New("waiting room unavailable")

// SlowDown is the error of a join or status call whose account spent its
// bucket (fanBurst, then fanRefill a second): retry after Wait.
type SlowDown struct{ Wait time.Duration }

func (e SlowDown) Error() string {
	return "waiting-room calls too frequent: retry in " + e.Wait.String()
}

// The bucket every account spends from on joins and status calls, per
// event: a browser polls far below it, a refresh loop does not.
const (
	fanBurst  = 20
	fanRefill = 0.5 // tokens per second
)

// State is where a fan stands in an event's waiting room. The join and
// status scripts return these words (TestScriptsReturnKnownStates).
type State string

// States a fan can be in.
const (
	StateClosed   State = "closed"   // no waiting room, or not configured yet
	StateNotYet   State = "notyet"   // the pre-queue is not open yet
	StatePrequeue State = "prequeue" // joined before the draw
	StateWaiting  State = "waiting"  // in line after the draw
	StateAdmitted State = "admitted" // may buy: pick up the admission token
	StateExpired  State = "expired"  // admitted earlier, token pickup window gone
	StateSoldOut  State = "soldout"
	StateNone     State = "none" // not in this queue (never joined, or abandoned)
	// StatePresale refuses a join during the event's presale from an
	// account that redeemed no presale code (see SetPresale).
	StatePresale State = "presale"
	// StateOpening is the API's, never a script's: the room's line should
	// be open but the controller has not published it yet (within a tick).
	StateOpening State = "opening"
)

// slow is the scripts' first word when the account's bucket is empty.
const slow = "slow"

// Room is the waiting room of every event, on one Redis.
type Room struct {
	rdb    redis.UniversalClient
	prefix string
	now    func() time.Time
	keyset sync.Map // event ID → *roomKeys, built once per event (see keys)
}

// New returns a room on rdb; prefix starts every key.
func New(rdb redis.UniversalClient, prefix string) *Room {
	return &Room{rdb: rdb, prefix: prefix, now: time.Now}
}

func ms(t time.Time) int64 { return t.UnixMilli() }

// SetClock replaces the room's clock, before it serves: tests step the
// waiting room's time (slot lifetimes, heartbeats, the ceiling's
// adjustments) with it instead of sleeping.
func (r *Room) SetClock(now func() time.Time) { r.now = now }

// unavailable wraps Redis errors so callers can fail closed.
func unavailable(err error) error {
	if err == nil || errors.Is(err, redis.Nil) {
		return err
	}
	return fmt.Errorf("%w: %v", ErrUnavailable, err)
}

// Settings are the per-event waiting-room settings kept in Redis, so the
// functions that take the queue spike never read the database.
type Settings struct {
	Enabled bool
	OpensAt time.Time // pre-queue opens
	DrawAt  time.Time // sale start: the draw
	// AdmitFrom is when admission starts (the draw or a little later, so
	// fans learn their places before anyone is let in).
	AdmitFrom    time.Time
	Ceiling      int // most active shoppers
	ActiveTTL    time.Duration
	AdmissionTTL time.Duration
	Abandon      time.Duration // no heartbeat for this long loses the place
	Paused       bool          // the organizer paused admission
}

// SettingsOf derives room settings from a catalog event.
func SettingsOf(e event.Event, abandon time.Duration) Settings {
	opens := e.SaleStartsAt.Add(-30 * time.Minute)
	if e.WaitingRoom.PrequeueOpensAt != nil {
		opens = *e.WaitingRoom.PrequeueOpensAt
	}
	return Settings{
		Enabled: e.WaitingRoom.Enabled && e.Status != event.Cancelled && e.Status != event.Closed,
		OpensAt: opens, DrawAt: e.SaleStartsAt, AdmitFrom: e.SaleStartsAt, Ceiling: e.WaitingRoom.Ceiling,
		ActiveTTL:    time.Duration(e.WaitingRoom.ActiveTTL) * time.Second,
		AdmissionTTL: time.Duration(e.WaitingRoom.AdmissionTTL) * time.Second,
		Abandon:      abandon,
		Paused:       e.WaitingRoom.Paused,
	}
}

// Publish writes an event's settings (the admission controller does it
// every tick, so organizers' changes reach Redis within a second). It
// reports fresh when the event had no state at all: after the sale started
// that means Redis lost it (see Recover).
func (r *Room) Publish(ctx context.Context, eventID int64, s Settings) (fresh bool, err error) {
	k := r.keys(eventID)
	enabled := "0"
	if s.Enabled {
		enabled = "1"
	}
	var created *redis.BoolCmd
	_, err = r.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.HSet(ctx, k.cfg, "enabled", enabled, "opens", ms(s.OpensAt), "draw", ms(s.DrawAt), "admit", max(ms(s.AdmitFrom), ms(s.DrawAt)), "ceiling", s.Ceiling,
			"active_ttl", s.ActiveTTL.Milliseconds(), "admission_ttl", s.AdmissionTTL.Milliseconds(), "abandon", s.Abandon.Milliseconds(),
			"paused", flag(s.Paused))
		// The status script reads these beside the state, in one HMGET.
		p.HSet(ctx, k.st, "enabled", enabled, "set_ceiling", s.Ceiling, "active_ttl", s.ActiveTTL.Milliseconds())
		created = p.HSetNX(ctx, k.st, "created", ms(r.now()))
		return nil
	})
	if err != nil {
		return false, unavailable(err)
	}
	return created.Val(), nil
}

// Place is a fan's place as Join reports it.
type Place struct {
	State State
	// Number is the fan's place number after the draw (not the position:
	// positions are dense ranks, see Status).
	Number int64
	// Position and Ahead are as in Status, while waiting in line.
	Position, Ahead int64
	// At is the draw time while in the pre-queue, the pre-queue opening, or
	// the end of the turn once admitted.
	At time.Time
	// Turn identifies the shopping turn once admitted (see Status.Turn).
	Turn int64
}

// fanCall runs the join or status script for account: one round trip,
// which also spends from the account's bucket. A restore place of 0 is
// not sent.
func (r *Room) fanCall(ctx context.Context, s fanScript, eventID, account, restore int64, now time.Time) ([]any, error) {
	args := []any{account, ms(now), restore}
	if restore <= 0 {
		args = args[:2]
	}
	v, err := r.runFan(ctx, s, eventID, account, args...).Slice()
	if err != nil {
		return nil, unavailable(err)
	}
	if v[0] == slow {
		return nil, SlowDown{Wait: time.Duration(asInt(v[1])) * time.Millisecond}
	}
	return v, nil
}

// asInt reads a number the scripts return: an integer, or a number as
// Redis stored it (a string).
func asInt(v any) int64 {
	switch n := v.(type) {
	case int64:
		return n
	case string:
		i, _ := strconv.ParseInt(n, 10, 64)
		return i
	}
	return 0
}

// Join puts account in line once; a repeated join returns the same place.
// restore is the place number of a signed queue ticket (0 if none): when
// Redis lost the queue, the fan goes back near their place. It is one
// round trip, and SlowDown when the account calls too often.
func (r *Room) Join(ctx context.Context, eventID, account, restore int64) (Place, error) {
	v, err := r.fanCall(ctx, joinScript, eventID, account, restore, r.now())
	if err != nil {
		return Place{}, err
	}
	p := Place{State: State(v[0].(string))}
	switch p.State {
	case StateWaiting:
		p.Number, p.Ahead = asInt(v[1]), asInt(v[2])
		p.Position = p.Ahead + 1
	case StatePrequeue, StateNotYet, StateAdmitted, StatePresale:
		p.At = time.UnixMilli(asInt(v[1])).UTC()
	}
	if p.State == StateAdmitted {
		p.Turn = asInt(v[2])
	}
	return p, nil
}

// Status is what a fan sees while waiting.
type Status struct {
	State     State
	Position  int64 // dense rank, 1 = next
	Ahead     int64
	ETA       time.Duration
	AdmitTill time.Time // end of the turn once admitted: the admission token's expiry
	// Turn identifies the shopping turn once admitted: the place number it
	// was admitted from (a place is used once). Admission tokens carry it,
	// and CheckHold accepts only the current turn's.
	Turn int64
}

// Status reports account's state and counts as a heartbeat: one round
// trip, ETA included, and SlowDown when the account calls too often.
func (r *Room) Status(ctx context.Context, eventID, account, restore int64) (Status, error) {
	now := r.now()
	v, err := r.fanCall(ctx, statusScript, eventID, account, restore, now)
	if err != nil {
		return Status{}, err
	}
	st := Status{State: State(v[0].(string)), Position: asInt(v[1]), Ahead: asInt(v[2])}
	if exp := asInt(v[3]); exp > 0 {
		st.AdmitTill = time.UnixMilli(exp).UTC()
	}
	if st.State == StateAdmitted {
		st.Turn = asInt(v[4])
	}
	if st.State == StateWaiting {
		var p Progress
		p.setRate(asInt(v[5]), asInt(v[6]), now)
		p.setCeiling(asInt(v[7]), asInt(v[8]), asInt(v[9]))
		st.ETA = p.ETA(st.Ahead)
	}
	return st, nil
}

// Progress is the per-event picture every waiting fan shares; it is
// cacheable for a second or two at the edge.
type Progress struct {
	Phase      string    `json:"phase"` // "" (before the draw), drawing, drawn
	DrawAt     time.Time `json:"draw_at"`
	AdmitAt    time.Time `json:"admission_starts_at"`
	Served     int64     `json:"served"` // highest place number admitted so far
	Waiting    int64     `json:"waiting"`
	Prequeue   int64     `json:"prequeue"`
	Active     int64     `json:"active"`
	Ceiling    int64     `json:"ceiling"`
	Admitted   int64     `json:"admitted_total"`
	Abandoned  int64     `json:"abandoned_total"`
	RatePerMin int64     `json:"admitted_last_minute"`
	SoldOut    bool      `json:"sold_out"`
	// Paused: the organizer paused admission; places are kept.
	Paused       bool  `json:"paused"`
	ActiveTTLSec int64 `json:"-"`
}

// ETA estimates how long ahead fans take to be admitted: from the measured
// rate when there is one, else from the ceiling turning over once per
// active-session lifetime.
func (p Progress) ETA(ahead int64) time.Duration {
	perMin := float64(p.RatePerMin)
	if perMin <= 0 && p.Ceiling > 0 && p.ActiveTTLSec > 0 {
		perMin = float64(p.Ceiling) * 60 / float64(p.ActiveTTLSec)
	}
	if perMin <= 0 {
		return 0
	}
	return time.Duration(math.Ceil(float64(ahead)/perMin*60)) * time.Second
}

// setRate sets the measured admission rate: the admissions of the minute
// up to the last tick (at, ms), none when that tick is a minute old.
func (p *Progress) setRate(admitted, at int64, now time.Time) {
	if ms(now)-at < time.Minute.Milliseconds() {
		p.RatePerMin = admitted
	}
}

// setCeiling sets the ceiling in force, the adaptive one within the
// configured one, and the active-session lifetime.
func (p *Progress) setCeiling(configured, adaptive, activeTTLms int64) {
	p.Ceiling, p.ActiveTTLSec = configured, activeTTLms/1000
	if adaptive > 0 && adaptive < configured {
		p.Ceiling = adaptive
	}
}

// Progress reads the shared counters of an event.
func (r *Room) Progress(ctx context.Context, eventID int64) (Progress, error) {
	k := r.keys(eventID)
	var cfg, st *redis.SliceCmd
	var waiting, pre, active *redis.IntCmd
	now := r.now()
	_, err := r.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		cfg = p.HMGet(ctx, k.cfg, "draw", "ceiling", "active_ttl", "admit", "paused")
		st = p.HMGet(ctx, k.st, "phase", "served", "ceiling", "admitted", "abandoned", "soldout", "rate", "rate_at")
		waiting = p.ZCard(ctx, k.q)
		pre = p.SCard(ctx, k.pre)
		active = p.ZCount(ctx, k.active, strconv.FormatInt(ms(now), 10), "+inf")
		return nil
	})
	if err != nil {
		return Progress{}, unavailable(err)
	}
	num := func(v any) int64 {
		s, _ := v.(string)
		n, _ := strconv.ParseInt(s, 10, 64)
		return n
	}
	c, s := cfg.Val(), st.Val()
	p := Progress{
		DrawAt: time.UnixMilli(num(c[0])).UTC(), AdmitAt: time.UnixMilli(num(c[3])).UTC(),
		Served: num(s[1]), Admitted: num(s[3]), Abandoned: num(s[4]), SoldOut: num(s[5]) == 1, Paused: num(c[4]) == 1,
		Waiting: waiting.Val(), Prequeue: pre.Val(), Active: active.Val(),
	}
	p.Phase, _ = s[0].(string)
	p.setCeiling(num(c[1]), num(s[2]), num(c[2]))
	p.setRate(num(s[6]), num(s[7]), now)
	return p, nil
}

// Leave takes a fan out of the room at once (purchase completed, or the
// fan is done or gave up): its active slot goes to the next fan. Releasing
// a hold does not leave: the turn goes on.
func (r *Room) Leave(ctx context.Context, eventID, account int64) error {
	return unavailable(leaveScript.run(ctx, r, eventID, account, account).Err())
}

// ErrTurnOver means an account's shopping turn in a waiting room has ended
// (it left, bought, or its slot expired): its admission token buys nothing.
var ErrTurnOver = errors.New("shopping turn over")

// Admission is what an admission token says: the turn it belongs to (see
// Status.Turn; 0 for an event without a waiting room) and its expiry.
type Admission struct {
	Turn    int64
	Expires time.Time
}

// PresaleOnly refuses a hold without an admission, during the event's
// presale, from an account that redeemed no code (see SetPresale).
type PresaleOnly struct {
	Until time.Time // the presale's end: everyone may buy from then on
}

func (p *PresaleOnly) Error() string {
	return "presale until " + p.Until.UTC().Format(time.RFC3339) + ": no presale code redeemed"
}

// CheckHold vets one hold attempt in a single round trip: in a gated room
// the admission's turn must be the account's open shopping turn
// (ErrTurnOver otherwise); without one, during a presale the account must
// have redeemed a code (*PresaleOnly otherwise); and every account spends
// one token of its hold bucket for the event (capacity, refill per
// second). It returns how long to wait when that bucket is empty.
func (r *Room) CheckHold(ctx context.Context, eventID, account int64, adm Admission, capacity int, perSecond float64) (time.Duration, error) {
	wait, err := holdScript.run(ctx, r, eventID, account, account, ms(r.now()), adm.Turn, ms(adm.Expires), capacity, perSecond).Int64()
	switch {
	case err != nil:
		return 0, unavailable(err)
	case wait == -1:
		return 0, ErrTurnOver
	case wait < 0:
		return 0, &PresaleOnly{Until: time.UnixMilli(-wait)}
	}
	return time.Duration(wait) * time.Millisecond, nil
}

// Shuffle permutes members with Fisher–Yates driven by crypto/rand, so no
// fan can predict or influence the draw.
func Shuffle(members []string) {
	for i := len(members) - 1; i > 0; i-- {
		j := int(uniform(uint64(i + 1)))
		members[i], members[j] = members[j], members[i]
	}
}

// uniform returns a crypto-random integer in [0, n) without modulo bias.
func uniform(n uint64) uint64 {
	limit := math.MaxUint64 - math.MaxUint64%n
	var b [8]byte
	for {
		rand.Read(b[:])
		if v := binary.LittleEndian.Uint64(b[:]); v < limit {
			return v % n
		}
	}
}
