package pspsim

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/stripe/stripe-go/v82"

	"github.com/catraca/catraca/shared/psp"
)

// pixSession makes a BRL session offering card and Pix, its code living
// secs seconds, as the adapter asks for one.
func pixSession(t *testing.T, c *stripe.Client, currency string, secs int64) (*stripe.CheckoutSession, error) {
	t.Helper()
	p := &stripe.CheckoutSessionCreateParams{
		Mode: stripe.String("payment"), SuccessURL: stripe.String("https://shop.example/ok"), CancelURL: stripe.String("https://shop.example/back"),
		LineItems: []*stripe.CheckoutSessionCreateLineItemParams{{Quantity: stripe.Int64(1), PriceData: &stripe.CheckoutSessionCreateLineItemPriceDataParams{
			Currency: stripe.String(currency), UnitAmount: stripe.Int64(4500),
			ProductData: &stripe.CheckoutSessionCreateLineItemPriceDataProductDataParams{Name: stripe.String("Order 8")}}}},
		Metadata:           map[string]string{psp.MetaOrder: "8", psp.MetaReference: "order-8-1"},
		PaymentMethodTypes: stripe.StringSlice([]string{"card", "pix"}),
		PaymentMethodOptions: &stripe.CheckoutSessionCreatePaymentMethodOptionsParams{
			Pix: &stripe.CheckoutSessionCreatePaymentMethodOptionsPixParams{ExpiresAfterSeconds: stripe.Int64(secs)}},
	}
	return c.V1CheckoutSessions.Create(context.Background(), p)
}

