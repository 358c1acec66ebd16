package app

import (
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/catraca/catraca/shared/api/room"
	"github.com/catraca/catraca/shared/challenge"
	"github.com/catraca/catraca/shared/config"
	"github.com/catraca/catraca/shared/risk"
)

// NewLineDoor is the waiting room's challenge door the configuration asks
// for (docs/fairness.md); nil when it is off. The velocity flag is read
// only for joins already looked at closer (a clean join stays one Redis
// round trip); the velocity rule pauses the flagged account's holds too.
func NewLineDoor(c config.Config, rdb redis.UniversalClient, velocity risk.VelocityPort) *room.Door {
	ch := c.Challenge
	if ch.ChallengeMode == "off" || ch.ChallengeMode == "" || rdb == nil {
		return nil
	}
	return &room.Door{Port: challengePort(c, rdb), Velocity: velocity, Now: time.Now, Counter: &risk.Counter{Redis: rdb, Prefix: c.RedisPrefix},
		Rules: risk.Rules{NewAccount: ch.RiskNewAccount, DeviceJoins: int64(ch.RiskDeviceJoins), NetJoins: int64(ch.RiskNetJoins),
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
