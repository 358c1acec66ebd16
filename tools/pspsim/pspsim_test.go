package pspsim

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/stretchr/testify/require"
	"github.com/stripe/stripe-go/v82"
	"github.com/stripe/stripe-go/v82/webhook"

	"github.com/catraca/catraca/shared/psp"
)

const secret = "whsec_test_simulator"

func newSim(t *testing.T, key string) (*Sim, *httptest.Server) {
	t.Helper()
	s := New(Config{APIKey: key, Secret: secret})
	t.Cleanup(s.Close)
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	s.cfg.PublicURL = srv.URL
	return s, srv
}

// recorder keeps every API answer the SDK received, for the shape checks.
type recorder struct {
	mu     sync.Mutex
	bodies []answer
}

type answer struct {
	method, path string
	status       int
	body         []byte
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	res, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	res.Body = io.NopCloser(bytes.NewReader(b))
	r.mu.Lock()
	r.bodies = append(r.bodies, answer{req.Method, req.URL.Path, res.StatusCode, b})
	r.mu.Unlock()
	return res, nil
}

// sdk is stripe-go's own client on the simulator: requests encoded and
// answers decoded by the SDK, every answer recorded.
func sdk(url, key string) (*stripe.Client, *recorder) {
	rec := &recorder{}
	b := stripe.NewBackendsWithConfig(&stripe.BackendConfig{URL: stripe.String(url), MaxNetworkRetries: stripe.Int64(0),
		HTTPClient: &http.Client{Transport: rec}, LeveledLogger: &stripe.LeveledLogger{Level: stripe.LevelNull}})
	return stripe.NewClient(key, stripe.WithBackends(b)), rec
}

func newSession(t *testing.T, c *stripe.Client, amount int64, key string) *stripe.CheckoutSession {
	t.Helper()
	p := &stripe.CheckoutSessionCreateParams{
		Mode: stripe.String("payment"), SuccessURL: stripe.String("https://shop.example/ok"), CancelURL: stripe.String("https://shop.example/back"),
		ClientReferenceID: stripe.String("order-7-1"),
		LineItems: []*stripe.CheckoutSessionCreateLineItemParams{{Quantity: stripe.Int64(1), PriceData: &stripe.CheckoutSessionCreateLineItemPriceDataParams{
			Currency: stripe.String("brl"), UnitAmount: stripe.Int64(amount),
			ProductData: &stripe.CheckoutSessionCreateLineItemPriceDataProductDataParams{Name: stripe.String("Order 7")}}}},
		Metadata:          map[string]string{psp.MetaOrder: "7", psp.MetaReference: "order-7-1"},
		PaymentIntentData: &stripe.CheckoutSessionCreatePaymentIntentDataParams{Metadata: map[string]string{psp.MetaOrder: "7", psp.MetaReference: "order-7-1"}},
	}
	if key != "" {
		p.SetIdempotencyKey(key)
	}
	cs, err := c.V1CheckoutSessions.Create(context.Background(), p)
	require.NoError(t, err)
	return cs
}

func retrieve(t *testing.T, c *stripe.Client, id string) *stripe.CheckoutSession {
	t.Helper()
	p := &stripe.CheckoutSessionRetrieveParams{}
	p.AddExpand("payment_intent.latest_charge")
	cs, err := c.V1CheckoutSessions.Retrieve(context.Background(), id, p)
	require.NoError(t, err)
	return cs
}

func stripeErr(t *testing.T, err error) *stripe.Error {
	t.Helper()
	var se *stripe.Error
	require.True(t, errors.As(err, &se), "a Stripe error, got %v", err)
	return se
}

// TestNoDefaultAPIKey: the repository's old default key opens nothing, and
// a simulator configured without a key refuses every call.
func TestNoDefaultAPIKey(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, key := range []string{"", "sk_test_0123456789abcdef"} {
		_, srv := newSim(t, key)
		for _, tried := range []string{"", "sk_test_catraca"} {
			_, _, err := psp.NewStripe(srv.URL, tried).Events(ctx, time.Time{}, "")
			require.ErrorIs(t, err, psp.ErrRejected, "key %q on a simulator keyed %q", tried, key)
		}
	}
	_, srv := newSim(t, "sk_test_0123456789abcdef")
	_, _, err := psp.NewStripe(srv.URL, "sk_test_0123456789abcdef").Events(ctx, time.Time{}, "")
	require.NoError(t, err)
}

