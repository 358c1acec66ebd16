package psp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/stripe/stripe-go/v82"
	"github.com/stripe/stripe-go/v82/webhook"

	"github.com/catraca/catraca/shared/config"
	"github.com/catraca/catraca/shared/secret"
)

// FailureExpired is the failure of a payment attempt that expired unpaid
// (a Pix code nobody paid): no card was refused.
const FailureExpired = string(stripe.ErrorCodePaymentIntentPaymentAttemptExpired)

// Metadata keys our Checkout Sessions and their PaymentIntents carry.
const (
	MetaOrder     = "catraca_order"
	MetaReference = "catraca_reference"
)

// Stripe event types the shop acts on; every other type is ignored.
// EventTypes lists them for the webhook endpoint and reconciliation.
var eventKinds = map[stripe.EventType]Kind{
	stripe.EventTypeCheckoutSessionCompleted:             KindSucceeded, // or KindProcessing while unpaid
	stripe.EventTypeCheckoutSessionAsyncPaymentSucceeded: KindSucceeded,
	stripe.EventTypeCheckoutSessionAsyncPaymentFailed:    KindFailed,
	stripe.EventTypeCheckoutSessionExpired:               KindCanceled,
	stripe.EventTypePaymentIntentPaymentFailed:           KindFailed,
	stripe.EventTypePaymentIntentSucceeded:               KindSucceeded, // only for a charge made outside Checkout
	stripe.EventTypeChargeRefunded:                       KindRefunded,
	stripe.EventTypeChargeDisputeCreated:                 KindDisputed,
	// A refund that was pending and failed or succeeded: each carries the
	// refund object, whose status says which (refundKind).
	stripe.EventTypeRefundFailed:        KindRefundFailed,
	stripe.EventTypeChargeRefundUpdated: KindRefundFailed,
	stripe.EventTypeRefundUpdated:       KindRefundFailed,
}

// refundKind is what a refund's status means to the shop: failed or
// succeeded (a pending refund settled), or nothing yet.
func refundKind(status stripe.RefundStatus) Kind {
	switch status {
	case stripe.RefundStatusFailed:
		return KindRefundFailed
	case stripe.RefundStatusSucceeded:
		return KindRefundSucceeded
	}
	return ""
}

// EventTypes are the Stripe event types the shop subscribes to.
func EventTypes() []string {
	out := make([]string, 0, len(eventKinds))
	for t := range eventKinds {
		out = append(out, string(t))
	}
	return out
}

// Stripe is the PSP port on Stripe's API (or the simulator at another
// base URL), through the official SDK.
type Stripe struct {
	c    *stripe.Client
	http *http.Client // the SDK's: NewStripeKey sets its transport
}

// NewStripe returns an adapter for the API at baseURL ("" for Stripe's
// own) with a secret key. The SDK's own retries are off: every call counts
// against our quota, and our callers retry.
func NewStripe(baseURL, key string) *Stripe {
	hc := &http.Client{Timeout: 10 * time.Second}
	cfg := &stripe.BackendConfig{
		HTTPClient:        hc,
		MaxNetworkRetries: stripe.Int64(0),
		LeveledLogger:     &stripe.LeveledLogger{Level: stripe.LevelNull},
	}
	if baseURL != "" {
		cfg.URL = stripe.String(baseURL)
	}
	return &Stripe{c: stripe.NewClient(key, stripe.WithBackends(stripe.NewBackendsWithConfig(cfg))), http: hc}
}

