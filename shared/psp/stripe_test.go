package psp_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/stripe/stripe-go/v82"

	"github.com/catraca/catraca/shared/psp"
	"github.com/catraca/catraca/tools/pspsim"
)

func event(typ, object string) []byte {
	return []byte(fmt.Sprintf(`{"id":"evt_1","object":"event","api_version":%q,"created":%d,"type":%q,"data":{"object":%s}}`,
		stripe.APIVersion, time.Now().Unix(), typ, object))
}

// TestParseWebhook: a delivery verifies with any of the secrets of a
// rotation, within 300 s; a signed body of another API version is
// malformed, not a bad signature.
func TestParseWebhook(t *testing.T) {
	t.Parallel()
	body := event("checkout.session.expired", `{"id":"cs_1","object":"checkout.session","status":"expired","metadata":{"catraca_order":"9","catraca_reference":"order-9-1"}}`)
	secrets := []string{"whsec_new", "whsec_old"}
	for _, secret := range secrets {
		ev, err := psp.ParseWebhook(secrets, body, pspsim.Sign(secret, time.Now(), body))
		require.NoError(t, err)
		require.Equal(t, psp.KindCanceled, ev.Kind)
		require.Equal(t, psp.Payment{ID: "cs_1", Status: psp.StatusCanceled, OrderID: 9, Reference: "order-9-1", Created: time.Unix(0, 0).UTC()}, ev.Payment)
	}
	for _, header := range []string{"", "t=1,v1=00", pspsim.Sign("whsec_other", time.Now(), body), pspsim.Sign(secrets[0], time.Now().Add(-301*time.Second), body)} {
		_, err := psp.ParseWebhook(secrets, body, header)
		require.ErrorIs(t, err, psp.ErrBadSignature, header)
	}
	old := []byte(`{"id":"evt_1","object":"event","api_version":"2020-08-27","created":1,"type":"charge.refunded","data":{"object":{}}}`)
	_, err := psp.ParseWebhook(secrets, old, pspsim.Sign(secrets[0], time.Now(), old))
	require.ErrorIs(t, err, psp.ErrMalformed)
}

// TestEventKinds: what each Stripe event means to the shop, before it is
// confirmed.
func TestEventKinds(t *testing.T) {
	t.Parallel()
	ours := `"metadata":{"catraca_order":"9","catraca_reference":"order-9-1"}`
	for _, c := range []struct {
		typ, object string
		kind        psp.Kind
	}{
		{"checkout.session.completed", `{"id":"cs_1","object":"checkout.session","payment_status":"paid","status":"complete",` + ours + `}`, psp.KindSucceeded},
		{"checkout.session.completed", `{"id":"cs_1","object":"checkout.session","payment_status":"unpaid","status":"complete",` + ours + `}`, psp.KindProcessing},
		{"checkout.session.async_payment_succeeded", `{"id":"cs_1","object":"checkout.session","payment_status":"paid"}`, psp.KindSucceeded},
		{"checkout.session.async_payment_failed", `{"id":"cs_1","object":"checkout.session"}`, psp.KindFailed},
		{"payment_intent.payment_failed", `{"id":"pi_1","object":"payment_intent",` + ours + `}`, psp.KindFailed},
		{"payment_intent.succeeded", `{"id":"pi_1","object":"payment_intent","status":"succeeded",` + ours + `}`, ""}, // its session's event applies it
		{"payment_intent.succeeded", `{"id":"pi_1","object":"payment_intent","status":"succeeded","metadata":{}}`, psp.KindSucceeded},
		{"charge.refunded", `{"id":"ch_1","object":"charge","payment_intent":"pi_1","refunded":true}`, psp.KindRefunded},
		{"charge.refunded", `{"id":"ch_1","object":"charge","payment_intent":"pi_1","refunded":false}`, ""}, // partial
		{"charge.dispute.created", `{"id":"dp_1","object":"dispute","payment_intent":"pi_1"}`, psp.KindDisputed},
		{"refund.failed", `{"id":"re_1","object":"refund","payment_intent":"pi_1","status":"failed","failure_reason":"lost_or_stolen_card"}`, psp.KindRefundFailed},
		{"charge.refund.updated", `{"id":"re_1","object":"refund","payment_intent":"pi_1","status":"failed"}`, psp.KindRefundFailed},
		{"charge.refund.updated", `{"id":"re_1","object":"refund","payment_intent":"pi_1","status":"succeeded"}`, psp.KindRefundSucceeded},
		{"charge.refund.updated", `{"id":"re_1","object":"refund","payment_intent":"pi_1","status":"pending"}`, ""},                 // nothing settled yet
		{"refund.failed", `{"id":"re_1","object":"refund","status":"failed"}`, ""},                                                  // names no payment
		{"refund.updated", `{"id":"re_1","object":"refund","payment_intent":"pi_1","status":"succeeded"}`, psp.KindRefundSucceeded}, // a pending partial refund's only news
		{"refund.created", `{"id":"re_1","object":"refund","payment_intent":"pi_1","status":"pending"}`, ""},
		{"charge.succeeded", `{"id":"ch_1","object":"charge","payment_intent":"pi_1"}`, ""},
		{"customer.created", `{"id":"cus_1","object":"customer"}`, ""},
	} {
		body := event(c.typ, c.object)
		ev, err := psp.ParseWebhook([]string{"whsec_k"}, body, pspsim.Sign("whsec_k", time.Now(), body))
		require.NoError(t, err)
		require.Equal(t, c.kind, ev.Kind, "%s %s", c.typ, c.object)
	}
}

// TestPixOffer: the adapter offers Pix on BRL pages only, with a code
// living the hold's wait (Stripe's most at 14 days), cards only when the
// wait is under PixMinWait; a page where Pix was chosen reads back as
// processing with the code's expiry.
func TestPixOffer(t *testing.T) {
	t.Parallel()
	sim := pspsim.New(pspsim.Config{APIKey: "sk_test_pix"})
	t.Cleanup(sim.Close)
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	a := psp.NewStripe(srv.URL, "sk_test_pix")
	ctx := context.Background()
	for _, c := range []struct {
		currency string
		wait     time.Duration
		pix      bool
		lives    time.Duration
	}{
		{"BRL", 7 * time.Minute, true, 7 * time.Minute},
		{"BRL", 30 * 24 * time.Hour, true, 14 * 24 * time.Hour},
		{"BRL", psp.PixMinWait - time.Second, false, 0},
		{"USD", time.Hour, false, 0},
	} {
		p, err := a.CreatePayment(ctx, psp.CreatePayment{Amount: 900, Currency: c.currency, OrderID: 3, Reference: "order-3-1",
			ReturnURL: "https://shop.example/orders/3", PixWait: c.wait}, "")
		require.NoError(t, err)
		chosen := time.Now()
		view, err := sim.ChoosePix(p.ID)
		if !c.pix {
			require.ErrorIs(t, err, pspsim.ErrNoPix, "%s %v: cards only", c.currency, c.wait)
			continue
		}
		require.NoError(t, err)
		got, err := a.GetPayment(ctx, p.ID)
		require.NoError(t, err)
		require.Equal(t, psp.StatusProcessing, got.Status)
		require.Equal(t, view.ExpiresAt, got.ExpiresAt)
		require.WithinDuration(t, chosen.Add(c.lives), got.ExpiresAt, time.Second, "%s %v", c.currency, c.wait)
	}
}