// TestCheckoutThroughStripeGo drives the simulator with stripe-go itself:
// a Checkout Session is created, replayed under its Idempotency-Key,
// refused under the same key with other parameters, paid with Stripe's
// test cards as Stripe documents them, and every answer decodes into the
// SDK's types with no field Stripe does not define.
func TestCheckoutThroughStripeGo(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, srv := newSim(t, "sk_test_k")
	c, rec := sdk(srv.URL, "sk_test_k")

	cs := newSession(t, c, 5000, "order-7-1")
	require.Equal(t, stripe.CheckoutSessionStatusOpen, cs.Status)
	require.Equal(t, stripe.CheckoutSessionPaymentStatusUnpaid, cs.PaymentStatus)
	require.Equal(t, int64(5000), cs.AmountTotal)
	require.Equal(t, "order-7-1", cs.ClientReferenceID)
	require.Regexp(t, `^cs_test_`, cs.ID)
	require.Equal(t, srv.URL+"/c/pay/"+cs.ID, cs.URL)
	require.GreaterOrEqual(t, cs.ExpiresAt-cs.Created, int64(30*60), "Checkout's expiry is at least 30 minutes away")

	again := newSession(t, c, 5000, "order-7-1")
	require.Equal(t, cs.ID, again.ID, "same key, same body: the first answer")
	require.Equal(t, "true", again.LastResponse.Header.Get("Idempotent-Replayed"))
	p := &stripe.CheckoutSessionCreateParams{Mode: stripe.String("payment"), SuccessURL: stripe.String("https://x"),
		LineItems: []*stripe.CheckoutSessionCreateLineItemParams{{Quantity: stripe.Int64(1), PriceData: &stripe.CheckoutSessionCreateLineItemPriceDataParams{
			Currency: stripe.String("brl"), UnitAmount: stripe.Int64(1)}}}}
	p.SetIdempotencyKey("order-7-1")
	_, err := c.V1CheckoutSessions.Create(ctx, p)
	se := stripeErr(t, err)
	require.Equal(t, stripe.ErrorTypeIdempotency, se.Type)
	require.Equal(t, http.StatusBadRequest, se.HTTPStatusCode)

	_, err = c.V1CheckoutSessions.Create(ctx, &stripe.CheckoutSessionCreateParams{Mode: stripe.String("payment")})
	se = stripeErr(t, err)
	require.Equal(t, stripe.ErrorTypeInvalidRequest, se.Type)
	require.Equal(t, "success_url", se.Param)
	_, err = c.V1CheckoutSessions.Retrieve(ctx, "cs_test_nothing", nil)
	require.Equal(t, stripe.ErrorCodeResourceMissing, stripeErr(t, err).Code)

	// Declines leave the session open; the PaymentIntent says why.
	for card, decline := range map[string]stripe.DeclineCode{CardDeclined: stripe.DeclineCodeGenericDecline, CardInsufficient: stripe.DeclineCodeInsufficientFunds} {
		_, err := s.Pay(cs.ID, card)
		require.NoError(t, err)
		got := retrieve(t, c, cs.ID)
		require.Equal(t, stripe.CheckoutSessionStatusOpen, got.Status)
		require.Equal(t, stripe.PaymentIntentStatusRequiresPaymentMethod, got.PaymentIntent.Status)
		require.Equal(t, stripe.ErrorCodeCardDeclined, got.PaymentIntent.LastPaymentError.Code)
		require.Equal(t, decline, got.PaymentIntent.LastPaymentError.DeclineCode)
	}
	_, err = s.Pay(cs.ID, "4111111111111112")
	require.ErrorIs(t, err, ErrUnknownCard)

	// 3-D Secure: the payment waits for the holder; a failed
	// authentication is a decline, a completed one a charge.
	view, err := s.Pay(cs.ID, CardAuthenticate)
	require.NoError(t, err)
	require.Equal(t, psp.StatusRequiresAction, view.Status)
	require.Equal(t, stripe.PaymentIntentStatusRequiresAction, retrieve(t, c, cs.ID).PaymentIntent.Status)
	_, err = s.Authenticate(cs.ID, false)
	require.NoError(t, err)
	require.Equal(t, stripe.ErrorCodePaymentIntentAuthenticationFailure, retrieve(t, c, cs.ID).PaymentIntent.LastPaymentError.Code)
	_, err = s.Pay(cs.ID, CardAuthenticate)
	require.NoError(t, err)
	_, err = s.Authenticate(cs.ID, true)
	require.NoError(t, err)
	paid := retrieve(t, c, cs.ID)
	require.Equal(t, stripe.CheckoutSessionStatusComplete, paid.Status)
	require.Equal(t, stripe.CheckoutSessionPaymentStatusPaid, paid.PaymentStatus)
	require.Equal(t, stripe.PaymentIntentStatusSucceeded, paid.PaymentIntent.Status)
	require.Equal(t, int64(5000), paid.PaymentIntent.AmountReceived)
	require.Equal(t, "order-7-1", paid.PaymentIntent.Metadata[psp.MetaReference])
	require.True(t, paid.PaymentIntent.LatestCharge.Paid)
	require.Equal(t, "3155", paid.PaymentIntent.LatestCharge.PaymentMethodDetails.Card.Last4)

	// Both succeeding cards, each with its brand and a stable fingerprint.
	fingerprints := map[string]string{}
	for _, card := range []string{CardVisa, CardMastercard, CardVisa} {
		cs := newSession(t, c, 100, "")
		_, err := s.Pay(cs.ID, card)
		require.NoError(t, err)
		ch := retrieve(t, c, cs.ID).PaymentIntent.LatestCharge
		require.Equal(t, map[string]string{CardVisa: "visa", CardMastercard: "mastercard"}[card], string(ch.PaymentMethodDetails.Card.Brand))
		if fp, ok := fingerprints[card]; ok {
			require.Equal(t, fp, ch.PaymentMethodDetails.Card.Fingerprint, "a card's fingerprint is stable")
		}
		fingerprints[card] = ch.PaymentMethodDetails.Card.Fingerprint
	}
	require.NotEqual(t, fingerprints[CardVisa], fingerprints[CardMastercard])

	// A simulated person's own card pays like a Visa test card, with a
	// fingerprint of its own; a mistyped one (its check digit) does not.
	for _, card := range []string{PersonCard(1), PersonCard(2), PersonCard(1)} {
		cs := newSession(t, c, 100, "")
		_, err := s.Pay(cs.ID, card)
		require.NoError(t, err)
		ch := retrieve(t, c, cs.ID).PaymentIntent.LatestCharge
		require.Equal(t, "visa", string(ch.PaymentMethodDetails.Card.Brand))
		if fp, ok := fingerprints[card]; ok {
			require.Equal(t, fp, ch.PaymentMethodDetails.Card.Fingerprint, "a card's fingerprint is stable")
		}
		fingerprints[card] = ch.PaymentMethodDetails.Card.Fingerprint
	}
	require.Len(t, fingerprints, 4, "every card has its own fingerprint")
	mistyped := []byte(PersonCard(1))
	mistyped[15] = '0' + (mistyped[15]-'0'+1)%10
	_, err = s.Pay(newSession(t, c, 100, "").ID, string(mistyped))
	require.ErrorIs(t, err, ErrUnknownCard)

	requireStripeShapes(t, rec)
}

