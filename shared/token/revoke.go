package token

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"
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

func (v *Revocations) key(jti string) string { return v.prefix + "revoked:" + jti }

// Revoke refuses the token jti from now until a second past until.
func (v *Revocations) Revoke(ctx context.Context, jti string, until time.Time) error {
	return v.rdb.Set(ctx, v.key(jti), 1, time.Until(until)+time.Second).Err()
}

// Revoked tells whether the token jti was revoked.
func (v *Revocations) Revoked(ctx context.Context, jti string) (bool, error) {
	n, err := v.rdb.Exists(ctx, v.key(jti)).Result()
	return n > 0, err
}
