// Package risk scores a waiting-room join from cheap signals, so that only
// risky joins meet a challenge and clean traffic passes without noticing.
// The free signals (from the session token and the request's headers) are
// scored first; the join counters, which cost a Redis round trip, are read
// only when those already look suspicious (docs/fairness.md).
package risk

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// DeviceCookie is the first-party, HttpOnly, long-lived random cookie set at
// sign-up and log-in (docs/accounts.md). A browser that went through either
// carries it; a join without it is a signal.
const DeviceCookie = "catraca_device"

// BotHeader carries the WAF's bot label to the origin: the web ACL's
// "BotLabelToOrigin" rule counts requests that AWS WAF Bot Control labelled
// and inserts this header (WAF prefixes custom request headers with
// x-amzn-waf-); CloudFront forwards it with the viewer's headers.
const BotHeader = "X-Amzn-Waf-Catraca-Bot"

// Reason is one signal that added to a score (a bit set).
type Reason uint16

// The signals.
const (
	NewAccount Reason = 1 << iota
	UnverifiedEmail
	NoDevice
	BotLabel
	Velocity
	DeviceBurst
	NetBurst
)

var reasonNames = []string{"new-account", "unverified-email", "no-device", "bot-label", "velocity", "device-burst", "net-burst"}

func (r Reason) String() string {
	var names []string
	for i, n := range reasonNames {
		if r&(1<<i) != 0 {
			names = append(names, n)
		}
	}
	return strings.Join(names, ",")
}

// Signals are what a join tells about its fan.
type Signals struct {
	// Since is when the account was created (zero: unknown, e.g. a session
	// issued before the claim existed; unknown scores nothing).
	Since time.Time
	// EmailKnown says whether EmailVerified means anything (the session's
	// emv claim; a session issued before it existed says nothing).
	EmailKnown, EmailVerified bool
	Device                    string // the device cookie the session was issued with, "" if absent or another
	Bot                       string // the WAF's label header, "" if absent
	Velocity                  int    // the velocity port's flag (0: none)
	// Counted by Counter, only when the free signals reach LookCloser.
	DeviceJoins, NetJoins int64
}

// Rules weigh the signals. Every signal adds 1 except a bot label (3), a
// device's burst of joins (2: one device is one person, unlike a /24) and a
// velocity flag (its value).
type Rules struct {
	NewAccount            time.Duration
	DeviceJoins, NetJoins int64 // per event and minute, above which it is a burst
	Threshold, LookCloser int
}

// Score is a join's risk.
type Score struct {
	Points  int
	Reasons Reason
}

func (s *Score) add(r Reason, points int) {
	s.Points += points
	s.Reasons |= r
}

// Free scores the signals that cost nothing to read.
func (r Rules) Free(s Signals, now time.Time) Score {
	var sc Score
	if !s.Since.IsZero() && now.Sub(s.Since) < r.NewAccount {
		sc.add(NewAccount, 1)
	}
	if s.EmailKnown && !s.EmailVerified {
		sc.add(UnverifiedEmail, 1)
	}
	if s.Device == "" {
		sc.add(NoDevice, 1)
	}
	if s.Bot != "" {
		sc.add(BotLabel, 3)
	}
	return sc
}

// Counted adds the signals that cost a Redis round trip (the join
// counters, the velocity flag) to a free score.
func (r Rules) Counted(sc Score, s Signals) Score {
	if s.Velocity > 0 {
		sc.add(Velocity, s.Velocity)
	}
	if s.DeviceJoins > r.DeviceJoins {
		sc.add(DeviceBurst, 2)
	}
	if s.NetJoins > r.NetJoins {
		sc.add(NetBurst, 1)
	}
	return sc
}

// NeedsCounts says whether a free score is worth a Redis round trip.
func (r Rules) NeedsCounts(sc Score) bool {
	return sc.Points >= r.LookCloser && sc.Points < r.Threshold
}

// Challenged says whether a score must pass a challenge.
func (r Rules) Challenged(sc Score) bool { return sc.Points >= r.Threshold }

// VelocityPort flags an account that buys across events faster than a fan
// does (issue 31 §1): the points its flag adds to a join's score. The door
// asks it only for joins already looked at closer.
type VelocityPort interface {
	Flag(ctx context.Context, account int64, device string) int
}

// Counter counts one event's joins per device and per network in fixed
// one-minute windows. Both counters carry the event's hash tag, so the
// pipeline goes to one cluster node: one round trip.
type Counter struct {
	Redis  redis.UniversalClient
	Prefix string
}

// Count adds a join from device (may be "") and network and returns the
// counts of this minute, this join included.
func (c *Counter) Count(ctx context.Context, event int64, device, network string, now time.Time) (deviceJoins, netJoins int64, err error) {
	base := c.Prefix + "joins:{risk:" + strconv.FormatInt(event, 10) + "}:" + strconv.FormatInt(now.Unix()/60, 10) + ":"
	var dev, net *redis.IntCmd
	_, err = c.Redis.Pipelined(ctx, func(p redis.Pipeliner) error {
		if device != "" {
			dev = p.Incr(ctx, base+"d:"+digest(device))
			p.Expire(ctx, base+"d:"+digest(device), 2*time.Minute)
		}
		if network != "" {
			net = p.Incr(ctx, base+"n:"+network)
			p.Expire(ctx, base+"n:"+network, 2*time.Minute)
		}
		return nil
	})
	if dev != nil {
		deviceJoins = dev.Val()
	}
	if net != nil {
		netJoins = net.Val()
	}
	return deviceJoins, netJoins, err
}

// DeviceDigest is what a session keeps of the device cookie it was issued
// with (the token's dev claim): the join compares the cookie it gets with
// it, so a made-up cookie counts as none, with no lookup.
func DeviceDigest(device string) string { return digest(device) }

// digest keeps a key short and free of whatever a forged cookie holds.
func digest(v string) string {
	sum := sha256.Sum256([]byte(v))
	return hex.EncodeToString(sum[:8])
}

// Network is the /24 of an IPv4 address, or the /64 an IPv6 one is
// already cut to: carriers and offices put many fans behind one, so it is
// a weak signal with a high threshold.
func Network(ip string) string {
	if i := strings.LastIndexByte(ip, '.'); i > 0 && !strings.Contains(ip, ":") {
		return ip[:i] + ".0/24"
	}
	return ip
}