// TestExpireRefundDispute: an expired session takes no card; a paid one
// cannot be expired; refunds (ours, with an idempotency key, or the
// dashboard's) and disputes give the money back once, with Stripe's error
// codes after; the ledger adds up.
func TestExpireRefundDispute(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, srv := newSim(t, "sk_test_k")
	c, rec := sdk(srv.URL, "sk_test_k")
	a := psp.NewStripe(srv.URL, "sk_test_k")

	expired := newSession(t, c, 1000, "")
	got, err := c.V1CheckoutSessions.Expire(ctx, expired.ID, nil)
	require.NoError(t, err)
	require.Equal(t, stripe.CheckoutSessionStatusExpired, got.Status)
	view, err := s.Pay(expired.ID, CardSuccess)
	require.NoError(t, err)
	require.Equal(t, psp.StatusCanceled, view.Status, "an expired page takes no card")

	var ids []string
	for range 3 {
		cs := newSession(t, c, 1000, "")
		_, err := s.Pay(cs.ID, CardSuccess)
		require.NoError(t, err)
		ids = append(ids, cs.ID)
	}
	paid, refunded, disputed := ids[0], ids[1], ids[2]
	_, err = c.V1CheckoutSessions.Expire(ctx, paid, nil)
	require.Equal(t, stripe.ErrorTypeInvalidRequest, stripeErr(t, err).Type, "a paid session cannot be expired")
	_, err = a.CancelPayment(ctx, paid, "")
	require.ErrorIs(t, err, psp.ErrRejected)

	intent := retrieve(t, c, refunded).PaymentIntent.ID
	rp := &stripe.RefundCreateParams{PaymentIntent: stripe.String(intent), Amount: stripe.Int64(1000)}
	rp.SetIdempotencyKey("refund-1")
	r1, err := c.V1Refunds.Create(ctx, rp)
	require.NoError(t, err)
	require.Equal(t, stripe.RefundStatusSucceeded, r1.Status)
	r2, err := c.V1Refunds.Create(ctx, rp)
	require.NoError(t, err)
	require.Equal(t, r1.ID, r2.ID, "a replayed refund is the same refund")
	rp = &stripe.RefundCreateParams{PaymentIntent: stripe.String(intent)}
	_, err = c.V1Refunds.Create(ctx, rp)
	require.Equal(t, stripe.ErrorCodeChargeAlreadyRefunded, stripeErr(t, err).Code)
	_, err = s.RefundAtPSP(refunded)
	require.Error(t, err, "refunded once")

	res, err := http.Post(srv.URL+"/_sim/payments/"+disputed+"/dispute", "application/json", nil)
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
	_, err = a.Refund(ctx, retrieve(t, c, disputed).PaymentIntent.ID, 1000, "refund-2")
	require.ErrorIs(t, err, psp.ErrRejected, "a disputed payment cannot be refunded")
	back, err := a.GetPayment(ctx, disputed)
	require.NoError(t, err)
	require.True(t, back.Disputed)

	stray := s.Charge(psp.CreatePayment{Amount: 7, Currency: "JPY", OrderID: 5})
	require.Equal(t, psp.StatusSucceeded, stray.Status)

	l := s.Ledger()
	require.Len(t, l, 6)
	require.Equal(t, map[string]int64{"BRL": 1000, "JPY": 7}, l.Net())
	byOrder := l.NetByOrder()
	require.Equal(t, map[string]int64{"BRL": 1000}, byOrder[7])
	require.Equal(t, map[string]int64{"JPY": 7}, byOrder[5])
	requireStripeShapes(t, rec)
}