// TestPixThroughStripeGo: a BRL session offers Pix with the code lifetime
// asked (10 s to 14 days, BRL only, as Stripe bounds it). Choosing Pix
// completes the session unpaid and shows a code (a BR Code with its CRC)
// until its expiry; the bank paying it succeeds asynchronously, the code
// expiring fails the attempt; each with Stripe's events, and every answer
// and event in Stripe's published shapes.
func TestPixThroughStripeGo(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, srv := newSim(t, "sk_test_k")
	c, rec := sdk(srv.URL, "sk_test_k")
	start := time.Now().Add(-time.Second)

	for _, bad := range []struct {
		currency string
		secs     int64
		param    string
	}{{"usd", 600, "payment_method_types"}, {"brl", 9, "payment_method_options[pix][expires_after_seconds]"},
		{"brl", 1209601, "payment_method_options[pix][expires_after_seconds]"}} {
		_, err := pixSession(t, c, bad.currency, bad.secs)
		se := stripeErr(t, err)
		require.Equal(t, http.StatusBadRequest, se.HTTPStatusCode)
		require.Equal(t, bad.param, se.Param, "%s %d", bad.currency, bad.secs)
	}
	cardOnly := newSession(t, c, 4500, "")
	require.Equal(t, []string{"card"}, cardOnly.PaymentMethodTypes)
	_, err := s.ChoosePix(cardOnly.ID)
	require.ErrorIs(t, err, ErrNoPix, "a card-only page has no Pix")

	paid, err := pixSession(t, c, "brl", 600)
	require.NoError(t, err)
	require.Equal(t, []string{"card", "pix"}, paid.PaymentMethodTypes)
	require.Equal(t, int64(600), paid.PaymentMethodOptions.Pix.ExpiresAfterSeconds)
	chosen := time.Now()
	view, err := s.ChoosePix(paid.ID)
	require.NoError(t, err)
	require.Equal(t, psp.StatusProcessing, view.Status)
	got := retrieve(t, c, paid.ID)
	require.Equal(t, stripe.CheckoutSessionStatusComplete, got.Status)
	require.Equal(t, stripe.CheckoutSessionPaymentStatusUnpaid, got.PaymentStatus)
	require.Equal(t, stripe.PaymentIntentStatusRequiresAction, got.PaymentIntent.Status)
	qr := got.PaymentIntent.NextAction.PixDisplayQRCode
	require.Equal(t, stripe.PaymentIntentNextActionType("pix_display_qr_code"), got.PaymentIntent.NextAction.Type)
	require.InDelta(t, chosen.Add(600*time.Second).Unix(), qr.ExpiresAt, 1, "the code lives expires_after_seconds from when it was shown")
	require.Equal(t, view.ExpiresAt, time.Unix(qr.ExpiresAt, 0).UTC())
	require.True(t, strings.HasPrefix(qr.Data, "000201"), qr.Data)
	require.Contains(t, qr.Data, "br.gov.bcb.pix")
	require.Equal(t, qr.Data, brCode(s.sessions[paid.ID], s.intents[got.PaymentIntent.ID]), "stable")
	require.Equal(t, "6304", qr.Data[len(qr.Data)-8:len(qr.Data)-4], "the CRC closes the code")
	_, err = c.V1CheckoutSessions.Expire(ctx, paid.ID, nil)
	require.Equal(t, http.StatusBadRequest, stripeErr(t, err).HTTPStatusCode, "a completed session cannot be expired")
	for url, kind := range map[string]string{qr.ImageURLSVG: "image/svg+xml", qr.ImageURLPNG: "image/png"} {
		res, err := http.Get(url)
		require.NoError(t, err)
		res.Body.Close()
		require.Equal(t, http.StatusOK, res.StatusCode, url)
		require.Equal(t, kind, res.Header.Get("Content-Type"), url)
	}

	_, err = s.PayPix(paid.ID)
	require.NoError(t, err)
	got = retrieve(t, c, paid.ID)
	require.Equal(t, stripe.CheckoutSessionPaymentStatusPaid, got.PaymentStatus)
	require.Equal(t, stripe.PaymentIntentStatusSucceeded, got.PaymentIntent.Status)
	require.Nil(t, got.PaymentIntent.NextAction)
	require.Equal(t, stripe.ChargePaymentMethodDetailsType("pix"), got.PaymentIntent.LatestCharge.PaymentMethodDetails.Type)
	require.NotEmpty(t, got.PaymentIntent.LatestCharge.PaymentMethodDetails.Pix.BankTransactionID)
	_, err = s.PayPix(paid.ID)
	require.ErrorIs(t, err, ErrNoPix, "a code is paid once")

	expired, err := pixSession(t, c, "brl", 10)
	require.NoError(t, err)
	_, err = s.ChoosePix(expired.ID)
	require.NoError(t, err)
	_, err = s.ExpirePix(expired.ID)
	require.NoError(t, err)
	got = retrieve(t, c, expired.ID)
	require.Equal(t, stripe.CheckoutSessionStatusComplete, got.Status, "Stripe leaves the session complete")
	require.Equal(t, stripe.CheckoutSessionPaymentStatusUnpaid, got.PaymentStatus)
	require.Equal(t, stripe.PaymentIntentStatusRequiresPaymentMethod, got.PaymentIntent.Status)
	require.Equal(t, stripe.ErrorCode(PixExpired), got.PaymentIntent.LastPaymentError.Code)
	_, err = s.PayPix(expired.ID)
	require.ErrorIs(t, err, ErrNoPix, "an expired code takes no payment")

	var listed []stripe.EventType
	params := &stripe.EventListParams{CreatedRange: &stripe.RangeQueryParams{GreaterThanOrEqual: start.Unix()}}
	for e, err := range c.V1Events.List(ctx, params) {
		require.NoError(t, err)
		listed = append([]stripe.EventType{e.Type}, listed...)
	}
	require.Equal(t, []stripe.EventType{"checkout.session.completed", "payment_intent.succeeded", "checkout.session.async_payment_succeeded",
		"checkout.session.completed", "payment_intent.payment_failed", "checkout.session.async_payment_failed"}, listed)
	require.Equal(t, Ledger{{Kind: "charge", Payment: paid.ID, OrderID: 8, Reference: "order-8-1", Amount: 4500, Currency: "BRL",
		At: s.Ledger()[0].At}}, s.Ledger(), "only the paid Pix moved money")
	requireStripeShapes(t, rec)
}

// TestPixCodeExpiresOnTheSimulatorsClock: a code nobody pays expires by
// itself at its expires_at; the test runs the simulator's clock rather
// than wait.
func TestPixCodeExpiresOnTheSimulatorsClock(t *testing.T) {
	t.Parallel()
	s, srv := newSim(t, "sk_test_k")
	var after time.Duration
	var expire func()
	s.afterFunc = func(d time.Duration, f func()) *time.Timer {
		after, expire = d, f
		return nil
	}
	c, _ := sdk(srv.URL, "sk_test_k")
	cs, err := pixSession(t, c, "brl", 300)
	require.NoError(t, err)
	view, err := s.ChoosePix(cs.ID)
	require.NoError(t, err)
	require.InDelta(t, 300*time.Second, after, float64(time.Second), "scheduled at the code's expiry")
	require.WithinDuration(t, time.Now().Add(after), view.ExpiresAt, time.Second)
	require.Equal(t, stripe.PaymentIntentStatusRequiresAction, retrieve(t, c, cs.ID).PaymentIntent.Status)
	expire()
	require.Equal(t, stripe.PaymentIntentStatusRequiresPaymentMethod, retrieve(t, c, cs.ID).PaymentIntent.Status)
	expire() // once only: a paid or expired code is left alone
	require.Len(t, s.Ledger(), 0)
}
