package pspsim

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/stripe/stripe-go/v82"

	"github.com/catraca/catraca/shared/psp"
)

// TestPartialRefunds: as at Stripe, a refund's amount may be part of the
// charge; refunds add up to at most the charge (a pending one counts), a
// larger one is refused with amount_too_large and nothing moves, and the
// charge reads refunded only once all of it is back. charge.refunded
// follows each refund, partial ones with refunded false.
func TestPartialRefunds(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, srv := newSim(t, "sk_test_k")
	c, rec := sdk(srv.URL, "sk_test_k")
	a := psp.NewStripe(srv.URL, "sk_test_k")

	cs := newSession(t, c, 900, "")
	_, err := s.Pay(cs.ID, CardSuccess)
	require.NoError(t, err)
	intent := retrieve(t, c, cs.ID).PaymentIntent.ID

	r, err := a.Refund(ctx, intent, 300, "part-1")
	require.NoError(t, err)
	require.Equal(t, int64(300), r.Amount)
	ch := retrieve(t, c, cs.ID).PaymentIntent.LatestCharge
	require.Equal(t, int64(300), ch.AmountRefunded)
	require.False(t, ch.Refunded, "a partial refund leaves the charge not refunded")
	require.Equal(t, map[string]int64{"BRL": 600}, s.Ledger().Net())

	_, err = a.Refund(ctx, intent, 601, "part-2")
	require.ErrorIs(t, err, psp.ErrRejected)
	require.ErrorContains(t, err, "amount_too_large: Refund amount (BRL 6.01) is greater than unrefunded amount on charge (BRL 6.00)")
	require.Equal(t, map[string]int64{"BRL": 600}, s.Ledger().Net(), "an over-refund moves nothing")

	s.SetFaults(Faults{RefundsPending: true})
	p, err := a.Refund(ctx, intent, 500, "part-3")
	require.NoError(t, err)
	require.Equal(t, "pending", p.Status)
	_, err = a.Refund(ctx, intent, 200, "part-4")
	require.ErrorIs(t, err, psp.ErrRejected, "a pending refund counts: 100 is left")
	require.NoError(t, s.SettleRefund(p.ID, true))
	s.SetFaults(Faults{})

	last, err := a.Refund(ctx, intent, 100, "part-5")
	require.NoError(t, err)
	require.Equal(t, "succeeded", last.Status)
	ch = retrieve(t, c, cs.ID).PaymentIntent.LatestCharge
	require.True(t, ch.Refunded)
	require.Equal(t, int64(900), ch.AmountRefunded)
	require.Equal(t, map[string]int64{"BRL": 0}, s.Ledger().Net())
	_, err = a.Refund(ctx, intent, 1, "part-6")
	require.ErrorIs(t, err, psp.ErrRejected, "charge_already_refunded")

	var refunded []bool
	for e, err := range c.V1Events.List(ctx, &stripe.EventListParams{}) {
		require.NoError(t, err)
		if e.Type == stripe.EventTypeChargeRefunded {
			refunded = append(refunded, e.Data.Object["refunded"].(bool))
		}
	}
	require.Equal(t, []bool{true, false, false}, refunded, "newest first: the last refund completes the charge")
	requireStripeShapes(t, rec)
}
