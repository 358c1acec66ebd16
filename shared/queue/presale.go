package queue

import (
	"context"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// SetPresale makes the event's room a presale room until until: the join
// script gives a place only to the accounts listed in the room's pass set
// (the fans who redeemed a presale code, docs/fairness.md), and to anyone
// from until on. It adds accounts to the set and may be called again (the
// presale's sweep re-writes it, as Redis may have lost it in a failover).
// A room not published yet gets the setting with its first publication,
// which writes other fields of the same hash.
func (r *Room) SetPresale(ctx context.Context, eventID int64, until time.Time, accounts ...int64) error {
	k := r.keys(eventID)
	_, err := r.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.HSet(ctx, k.cfg, "presale", ms(until))
		if len(accounts) > 0 {
			members := make([]any, len(accounts))
			for i, a := range accounts {
				members[i] = strconv.FormatInt(a, 10)
			}
			p.SAdd(ctx, k.pass, members...)
		}
		// The set is worth nothing after the presale; a day's margin
		// covers clocks and a late sweep.
		p.PExpireAt(ctx, k.pass, until.Add(24*time.Hour))
		return nil
	})
	return unavailable(err)
}