// TestEventsAndWebhooks: every event is delivered signed as Stripe signs
// (webhook.ConstructEvent verifies it with the endpoint's secret and the
// SDK's API version), and the events list pages newest first with
// created[gte], types and starting_after, as stripe-go reads it.
func TestEventsAndWebhooks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var mu sync.Mutex
	delivered := map[string]stripe.EventType{}
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		e, err := webhook.ConstructEvent(body, r.Header.Get("Stripe-Signature"), secret)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		mu.Lock()
		delivered[e.ID] = e.Type
		mu.Unlock()
	}))
	t.Cleanup(hook.Close)
	s, srv := newSim(t, "sk_test_k")
	s.SetWebhookURL(hook.URL)
	c, rec := sdk(srv.URL, "sk_test_k")

	start := time.Now().Add(-time.Second)
	declined, paid := newSession(t, c, 300, ""), newSession(t, c, 300, "")
	_, err := s.Pay(declined.ID, CardDeclined)
	require.NoError(t, err)
	_, err = s.Pay(paid.ID, CardSuccess)
	require.NoError(t, err)
	_, err = c.V1CheckoutSessions.Expire(ctx, declined.ID, nil)
	require.NoError(t, err)
	_, err = s.RefundAtPSP(paid.ID)
	require.NoError(t, err)
	want := []stripe.EventType{"payment_intent.payment_failed", "payment_intent.succeeded", "checkout.session.completed",
		"checkout.session.expired", "charge.refunded"}

	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(delivered) == len(want)
	}, 10*time.Second, 10*time.Millisecond, "every event delivered and verified")

	var listed []stripe.EventType
	params := &stripe.EventListParams{CreatedRange: &stripe.RangeQueryParams{GreaterThanOrEqual: start.Unix()}}
	params.Limit = stripe.Int64(2) // three pages, read by the SDK's own paging
	for e, err := range c.V1Events.List(ctx, params) {
		require.NoError(t, err)
		require.Equal(t, delivered[e.ID], e.Type)
		require.Equal(t, stripe.APIVersion, e.APIVersion)
		listed = append(listed, e.Type)
	}
	for i, j := 0, len(listed)-1; i < j; i, j = i+1, j-1 {
		listed[i], listed[j] = listed[j], listed[i]
	}
	require.Equal(t, want, listed, "listed newest first")

	params = &stripe.EventListParams{Types: []*string{stripe.String("charge.refunded"), stripe.String("checkout.session.expired")}}
	n := 0
	for e, err := range c.V1Events.List(ctx, params) {
		require.NoError(t, err)
		require.Contains(t, []stripe.EventType{"charge.refunded", "checkout.session.expired"}, e.Type)
		n++
	}
	require.Equal(t, 2, n)
	params = &stripe.EventListParams{CreatedRange: &stripe.RangeQueryParams{GreaterThanOrEqual: time.Now().Add(time.Hour).Unix()}}
	for range c.V1Events.List(ctx, params) {
		t.Fatal("no event is created in the future")
	}
	requireStripeShapes(t, rec)
}