// wrap maps the SDK's errors onto the port's.
func wrap(err error) error {
	if err == nil {
		return nil
	}
	var se *stripe.Error
	if !errors.As(err, &se) {
		return fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	switch {
	case se.HTTPStatusCode == http.StatusTooManyRequests:
		return fmt.Errorf("%w: %s", ErrRateLimited, se.Msg)
	case se.HTTPStatusCode >= 500 || se.HTTPStatusCode == 0:
		return fmt.Errorf("%w: %d %s", ErrUnavailable, se.HTTPStatusCode, se.Msg)
	case se.HTTPStatusCode == http.StatusConflict || se.Code == stripe.ErrorCodeIdempotencyKeyInUse:
		// Another request under the same idempotency key is still being
		// answered: no answer yet, not a refusal. Ask again under the
		// same key (a new key could do the thing twice).
		return fmt.Errorf("%w: %d %s %s: %s", ErrUnavailable, se.HTTPStatusCode, se.Type, se.Code, se.Msg)
	}
	return fmt.Errorf("%w: %d %s %s: %s", ErrRejected, se.HTTPStatusCode, se.Type, se.Code, se.Msg)
}

// CreatePayment opens a Checkout Session for one attempt: the order's total
// as one line, our order and attempt in the metadata of both the session
// and its PaymentIntent.
func (s *Stripe) CreatePayment(ctx context.Context, p CreatePayment, key string) (Payment, error) {
	meta := map[string]string{MetaOrder: strconv.FormatInt(p.OrderID, 10), MetaReference: p.Reference}
	params := &stripe.CheckoutSessionCreateParams{
		Mode:              stripe.String(string(stripe.CheckoutSessionModePayment)),
		ClientReferenceID: stripe.String(p.Reference),
		SuccessURL:        stripe.String(p.ReturnURL),
		CancelURL:         stripe.String(p.ReturnURL),
		LineItems: []*stripe.CheckoutSessionCreateLineItemParams{{
			Quantity: stripe.Int64(1),
			PriceData: &stripe.CheckoutSessionCreateLineItemPriceDataParams{
				Currency:    stripe.String(strings.ToLower(p.Currency)),
				UnitAmount:  stripe.Int64(p.Amount),
				ProductData: &stripe.CheckoutSessionCreateLineItemPriceDataProductDataParams{Name: stripe.String(fmt.Sprintf("Order %d", p.OrderID))},
			},
		}},
		Metadata:           meta,
		PaymentIntentData:  &stripe.CheckoutSessionCreatePaymentIntentDataParams{Metadata: meta},
		PaymentMethodTypes: []*string{stripe.String(string(stripe.PaymentMethodTypeCard))},
	}
	if secs, ok := pixSeconds(p); ok {
		params.PaymentMethodTypes = append(params.PaymentMethodTypes, stripe.String(string(stripe.PaymentMethodTypePix)))
		params.PaymentMethodOptions = &stripe.CheckoutSessionCreatePaymentMethodOptionsParams{
			Pix: &stripe.CheckoutSessionCreatePaymentMethodOptionsPixParams{ExpiresAfterSeconds: stripe.Int64(secs)}}
	}
	if key != "" {
		params.SetIdempotencyKey(key)
	}
	cs, err := s.c.V1CheckoutSessions.Create(ctx, params)
	if err != nil {
		return Payment{}, wrap(err)
	}
	return fromSession(cs), nil
}

// pixMaxSeconds is the longest Pix code Stripe makes
// (payment_method_options.pix.expires_after_seconds: 10 to 1209600).
const pixMaxSeconds = 1209600

// pixSeconds is the lifetime of the Pix code a page offers, and whether it
// offers Pix at all: only in BRL, only when the hold can wait for one.
func pixSeconds(p CreatePayment) (int64, bool) {
	if !strings.EqualFold(p.Currency, "brl") || p.PixWait < PixMinWait {
		return 0, false
	}
	return min(int64(p.PixWait/time.Second), pixMaxSeconds), true
}

// GetPayment reads a Checkout Session with its PaymentIntent and latest
// charge, or a PaymentIntent made outside Checkout.
func (s *Stripe) GetPayment(ctx context.Context, id string) (Payment, error) {
	if strings.HasPrefix(id, "pi_") {
		params := &stripe.PaymentIntentRetrieveParams{}
		params.AddExpand("latest_charge")
		pi, err := s.c.V1PaymentIntents.Retrieve(ctx, id, params)
		if err != nil {
			return Payment{}, wrap(err)
		}
		return fromIntent(pi), nil
	}
	params := &stripe.CheckoutSessionRetrieveParams{}
	params.AddExpand("payment_intent.latest_charge")
	cs, err := s.c.V1CheckoutSessions.Retrieve(ctx, id, params)
	if err != nil {
		return Payment{}, wrap(err)
	}
	return fromSession(cs), nil
}

// CancelPayment expires an open Checkout Session: its page takes no card
// any more. A completed session cannot be expired (ErrRejected).
func (s *Stripe) CancelPayment(ctx context.Context, id, key string) (Payment, error) {
	params := &stripe.CheckoutSessionExpireParams{}
	if key != "" {
		params.SetIdempotencyKey(key)
	}
	cs, err := s.c.V1CheckoutSessions.Expire(ctx, id, params)
	if err != nil {
		return Payment{}, wrap(err)
	}
	return fromSession(cs), nil
}

// Refund refunds a PaymentIntent.
func (s *Stripe) Refund(ctx context.Context, intent string, amount int64, key string) (Refund, error) {
	params := &stripe.RefundCreateParams{PaymentIntent: stripe.String(intent), Amount: stripe.Int64(amount)}
	if key != "" {
		params.SetIdempotencyKey(key)
	}
	r, err := s.c.V1Refunds.Create(ctx, params)
	if err != nil {
		return Refund{}, wrap(err)
	}
	return Refund{ID: r.ID, Payment: intent, Amount: r.Amount, Status: string(r.Status), Failure: string(r.FailureReason)}, nil
}

// eventPage is how many events one call lists (Stripe's most).
const eventPage = 100

// Events lists one page of the handled event types created since then.
func (s *Stripe) Events(ctx context.Context, since time.Time, after string) ([]Event, bool, error) {
	params := &stripe.EventListParams{CreatedRange: &stripe.RangeQueryParams{GreaterThanOrEqual: since.Unix()}}
	params.Limit = stripe.Int64(eventPage)
	params.Single = true
	if after != "" {
		params.StartingAfter = stripe.String(after)
	}
	for _, t := range EventTypes() {
		params.Types = append(params.Types, stripe.String(t))
	}
	var out []Event
	for e, err := range s.c.V1Events.List(ctx, params) {
		if err != nil {
			return nil, false, wrap(err)
		}
		out = append(out, fromEvent(e))
	}
	return out, len(out) == eventPage, nil
}

// Confirm reads an event's payment back: a session's from the session (its
// PaymentIntent expanded), a PaymentIntent's, charge's or dispute's from
// the Checkout Session that made the PaymentIntent, if any.
func (s *Stripe) Confirm(ctx context.Context, ev Event) (Event, error) {
	if ev.Kind == "" {
		return ev, nil
	}
	if ev.Kind == KindRefundFailed || ev.Kind == KindRefundSucceeded {
		return s.confirmRefund(ctx, ev)
	}
	if strings.HasPrefix(ev.Payment.ID, "cs_") {
		p, err := s.GetPayment(ctx, ev.Payment.ID)
		ev.Payment = p
		return ev, err
	}
	params := &stripe.CheckoutSessionListParams{PaymentIntent: stripe.String(ev.Payment.Intent)}
	params.Single = true
	params.AddExpand("data.payment_intent.latest_charge")
	var found *stripe.CheckoutSession
	for cs, err := range s.c.V1CheckoutSessions.List(ctx, params) {
		if err != nil {
			return ev, wrap(err)
		}
		found = cs
		break
	}
	if found != nil {
		if ev.Type == string(stripe.EventTypePaymentIntentSucceeded) {
			ev.Kind = "" // its session's own event applies the charge
		}
		ev.Payment = fromSession(found)
		return ev, nil
	}
	p, err := s.GetPayment(ctx, ev.Payment.Intent)
	ev.Payment = p
	return ev, err
}

// confirmRefund reads a refund back with its PaymentIntent (one call):
// its status now says whether it failed or succeeded, and the order comes
// from the PaymentIntent's metadata. An event about a refund still
// pending is ignored.
func (s *Stripe) confirmRefund(ctx context.Context, ev Event) (Event, error) {
	params := &stripe.RefundRetrieveParams{}
	params.AddExpand("payment_intent")
	r, err := s.c.V1Refunds.Retrieve(ctx, ev.Refund.ID, params)
	if err != nil {
		return ev, wrap(err)
	}
	ev.Refund = Refund{ID: r.ID, Amount: r.Amount, Status: string(r.Status), Failure: string(r.FailureReason)}
	if ev.Kind = refundKind(r.Status); r.PaymentIntent == nil {
		ev.Kind = ""
	}
	if ev.Kind == "" {
		return ev, nil
	}
	ev.Payment = fromIntent(r.PaymentIntent)
	ev.Refund.Payment = r.PaymentIntent.ID
	return ev, nil
}

// ParseWebhook verifies a delivery's Stripe-Signature against each secret
// (several during a rotation) and reads its event; no API call.
func ParseWebhook(secrets []string, body []byte, header string) (Event, error) {
	for _, secret := range secrets {
		e, err := webhook.ConstructEventWithTolerance(body, header, secret, Tolerance)
		switch {
		case err == nil:
			return fromEvent(&e), nil
		case errors.Is(err, webhook.ErrNoValidSignature):
			continue // perhaps the next secret's
		case errors.Is(err, webhook.ErrNotSigned), errors.Is(err, webhook.ErrInvalidHeader), errors.Is(err, webhook.ErrTooOld):
			return Event{}, fmt.Errorf("%w: %v", ErrBadSignature, err)
		}
		return Event{}, fmt.Errorf("%w: %v", ErrMalformed, err) // signed, but not an event of our API version
	}
	return Event{}, ErrBadSignature
}

// Tolerance is how old a signed delivery may be (replay protection).
const Tolerance = 300 * time.Second

// fromEvent reads an event's type and the payment its object names.
func fromEvent(e *stripe.Event) Event {
	ev := Event{ID: e.ID, Type: string(e.Type), Kind: eventKinds[e.Type], Created: time.Unix(e.Created, 0).UTC()}
	if e.Data == nil {
		ev.Kind = ""
		return ev
	}
	raw := e.Data.Raw
	switch {
	case strings.HasPrefix(ev.Type, "checkout.session."):
		var cs stripe.CheckoutSession
		if json.Unmarshal(raw, &cs) == nil {
			ev.Payment = fromSession(&cs)
			if e.Type == stripe.EventTypeCheckoutSessionCompleted && cs.PaymentStatus != stripe.CheckoutSessionPaymentStatusPaid {
				ev.Kind = KindProcessing // an asynchronous payment: its own event follows
				if cs.PaymentStatus == stripe.CheckoutSessionPaymentStatusNoPaymentRequired {
					ev.Kind = ""
				}
			}
		}
	case strings.HasPrefix(ev.Type, "payment_intent."):
		var pi stripe.PaymentIntent
		if json.Unmarshal(raw, &pi) == nil {
			ev.Payment = fromIntent(&pi)
			ev.Payment.ID = ""
			if e.Type == stripe.EventTypePaymentIntentSucceeded && ev.Payment.Reference != "" {
				ev.Kind = "" // made by our Checkout Session, whose own event applies it
			}
		}
	case e.Type == stripe.EventTypeChargeRefunded:
		var ch stripe.Charge
		if json.Unmarshal(raw, &ch) == nil && ch.PaymentIntent != nil {
			ev.Payment = Payment{Intent: ch.PaymentIntent.ID, Amount: ch.Amount, Currency: string(ch.Currency)}
			if !ch.Refunded {
				ev.Kind = "" // a partial refund: the shop refunds whole payments only
			}
		}
	case e.Type == stripe.EventTypeRefundFailed || e.Type == stripe.EventTypeChargeRefundUpdated || e.Type == stripe.EventTypeRefundUpdated:
		var r stripe.Refund
		if json.Unmarshal(raw, &r) == nil && r.PaymentIntent != nil {
			ev.Payment = Payment{Intent: r.PaymentIntent.ID, Amount: r.Amount, Currency: string(r.Currency)}
			ev.Refund = Refund{ID: r.ID, Payment: r.PaymentIntent.ID, Amount: r.Amount, Status: string(r.Status), Failure: string(r.FailureReason)}
			ev.Kind = refundKind(r.Status) // pending: nothing to do yet
		}
	case e.Type == stripe.EventTypeChargeDisputeCreated:
		var d stripe.Dispute
		if json.Unmarshal(raw, &d) == nil && d.PaymentIntent != nil {
			ev.Payment = Payment{Intent: d.PaymentIntent.ID, Amount: d.Amount, Currency: string(d.Currency)}
		}
	}
	if ev.Kind != "" && ev.Payment.ID == "" && ev.Payment.Intent == "" {
		ev.Kind = "" // names no payment
	}
	return ev
}

// fromSession is a Checkout Session (its PaymentIntent expanded, when it
// is) as a Payment.
func fromSession(cs *stripe.CheckoutSession) Payment {
	p := Payment{ID: cs.ID, Amount: cs.AmountTotal, Currency: string(cs.Currency), URL: cs.URL,
		Created: time.Unix(cs.Created, 0).UTC()}
	p.OrderID, p.Reference = fromMeta(cs.Metadata)
	switch {
	case cs.Status == stripe.CheckoutSessionStatusExpired:
		p.Status = StatusCanceled
	case cs.PaymentStatus == stripe.CheckoutSessionPaymentStatusPaid:
		p.Status = StatusSucceeded
	case cs.Status == stripe.CheckoutSessionStatusComplete:
		p.Status = StatusProcessing
	default:
		p.Status = StatusRequiresPayment
	}
	if pi := cs.PaymentIntent; pi != nil {
		p.Intent = pi.ID
		if pi.Object != "" { // expanded: the PaymentIntent is what was charged
			ip := fromIntent(pi)
			ip.ID, ip.URL, ip.Created = p.ID, p.URL, p.Created
			switch {
			case p.Status == StatusCanceled:
				ip.Status = StatusCanceled
			case p.Status == StatusProcessing && ip.Status == StatusRequiresAction:
				// Submitted with an asynchronous method (a Pix code shown):
				// the fan pays from elsewhere; the page is done.
				ip.Status = StatusProcessing
			}
			return ip
		}
	}
	return p
}

// fromIntent is a PaymentIntent (its latest charge expanded, when it is)
// as a Payment.
func fromIntent(pi *stripe.PaymentIntent) Payment {
	p := Payment{ID: pi.ID, Intent: pi.ID, Amount: pi.Amount, Currency: string(pi.Currency), Created: time.Unix(pi.Created, 0).UTC()}
	p.OrderID, p.Reference = fromMeta(pi.Metadata)
	switch pi.Status {
	case stripe.PaymentIntentStatusSucceeded:
		p.Status, p.Amount = StatusSucceeded, pi.AmountReceived
	case stripe.PaymentIntentStatusProcessing:
		p.Status = StatusProcessing
	case stripe.PaymentIntentStatusRequiresAction:
		p.Status = StatusRequiresAction
	case stripe.PaymentIntentStatusCanceled:
		p.Status = StatusCanceled
	default:
		p.Status = StatusRequiresPayment
	}
	if e := pi.LastPaymentError; e != nil && p.Status == StatusRequiresPayment {
		p.Status, p.Failure = StatusFailed, string(e.Code)
		if e.DeclineCode != "" {
			p.Failure = string(e.DeclineCode)
		}
	}
	if ch := pi.LatestCharge; ch != nil {
		p.Refunded, p.Disputed = ch.Refunded, ch.Disputed
		if d := ch.PaymentMethodDetails; d != nil && d.Card != nil {
			p.Card = d.Card.Fingerprint
		}
	}
	if na := pi.NextAction; na != nil && na.PixDisplayQRCode != nil && p.Status == StatusRequiresAction {
		p.ExpiresAt = time.Unix(na.PixDisplayQRCode.ExpiresAt, 0).UTC()
	}
	return p
}

func fromMeta(m map[string]string) (order int64, reference string) {
	order, _ = strconv.ParseInt(m[MetaOrder], 10, 64)
	return order, m[MetaReference]
}

// NewStripeKey is NewStripe with a key that may rotate while the function
// stays warm: every request carries the key's current value (re-read
// once older than secret.MaxAge), and a request refused with 401 is sent
// again once with the key read anew. A refused request changed nothing at
// the PSP, so sending it again is safe (and keeps its idempotency key).
func NewStripeKey(baseURL string, key *secret.Value) *Stripe {
	s := NewStripe(baseURL, "set-per-request")
	s.http.Transport = rotatingKey{key: key, next: http.DefaultTransport}
	return s
}

// rotatingKey sets each request's key from a secret that may rotate.
type rotatingKey struct {
	key  *secret.Value
	next http.RoundTripper
}

func (t rotatingKey) RoundTrip(r *http.Request) (*http.Response, error) {
	used := t.key.Get(r.Context())
	resp, err := t.send(r, r.Body, used)
	if err != nil || resp.StatusCode != http.StatusUnauthorized {
		return resp, err
	}
	fresh, changed, _ := t.key.Refresh(r.Context(), used)
	if !changed || (r.Body != nil && r.Body != http.NoBody && r.GetBody == nil) {
		return resp, nil
	}
	body := r.Body
	if r.GetBody != nil {
		if body, err = r.GetBody(); err != nil {
			return resp, nil
		}
	}
	resp.Body.Close()
	return t.send(r, body, fresh)
}

func (t rotatingKey) send(r *http.Request, body io.ReadCloser, key string) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Body = body
	r.Header.Set("Authorization", "Bearer "+key)
	return t.next.RoundTrip(r)
}

