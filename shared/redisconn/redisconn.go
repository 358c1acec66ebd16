// Package redisconn opens the Redis client every process uses, from the
// configuration: one node, or a Redis Cluster as ElastiCache Serverless
// always is. The code above it sees a redis.UniversalClient either way.
package redisconn

import (
	"context"
	"crypto/tls"
	"errors"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/catraca/catraca/shared/config"
)

// Open returns a client of c's Redis (it connects on first use): a
// cluster client when c says cluster or lists several addresses, which
// follows MOVED and ASK and sends each key to its slot's primary.
func Open(c config.Redis) redis.UniversalClient {
	opts := &redis.UniversalOptions{Addrs: strings.Split(c.RedisAddr, ","), IsClusterMode: c.RedisCluster,
		DialTimeout: time.Second, ReadTimeout: time.Second, WriteTimeout: time.Second, MaxRetries: 1, PoolSize: 64,
		// A refused dial is a dead node: fail (closed) now rather than
		// after go-redis's five tries.
		DialerRetries: 1}
	if c.RedisTLS {
		opts.TLSConfig = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	if !c.RedisCluster && len(opts.Addrs) == 1 {
		return redis.NewClient(opts.Simple())
	}
	co := opts.Cluster()
	// A backstop: the hook below reloads on the first failure.
	co.ClusterStateReloadInterval = 5 * time.Second
	cc := redis.NewClusterClient(co)
	cc.AddHook(reloadOnFailure{cc})
	return cc
}

// reloadOnFailure asks the cluster for its slots again when a node fails
// to answer. go-redis reloads them on MOVED, which a dead primary never
// sends, and otherwise once a minute: after a primary died, every command
// for its slots went to it, refused, for up to a minute after its
// replica had taken over (TestFailoverKeepsPlaces).
type reloadOnFailure struct{ c *redis.ClusterClient }

func (h reloadOnFailure) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h reloadOnFailure) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		h.check(ctx, err)
		return err
	}
}

func (h reloadOnFailure) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		h.check(ctx, err)
		return err
	}
}

// check reloads the slots (at most every 200 ms: go-redis coalesces) on
// a failure that is not the server's answer, or a cluster that is down.
func (h reloadOnFailure) check(ctx context.Context, err error) {
	var reply redis.Error
	if err == nil || errors.Is(err, redis.Nil) || (errors.As(err, &reply) && !redis.HasErrorPrefix(err, "CLUSTERDOWN")) {
		return
	}
	h.c.ReloadState(ctx)
}