// requireStripeShapes checks every answer recorded against stripe-go's
// type for its object: each field must be one the type defines, with a
// JSON value of its kind (an expandable field: its id or the object).
// The SDK's own decoders accept unknown fields, so this walks the types.
func requireStripeShapes(t *testing.T, rec *recorder) {
	t.Helper()
	rec.mu.Lock()
	defer rec.mu.Unlock()
	require.NotEmpty(t, rec.bodies)
	for _, a := range rec.bodies {
		var v any
		require.NoError(t, json.Unmarshal(a.body, &v))
		requireShape(t, a.method+" "+a.path, v)
	}
}

// objectTypes are stripe-go's types of the objects the simulator answers.
var objectTypes = map[string]reflect.Type{
	"checkout.session": reflect.TypeFor[stripe.CheckoutSession](),
	"payment_intent":   reflect.TypeFor[stripe.PaymentIntent](),
	"charge":           reflect.TypeFor[stripe.Charge](),
	"refund":           reflect.TypeFor[stripe.Refund](),
	"dispute":          reflect.TypeFor[stripe.Dispute](),
	"event":            reflect.TypeFor[stripe.Event](),
	"list": reflect.TypeFor[struct {
		stripe.ListMeta
		Object string `json:"object"`
		Data   []any  `json:"data"`
	}](),
}

// schemas are Stripe's published schemas of those objects (required
// fields, enums), from stripe/openapi's openapi/spec3.yaml at 63a6746
// (2023-08-16), descriptions dropped and references to other schemas
// loosened to any object; "list" is ours (Stripe describes lists per path).
var schemas = sync.OnceValues(func() (*openapi3.T, error) {
	return openapi3.NewLoader().LoadFromFile("testdata/stripe-schemas.json")
})

