package token

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/catraca/catraca/shared/rediskey"
)

// Revocations remember logged-out sessions by token id (jti) in Redis until
// the tokens would have expired anyway.
type Revocations struct {
	rdb    redis.UniversalClient
	prefix string
}

// NewRevocations keeps revocations under prefix in rdb.
func NewRevocations(rdb redis.UniversalClient, prefix string) *Revocations {
	return &Revocations{rdb: rdb, prefix: prefix}
}

// RevokedKey marks a logged-out session, in its account's slot
// (rediskey.Account): the session check reads it with the account's block
// and velocity flag in one MGET (fairness.Service.Standing).
func RevokedKey(prefix string, c Claims) string {
	return rediskey.Account(prefix, c.Account) + "revoked:" + c.ID
}

// Revoke refuses the session c from now until a second past its expiry.
func (v *Revocations) Revoke(ctx context.Context, c Claims) error {
	return v.rdb.Set(ctx, RevokedKey(v.prefix, c), 1, time.Until(c.Expires)+time.Second).Err()
}
