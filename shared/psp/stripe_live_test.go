package psp_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/stripe/stripe-go/v82"

	"github.com/catraca/catraca/shared/psp"
)

// TestAgainstStripeTestMode runs the adapter against Stripe itself when
// STRIPE_TEST_KEY holds a test-mode secret key (sk_test_…): a Checkout
// Session is opened and expired, a PaymentIntent charged with Stripe's test
// card is read, refunded once under its idempotency key, and its
// charge.refunded event listed and confirmed.
func TestAgainstStripeTestMode(t *testing.T) {
	key := os.Getenv("STRIPE_TEST_KEY")
	if key == "" {
		t.Skip("STRIPE_TEST_KEY is not set: set it to a Stripe test-mode secret key (sk_test_…) to run the adapter against Stripe")
	}
	require.Regexp(t, `^(sk|rk)_test_`, key, "test mode only")
	ctx := context.Background()
	a := psp.NewStripe("", key)
	start := time.Now().Add(-time.Minute)

	p, err := a.CreatePayment(ctx, psp.CreatePayment{Amount: 5000, Currency: "brl", OrderID: 1, Reference: "live-test-" + start.Format("150405"),
		ReturnURL: "https://example.com/orders/1"}, "")
	require.NoError(t, err)
	require.Regexp(t, `^cs_test_`, p.ID)
	require.Regexp(t, `^https://checkout\.stripe\.com/`, p.URL)
	got, err := a.GetPayment(ctx, p.ID)
	require.NoError(t, err)
	require.Equal(t, psp.StatusRequiresPayment, got.Status)
	require.Equal(t, int64(1), got.OrderID)
	expired, err := a.CancelPayment(ctx, p.ID, "")
	require.NoError(t, err)
	require.Equal(t, psp.StatusCanceled, expired.Status)
	_, err = a.CancelPayment(ctx, p.ID, "")
	require.ErrorIs(t, err, psp.ErrRejected, "an expired session cannot be expired again")

	// A charge made outside Checkout, with Stripe's test payment method.
	c := stripe.NewClient(key)
	pi, err := c.V1PaymentIntents.Create(ctx, &stripe.PaymentIntentCreateParams{Amount: stripe.Int64(5000), Currency: stripe.String("brl"),
		PaymentMethod: stripe.String("pm_card_visa"), Confirm: stripe.Bool(true),
		AutomaticPaymentMethods: &stripe.PaymentIntentCreateAutomaticPaymentMethodsParams{Enabled: stripe.Bool(true), AllowRedirects: stripe.String("never")}})
	require.NoError(t, err)
	paid, err := a.GetPayment(ctx, pi.ID)
	require.NoError(t, err)
	require.Equal(t, psp.StatusSucceeded, paid.Status)
	require.Equal(t, int64(5000), paid.Amount)
	refundKey := "live-refund-" + pi.ID
	r1, err := a.Refund(ctx, pi.ID, 5000, refundKey)
	require.NoError(t, err)
	r2, err := a.Refund(ctx, pi.ID, 5000, refundKey)
	require.NoError(t, err)
	require.Equal(t, r1.ID, r2.ID, "replayed under its idempotency key")
	_, err = a.Refund(ctx, pi.ID, 5000, refundKey+"-again")
	require.ErrorIs(t, err, psp.ErrRejected, "refunded once")

	var refunded *psp.Event
	require.Eventually(t, func() bool {
		for after, more := "", true; more && refunded == nil; {
			page, m, err := a.Events(ctx, start, after)
			require.NoError(t, err)
			for _, e := range page {
				if e.Kind == psp.KindRefunded && e.Payment.Intent == pi.ID {
					refunded = &e
				}
				after = e.ID
			}
			more = m
		}
		return refunded != nil
	}, time.Minute, 2*time.Second, "charge.refunded listed")
	confirmed, err := a.Confirm(ctx, *refunded)
	require.NoError(t, err)
	require.Equal(t, pi.ID, confirmed.Payment.ID, "no Checkout Session made it")
	require.True(t, confirmed.Payment.Refunded)
}