func requireShape(t *testing.T, where string, v any) {
	t.Helper()
	m, ok := v.(map[string]any)
	require.True(t, ok, "%s: not an object", where)
	doc, err := schemas()
	require.NoError(t, err)
	if e, ok := m["error"]; ok && len(m) == 1 {
		conform(t, where+" error", e, reflect.TypeFor[stripe.Error]())
		require.NoError(t, doc.Components.Schemas["error"].Value.VisitJSON(v), where)
		return
	}
	obj, _ := m["object"].(string)
	typ, ok := objectTypes[obj]
	require.True(t, ok, "%s: unexpected object %q", where, obj)
	conform(t, where, v, typ)
	require.NoError(t, doc.Components.Schemas[obj].Value.VisitJSON(v), "%s: against Stripe's schema of %s", where, obj)
	switch obj {
	case "event":
		requireShape(t, where+" data.object", m["data"].(map[string]any)["object"])
	case "list":
		for _, item := range m["data"].([]any) {
			requireShape(t, where+" data[]", item)
		}
	}
}

// jsonFields are a struct's fields by JSON name, embedded ones included.
func jsonFields(typ reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := range typ.NumField() {
		f := typ.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case f.Anonymous && name == "":
			maps.Copy(out, jsonFields(f.Type))
		case name != "" && name != "-":
			out[name] = f.Type
		}
	}
	return out
}

var rawJSON = reflect.TypeFor[json.RawMessage]()

func conform(t *testing.T, where string, v any, typ reflect.Type) {
	t.Helper()
	for typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	if typ == rawJSON || typ.Kind() == reflect.Interface || v == nil {
		return // anything, checked on its own; or null
	}
	switch x := v.(type) {
	case map[string]any:
		if typ.Kind() == reflect.Map {
			for k, e := range x {
				conform(t, where+"."+k, e, typ.Elem())
			}
			return
		}
		require.Equal(t, reflect.Struct, typ.Kind(), "%s: an object where stripe-go has %s", where, typ)
		fields := jsonFields(typ)
		for k, e := range x {
			ft, ok := fields[k]
			require.True(t, ok, "%s: field %q is not in stripe-go's %s", where, k, typ)
			conform(t, where+"."+k, e, ft)
		}
	case string:
		if typ.Kind() == reflect.Struct {
			_, expandable := typ.FieldByName("ID")
			require.True(t, expandable, "%s: an id where stripe-go has %s", where, typ)
			return
		}
		require.Equal(t, reflect.String, typ.Kind(), "%s: a string where stripe-go has %s", where, typ)
	case float64:
		require.Contains(t, []reflect.Kind{reflect.Int64, reflect.Int, reflect.Float64}, typ.Kind(), "%s: a number where stripe-go has %s", where, typ)
	case bool:
		require.Equal(t, reflect.Bool, typ.Kind(), "%s: a boolean where stripe-go has %s", where, typ)
	case []any:
		require.Equal(t, reflect.Slice, typ.Kind(), "%s: an array where stripe-go has %s", where, typ)
		for _, e := range x {
			conform(t, where+"[]", e, typ.Elem())
		}
	}
}

