package order

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/catraca/catraca/shared/ratelimit"
	"github.com/catraca/catraca/shared/shardstore"
)

// Card testing (design seeds §7): someone tries stolen card numbers on our
// payment pages, one decline after another. Every payment.failed event
// counts a decline on the order's buyer and on the viewer address its
// attempt was started from (in Redis); past a policy's thresholds checkout
// is slowed, then blocked for a while, with ErrTooManyDeclines.

// Declines are the decline thresholds per account and per address (the
// address's looser: many fans share one behind a NAT).
type Declines struct {
	Account, Address ratelimit.Policy
}

// ErrTooManyDeclines is checkout refused for a while after declines.
type ErrTooManyDeclines struct {
	// Subject is what was declined too often: "account" or "address".
	Subject string
	ratelimit.Penalty
}

func (e *ErrTooManyDeclines) Error() string {
	verb := "slowed"
	if e.Blocked {
		verb = "blocked"
	}
	return fmt.Sprintf("checkout %s for %v: %d declined payments from this %s", verb, e.Wait.Round(time.Second), e.Strikes, e.Subject)
}

func accountSubject(id int64) string  { return "account:" + strconv.FormatInt(id, 10) }
func addressSubject(ip string) string { return "address:" + ip }

// countDecline counts a declined payment on its buyer and its address. A
// count that fails is logged: Redis down must not fail the webhook.
func (s *Service) countDecline(ctx context.Context, row shardstore.PaymentRow) {
	if s.strikes == nil {
		return
	}
	n, err := s.strikes.Add(ctx, accountSubject(row.Account), s.declines.Account)
	if err != nil {
		s.log.Warn("decline not counted", "account", row.Account, "err", err)
	} else if blocks(n, s.declines.Account) {
		s.closePages(ctx, row.Account, "")
	}
	if row.Address == "" {
		return
	}
	n, err = s.strikes.Add(ctx, addressSubject(row.Address), s.declines.Address)
	if err != nil {
		s.log.Warn("decline not counted", "address", row.Address, "err", err)
	} else if blocks(n, s.declines.Address) {
		s.closePages(ctx, 0, row.Address)
	}
}

// blocks tells whether n declines block under p.
func blocks(n int, p ratelimit.Policy) bool { return p.BlockAfter > 0 && n >= p.BlockAfter }

// closePages expires the open payment pages of a blocked account (or
// address) on every shard: a card tester's page already open would
// otherwise keep taking cards until its hold ends. Failures are logged:
// the block itself stands either way.
func (s *Service) closePages(ctx context.Context, account int64, address string) {
	for _, id := range s.shards.IDs() {
		st, err := s.shards.Primary(id)
		if err == nil {
			var n int
			if n, err = st.CancelOpenPayments(ctx, account, address); n > 0 {
				s.log.Info("blocked for declines: open payment pages expired", "account", account, "address", address, "shard", id, "pages", n)
			}
		}
		if err != nil {
			s.log.Warn("open payment pages of a blocked payer not expired", "account", account, "address", address, "shard", id, "err", err)
		}
	}
}

// checkDeclines refuses a checkout while its account or address must wait
// after declines. Unknown counts (Redis down) let it through: the PSP still
// declines bad cards.
func (s *Service) checkDeclines(ctx context.Context, account int64, address string) error {
	if s.strikes == nil {
		return nil
	}
	subjects := map[string]string{"account": accountSubject(account)}
	if address != "" {
		subjects["address"] = addressSubject(address)
	}
	for _, kind := range []string{"account", "address"} {
		subject, ok := subjects[kind]
		if !ok {
			continue
		}
		p, err := s.strikes.Penalty(ctx, subject)
		if err != nil {
			s.log.Warn("declines unknown, checkout let through", "subject", subject, "err", err)
			continue
		}
		if p.Wait > 0 {
			return &ErrTooManyDeclines{Subject: kind, Penalty: p}
		}
	}
	return nil
}
