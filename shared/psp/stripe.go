package psp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/stripe/stripe-go/v82"
	"github.com/stripe/stripe-go/v82/webhook"
)

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
	c *stripe.Client
}

// NewStripe returns an adapter for the API at baseURL ("" for Stripe's
// own) with a secret key. The SDK's own retries are off: every call counts
// against our quota, and our callers retry.
func NewStripe(baseURL, key string) *Stripe {
	cfg := &stripe.BackendConfig{
		HTTPClient:        &http.Client{Timeout: 10 * time.Second},
		MaxNetworkRetries: stripe.Int64(0),
		LeveledLogger:     &stripe.LeveledLogger{Level: stripe.LevelNull},
	}
	if baseURL != "" {
		cfg.URL = stripe.String(baseURL)
	}
	return &Stripe{c: stripe.NewClient(key, stripe.WithBackends(stripe.NewBackendsWithConfig(cfg)))}
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
		Metadata:          meta,
		PaymentIntentData: &stripe.CheckoutSessionCreatePaymentIntentDataParams{Metadata: meta},
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
	return Refund{ID: r.ID, Payment: intent, Amount: r.Amount, Status: string(r.Status)}, nil
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
			if p.Status == StatusCanceled {
				ip.Status = StatusCanceled
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
	return p
}

func fromMeta(m map[string]string) (order int64, reference string) {
	order, _ = strconv.ParseInt(m[MetaOrder], 10, 64)
	return order, m[MetaReference]
}