// TestPendingRefundsSettleLater: with RefundsPending, a refund answers
// pending and moves no money; settled as failed, refund.failed and
// charge.refund.updated carry the refund (status failed, its
// failure_reason) and the charge keeps its money; settled as succeeded,
// charge.refunded follows. Every answer and event object has Stripe's
// shapes; the adapter reads the refund back with its PaymentIntent.
func TestPendingRefundsSettleLater(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, srv := newSim(t, "sk_test_k")
	c, rec := sdk(srv.URL, "sk_test_k")
	a := psp.NewStripe(srv.URL, "sk_test_k")
	s.SetFaults(Faults{RefundsPending: true})
	start := time.Now().Add(-time.Second)

	cs := newSession(t, c, 900, "")
	_, err := s.Pay(cs.ID, CardSuccess)
	require.NoError(t, err)
	intent := retrieve(t, c, cs.ID).PaymentIntent.ID
	r, err := a.Refund(ctx, intent, 900, "refund-a")
	require.NoError(t, err)
	require.Equal(t, "pending", r.Status)
	require.Equal(t, []string{r.ID}, s.PendingRefunds())
	require.Equal(t, map[string]int64{"BRL": 900}, s.Ledger().Net(), "a pending refund moves no money")
	_, err = a.Refund(ctx, intent, 900, "refund-b")
	require.ErrorIs(t, err, psp.ErrRejected, "a charge whose refund is pending has nothing left to refund")

	require.NoError(t, s.SettleRefund(r.ID, false))
	require.Error(t, s.SettleRefund(r.ID, true), "settled once")
	got, err := c.V1Refunds.Retrieve(ctx, r.ID, &stripe.RefundRetrieveParams{Expand: []*string{stripe.String("payment_intent")}})
	require.NoError(t, err)
	require.Equal(t, stripe.RefundStatusFailed, got.Status)
	require.Equal(t, stripe.RefundFailureReasonExpiredOrCanceledCard, got.FailureReason)
	require.Equal(t, "7", got.PaymentIntent.Metadata["catraca_order"], "the PaymentIntent expanded")
	require.False(t, s.simView(cs.ID).Refunded)

	again, err := a.Refund(ctx, intent, 900, "refund-c")
	require.NoError(t, err)
	require.NoError(t, s.SettleRefund(again.ID, true))
	require.True(t, s.simView(cs.ID).Refunded)
	require.Equal(t, map[string]int64{"BRL": 0}, s.Ledger().Net())

	var types []stripe.EventType
	params := &stripe.EventListParams{CreatedRange: &stripe.RangeQueryParams{GreaterThanOrEqual: start.Unix()}}
	for e, err := range c.V1Events.List(ctx, params) {
		require.NoError(t, err)
		types = append(types, e.Type)
		if e.Type == stripe.EventTypeRefundFailed || e.Type == stripe.EventTypeChargeRefundUpdated {
			var re stripe.Refund
			require.NoError(t, json.Unmarshal(e.Data.Raw, &re))
			require.Equal(t, r.ID, re.ID)
			require.Equal(t, stripe.RefundStatusFailed, re.Status)
		}
	}
	require.Subset(t, types, []stripe.EventType{stripe.EventTypeRefundCreated, stripe.EventTypeRefundFailed,
		stripe.EventTypeChargeRefundUpdated, stripe.EventTypeRefundUpdated, stripe.EventTypeChargeRefunded})
	requireStripeShapes(t, rec)
}

// TestIdempotencyKeyInUse: a request under a key whose first request is
// still being answered gets Stripe's 409 idempotency_key_in_use, which
// the adapter reads as no answer yet (ErrUnavailable: ask again under the
// same key), not as a refusal.
func TestIdempotencyKeyInUse(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, srv := newSim(t, "sk_test_k")
	c, rec := sdk(srv.URL, "sk_test_k")
	a := psp.NewStripe(srv.URL, "sk_test_k")
	cs := newSession(t, c, 500, "")
	_, err := s.Pay(cs.ID, CardSuccess)
	require.NoError(t, err)
	intent := retrieve(t, c, cs.ID).PaymentIntent.ID

	s.SetFaults(Faults{Latency: 300 * time.Millisecond})
	errs := make(chan error, 2)
	for range 2 {
		go func() {
			_, err := a.Refund(ctx, intent, 500, "refund-same")
			errs <- err
		}()
	}
	var failed []error
	for range 2 {
		if err := <-errs; err != nil {
			failed = append(failed, err)
		}
	}
	require.Len(t, failed, 1, "one of the two is answered")
	require.ErrorIs(t, failed[0], psp.ErrUnavailable)
	require.NotErrorIs(t, failed[0], psp.ErrRejected)
	require.Contains(t, failed[0].Error(), "idempotency_key_in_use")
	s.SetFaults(Faults{})
	p := &stripe.RefundCreateParams{PaymentIntent: stripe.String(intent), Amount: stripe.Int64(500)}
	p.SetIdempotencyKey("refund-same")
	_, err = c.V1Refunds.Create(ctx, p)
	require.NoError(t, err, "the same key again, once answered: the replay")
	require.Len(t, s.Ledger(), 2, "refunded once")
	requireStripeShapes(t, rec)
}

func (s *Sim) simView(id string) psp.Payment {
	s.mu.Lock()
	defer s.mu.Unlock()
	cs, pi := s.findLocked(id)
	return s.viewLocked(cs, pi)
}
