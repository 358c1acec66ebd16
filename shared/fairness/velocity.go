package fairness

import (
	"context"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/catraca/catraca/shared/catalogstore"
	"github.com/catraca/catraca/shared/rediskey"
	"github.com/catraca/catraca/shared/token"
)

// BlockedKey is the Redis copy of an account's block; FlagKey holds its
// velocity count while it is over the threshold. Both are in the
// account's slot, with its session revocations, so the session check
// reads all three in one MGET.
func BlockedKey(prefix string, account int64) string {
	return rediskey.Account(prefix, account) + "blocked"
}

// FlagKey: see BlockedKey.
func FlagKey(prefix string, account int64) string {
	return rediskey.Account(prefix, account) + "velocity"
}

// deviceFlagKey holds a device's velocity count while it is over the
// threshold: a fresh account on a flagged device is flagged too.
func (s *Service) deviceFlagKey(device string) string {
	return s.prefix + "fair:device:" + device + ":velocity"
}

// seriesKey is the sliding window of one signal's purchases.
func (s *Service) seriesKey(signal, value string) string {
	return s.prefix + "fair:" + signal + ":" + value + ":buys"
}

// slide records a purchase (member, at now ms) in a one-key sliding
// window and returns how many purchases the window holds.
var slide = redis.NewScript(`
redis.call('ZADD', KEYS[1], ARGV[1], ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', tonumber(ARGV[1]) - tonumber(ARGV[2]))
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return redis.call('ZCARD', KEYS[1])`)

// Purchased counts a paid order against the velocity windows of its
// account, its card and the devices the account used within the window,
// across all events. Over the threshold, the account and its devices are
// flagged for the window (in Redis, for the next hold and join) and in
// the catalog (for the organizer's console). Retries of one order count
// once (the order is the window's member).
func (s *Service) Purchased(ctx context.Context, account, orderID int64, card string) error {
	if s.threshold <= 0 || s.window <= 0 {
		return nil
	}
	devices, err := catalogstore.RecentDevices(ctx, s.db, account, s.window.String())
	if err != nil {
		return err
	}
	type series struct{ signal, value string }
	all := []series{{"account", strconv.FormatInt(account, 10)}}
	if card != "" {
		all = append(all, series{Card, card})
	}
	for _, d := range devices {
		all = append(all, series{Device, d})
	}
	now, member := s.now().UnixMilli(), strconv.FormatInt(orderID, 10)
	most, by := 0, ""
	for _, x := range all {
		n, err := slide.Run(ctx, s.redis, []string{s.seriesKey(x.signal, x.value)}, now, s.window.Milliseconds(), member).Int()
		if err != nil {
			return err
		}
		if n > most {
			most, by = n, x.signal
		}
	}
	if most <= s.threshold {
		return nil
	}
	if err := s.redis.Set(ctx, FlagKey(s.prefix, account), most, s.window).Err(); err != nil {
		return err
	}
	for _, d := range devices {
		if err := s.redis.Set(ctx, s.deviceFlagKey(d), most, s.window).Err(); err != nil {
			return err
		}
	}
	return catalogstore.SetFlag(ctx, s.db, account, most, by)
}

// Verdict is what the door of the line may ask about a fan: blocked by
// an organizer, and the purchases the velocity rule counted (Flagged when
// over the threshold).
type Verdict struct {
	Blocked   bool
	Purchases int
	Flagged   bool
}

// Check reads an account's block and velocity flag (an MGET in its slot)
// and, when device is set, the device's flag (a GET), in one pipeline: the
// hook the waiting room's join calls (Flag) to ask a flagged fan, or a
// fresh account on a flagged device, for a challenge. It reads Redis only,
// never the catalog.
func (s *Service) Check(ctx context.Context, account int64, device string) (Verdict, error) {
	var dev *redis.StringCmd
	p := s.redis.Pipeline()
	mget := p.MGet(ctx, BlockedKey(s.prefix, account), FlagKey(s.prefix, account))
	if device != "" && ValidDeviceID(device) {
		dev = p.Get(ctx, s.deviceFlagKey(device))
	}
	if _, err := p.Exec(ctx); err != nil && err != redis.Nil {
		return Verdict{}, err
	}
	vals, err := mget.Result()
	if err != nil {
		return Verdict{}, err
	}
	v := Verdict{Blocked: vals[0] != nil, Purchases: count(vals[1])}
	if dev != nil {
		v.Purchases = max(v.Purchases, count(dev.Val()))
	}
	v.Flagged = s.over(v.Purchases)
	return v, nil
}

// over says whether purchases in the window are over the velocity rule's
// threshold (0: the rule is off).
func (s *Service) over(purchases int) bool { return s.threshold > 0 && purchases > s.threshold }

// Velocity is the purchases counted against account (or device) within
// the window, and whether that is over the threshold: Check without the
// block, for a risk score.
func (s *Service) Velocity(ctx context.Context, account int64, device string) (int, bool, error) {
	v, err := s.Check(ctx, account, device)
	return v.Purchases, v.Flagged, err
}

// FlagPoints is what a velocity flag adds to a join's risk score.
const FlagPoints = 2

// Flag is the velocity port of the join's risk score (risk.VelocityPort):
// FlagPoints when the account, or the device it joins from, is over the
// threshold (Check), else 0. A Redis that does not answer flags nobody:
// the score is a hint, and the flagged account's next hold is refused
// anyway (Standing).
func (s *Service) Flag(ctx context.Context, account int64, device string) int {
	if s.threshold <= 0 {
		return 0
	}
	if v, err := s.Check(ctx, account, device); err == nil && v.Flagged {
		return FlagPoints
	}
	return 0
}

// Window is the velocity window (for messages).
func (s *Service) Window() time.Duration { return s.window }

func count(v any) int {
	str, _ := v.(string)
	n, _ := strconv.Atoi(str)
	return n
}

// Standing is what the session check reads of an account: whether the
// session was logged out, whether the account is blocked, and whether it
// is over the velocity threshold.
type Standing struct {
	Revoked, Blocked, Flagged bool
}

// Standing reads the standing of session c: its revocation
// (token.RevokedKey), the account's block and its velocity flag, all in
// the account's slot, in one MGET (as many round trips as the EXISTS of
// the revocation alone).
func (s *Service) Standing(ctx context.Context, c token.Claims) (Standing, error) {
	vals, err := s.redis.MGet(ctx, token.RevokedKey(s.prefix, c), BlockedKey(s.prefix, c.Account), FlagKey(s.prefix, c.Account)).Result()
	if err != nil {
		return Standing{}, err
	}
	return Standing{Revoked: vals[0] != nil, Blocked: vals[1] != nil, Flagged: s.over(count(vals[2]))}, nil
}