// Placeholder tells whether key is not a Stripe key at all for Stripe's
// API (baseURL "" or api.stripe.com): the value the deployment generated
// for the secret, before anyone replaced it with Stripe's (docs/deploy.md).
func Placeholder(baseURL, key string) bool {
	if baseURL != "" && !strings.HasPrefix(baseURL, "https://api.stripe.com") {
		return false
	}
	return !strings.HasPrefix(key, "sk_") && !strings.HasPrefix(key, "rk_")
}

// Webhooks verifies deliveries with signing secrets that may rotate while
// the function stays warm: secrets is the comma-separated list, as
// CATRACA_PSP_WEBHOOK_SECRETS holds it.
type Webhooks struct{ secrets *secret.Value }

// NewWebhooks returns a verifier over secrets.
func NewWebhooks(secrets *secret.Value) *Webhooks { return &Webhooks{secrets: secrets} }

// Parse is ParseWebhook with the current secrets; a delivery that none of
// them verifies is tried once more with the list read again (the secret
// was rolled at Stripe and in Secrets Manager since the list was read).
func (w *Webhooks) Parse(ctx context.Context, body []byte, header string) (Event, error) {
	used := w.secrets.Get(ctx)
	ev, err := ParseWebhook(config.SplitList(used), body, header)
	if !errors.Is(err, ErrBadSignature) {
		return ev, err
	}
	if fresh, changed, _ := w.secrets.Refresh(ctx, used); changed {
		return ParseWebhook(config.SplitList(fresh), body, header)
	}
	return ev, err
}
