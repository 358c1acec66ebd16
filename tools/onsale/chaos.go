package onsale

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/catraca/catraca/shared/rediskey"
	"github.com/catraca/catraca/tools/localenv"
	"github.com/catraca/catraca/tools/pspsim"
)

// Chaos modes Run understands.
var ChaosModes = []string{"redis-kill", "redis-failover", "pg-restart", "psp-outage", "dup-webhooks", "slow-psp"}

// startChaos sets the PSP's rate limit, starts the chosen fault a few
// seconds into admission and returns a func that undoes what is still in
// effect.
func (r *run) startChaos(ctx context.Context, admitting time.Time) (undo func()) {
	sim := r.st.Sim
	base := pspsim.Faults{RatePerSecond: r.o.PSPRate}
	sim.SetFaults(base)
	settle := time.Until(admitting) + 5*time.Second
	undo = func() {}
	// A fault that has begun runs to its end before the report is made,
	// however soon the sale sells out (its last events are in the
	// report); one not begun by then never begins.
	var faults sync.WaitGroup
	stop := make(chan struct{})
	after := func(d time.Duration, fn func()) {
		faults.Go(func() {
			select {
			case <-time.After(d):
				fn()
			case <-ctx.Done():
			case <-stop:
			}
		})
	}
	switch r.o.Chaos {
	case "":
	case "redis-kill":
		after(settle, func() {
			slog.Info("chaos: killing Redis")
			r.rep.chaos("redis killed")
			if err := r.env.KillRedis(); err != nil {
				slog.Error("kill redis", "err", err)
			}
			time.Sleep(3 * time.Second)
			if err := r.env.StartRedis(ctx); err != nil {
				slog.Error("start redis", "err", err)
			}
			r.rep.chaos("redis back")
		})
	case "redis-failover":
		// The event's slot fails over twice on the Redis Cluster: as an
		// operator would (CLUSTER FAILOVER), then by its primary dying.
		key := rediskey.Event(r.st.App.Config.RedisPrefix, r.event)
		c := r.o.Cluster
		after(settle, func() {
			if c == nil {
				slog.Error("redis-failover needs Options.Cluster: no failover")
				return
			}
			r.rep.chaos("redis failover")
			if err := c.Failover(ctx, key); err != nil {
				slog.Error("redis failover", "err", err)
			}
			r.rep.chaos("redis failed over")
			time.Sleep(3 * time.Second)
			primary, _, err := c.SlotNodes(ctx, key)
			if err == nil {
				err = c.KillNode(localenv.PortOf(primary))
			}
			if err != nil {
				slog.Error("kill redis primary", "err", err)
				return
			}
			r.rep.chaos("redis primary killed")
			for ctx.Err() == nil {
				if now, _, _ := c.SlotNodes(ctx, key); now != primary && now != "" {
					break
				}
				time.Sleep(100 * time.Millisecond)
			}
			r.rep.chaos("redis replica promoted")
			if err := c.StartNode(ctx, localenv.PortOf(primary)); err != nil {
				slog.Error("restart redis node", "err", err)
			}
			if err := c.WaitOK(ctx); err != nil {
				slog.Error("redis cluster", "err", err)
			}
			r.rep.chaos("redis cluster ok")
		})
	case "pg-restart":
		after(settle, func() {
			slog.Info("chaos: restarting PostgreSQL")
			r.rep.chaos("postgres restarting")
			if err := r.env.RestartPostgres(ctx); err != nil {
				slog.Error("restart postgres", "err", err)
			}
			r.rep.chaos("postgres back")
		})
	case "psp-outage":
		outage := 30 * time.Second
		if r.o.Fans < 5000 {
			outage = 5 * time.Second
		}
		after(settle, func() {
			r.rep.chaos("psp down")
			f := base
			f.Outage, f.WebhookOutage = true, true
			sim.SetFaults(f)
			time.Sleep(outage)
			sim.SetFaults(base)
			r.rep.chaos("psp back")
		})
	case "dup-webhooks":
		f := base
		f.Duplicates, f.Reorder = 2, 2*time.Second
		sim.SetFaults(f)
		undo = func() { sim.SetFaults(base) }
	case "slow-psp":
		f := base
		f.Latency = 800 * time.Millisecond
		sim.SetFaults(f)
		undo = func() { sim.SetFaults(base) }
	}
	restore := undo
	return func() {
		close(stop)
		faults.Wait()
		restore()
	}
}
