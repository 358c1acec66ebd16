package api

import (
	"errors"
	"net/http"
	"net/netip"
	"time"

	"github.com/catraca/catraca/shared/account"
	"github.com/catraca/catraca/shared/challenge"
	"github.com/catraca/catraca/shared/config"
	"github.com/catraca/catraca/shared/problem"
	"github.com/catraca/catraca/shared/risk"
	"github.com/catraca/catraca/shared/token"
	"github.com/redis/go-redis/v9"
)

// lineDoor is the adaptive challenge in front of the waiting room's line: a
// join is scored from cheap signals, and a risky one must pass the
// challenge before it gets a place (docs/fairness.md). Clean traffic pays
// nothing: its signals come from the session token and the headers.
type lineDoor struct {
	port     challenge.Port
	rules    risk.Rules
	counter  *risk.Counter
	velocity risk.VelocityPort
	now      func() time.Time
}

// newLineDoor builds the door the configuration asks for; nil when it is off.
// port, when set, replaces the configured challenge (tests, the simulator).
func newLineDoor(c config.Config, rdb redis.UniversalClient, port challenge.Port, velocity risk.VelocityPort) *lineDoor {
	ch := c.Challenge
	if ch.ChallengeMode == "off" || ch.ChallengeMode == "" && port == nil || rdb == nil {
		return nil
	}
	if ch.ChallengeMode == "" { // a port given in code: the default rules
		ch = config.DefaultChallenge()
	}
	if port == nil {
		port = challengePort(c, rdb)
	}
	if velocity == nil {
		velocity = risk.NoVelocity{}
	}
	return &lineDoor{port: port, velocity: velocity, now: time.Now, counter: &risk.Counter{Redis: rdb, Prefix: c.RedisPrefix},
		rules: risk.Rules{NewAccount: ch.RiskNewAccount, DeviceJoins: int64(ch.RiskDeviceJoins), NetJoins: int64(ch.RiskNetJoins),
			Threshold: ch.ChallengeThreshold, LookCloser: ch.ChallengeLookCloser}}
}

// challengePort is the configured challenge: proof-of-work, signed with
// the admission keys (the waiting room's own), or a hosted CAPTCHA.
func challengePort(c config.Config, rdb redis.UniversalClient) challenge.Port {
	ch := c.Challenge
	switch ch.ChallengeMode {
	case string(challenge.KindTurnstile), string(challenge.KindHCaptcha):
		return &challenge.Hosted{Kind: challenge.Kind(ch.ChallengeMode), SiteKey: ch.ChallengeSiteKey, Secret: ch.ChallengeSecret, TTL: ch.ChallengeTTL}
	}
	keys := make([][]byte, 0, len(c.AdmissionKeys))
	for _, k := range c.AdmissionKeys {
		// A key of its own, derived: a puzzle is never a valid admission token.
		keys = append(keys, challengeKey(k.Secret))
	}
	if len(keys) == 0 {
		keys = append(keys, challengeKey(nil))
	}
	return challenge.NewPoW(keys, rdb, c.RedisPrefix, ch.ChallengeTTL, challenge.Difficulty{
		Threshold: ch.ChallengeThreshold, Base: ch.ChallengeBits, Step: ch.ChallengeBitsStep, Max: ch.ChallengeBitsMax})
}

func challengeKey(secret []byte) []byte {
	return append([]byte("catraca challenge v1\x00"), secret...)
}

// joinAnswer is the optional body of a join: a solved challenge.
type joinAnswer = challenge.Answer

// pass lets a join through the door, or refuses it with the challenge to
// solve (428 challenge-required) or the reason its answer failed (403
// challenge-failed). A fan holding a valid queue ticket for this event
// already passed: its place is not questioned again.
func (d *lineDoor) pass(r *http.Request, sess token.Claims, eventID, restore int64) error {
	if d == nil || restore > 0 {
		return nil
	}
	ip, _ := clientIP(r)
	subject := challenge.Subject{Account: sess.Account, Event: eventID, RemoteIP: ip}
	var a joinAnswer
	if sent, err := decodeOptional(r, &a); err != nil {
		return err
	} else if sent && (a.Token != "" || a.Solution != "") {
		return d.verify(r, subject, a)
	}
	sig := risk.Signals{Bot: r.Header.Get(risk.BotHeader), Velocity: d.velocity.Flag(r.Context(), sess.Account)}
	if sess.Since > 0 {
		sig.Since = time.Unix(sess.Since, 0)
	}
	if c, err := r.Cookie(risk.DeviceCookie); err == nil {
		sig.Device = c.Value
	}
	now := d.now()
	score := d.rules.Free(sig, now)
	if d.rules.NeedsCounts(score) {
		var err error
		sig.DeviceJoins, sig.NetJoins, err = d.counter.Count(r.Context(), eventID, sig.Device, viewerNetwork(ip), now)
		if err != nil {
			return queueUnavailable(err)
		}
		score = d.rules.Counted(score, sig)
	}
	if !d.rules.Challenged(score) {
		return nil
	}
	subject.Risk = score.Points
	c, err := d.port.Issue(subject)
	if err != nil {
		return err
	}
	return problem.New(http.StatusPreconditionRequired, "challenge-required",
		"Before you get a place in line, this page has a short check to do. It runs by itself; keep the page open.").
		With("challenge", c).With("risk", score.Reasons.String())
}

// verify checks a solved challenge; one that passes lets the join in.
func (d *lineDoor) verify(r *http.Request, s challenge.Subject, a joinAnswer) error {
	err := d.port.Verify(r.Context(), s, a)
	var no *challenge.Refused
	switch {
	case err == nil:
		return nil
	case errors.As(err, &no):
		return problem.New(http.StatusForbidden, "challenge-failed", no.Detail).With("reason", no.Reason)
	case errors.Is(err, challenge.ErrUnavailable):
		return queueUnavailable(err)
	}
	return err
}

// viewerNetwork is the /24 (or /64) of a viewer's address, or "" for an
// address that is not a viewer's network: loopback and private ones are a
// proxy's or a test's.
func viewerNetwork(ip string) string {
	a, err := netip.ParseAddr(ip)
	if err == nil && (a.IsLoopback() || a.IsPrivate()) {
		return ""
	}
	if p, err := netip.ParsePrefix(ip); err == nil && (p.Addr().IsLoopback() || p.Addr().IsPrivate()) {
		return ""
	}
	return risk.Network(ip)
}

// accountSince is the session claim of when the account was created (0
// when unknown): the join's account-age signal, read without a lookup.
func accountSince(a account.Account) int64 {
	if a.CreatedAt.IsZero() {
		return 0
	}
	return a.CreatedAt.Unix()
}
