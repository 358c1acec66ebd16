package pspsim

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
	"time"

	"github.com/catraca/catraca/shared/psp"
)

// session is a Checkout Session.
type session struct {
	ID, Intent            string
	Status, PaymentStatus string // open/complete/expired; unpaid/paid
	Amount                int64
	Currency              string
	ClientRef             string
	Meta, IntentMeta      map[string]string
	SuccessURL, CancelURL string
	Created, ExpiresAt    int64
	Methods               []string // payment_method_types: card, and pix in BRL
	PixSeconds            int64    // payment_method_options[pix][expires_after_seconds]
}

// offers tells whether the session's page takes a payment method.
func (cs *session) offers(method string) bool { return contains(cs.Methods, method) }

// intent is a PaymentIntent, made when the first card is tried.
type intent struct {
	ID, Session    string
	Status         string
	Amount         int64
	Received       int64
	Currency       string
	Meta           map[string]string
	LastError      *apiErr
	Charge         string
	Created        int64
	CanceledAt     int64
	Authenticating string // the card waiting for 3-D Secure
	Methods        []string
	// A Pix code shown and not yet paid: what it says and when it expires.
	PixData      string
	PixExpiresAt int64
}

// pixPending tells whether a Pix code is waiting for the fan's bank.
func (pi *intent) pixPending() bool {
	return pi != nil && pi.PixData != "" && pi.Status == "requires_action"
}

// charge is a successful card charge.
type charge struct {
	ID, Intent     string
	Amount         int64
	AmountRefunded int64
	Currency       string
	Refunded       bool
	Disputed       bool
	Card           Card
	Number         string // the card's; "" for a Pix
	BankTx         string // a Pix's end-to-end id at the central bank
	Created        int64
}

// refund is a refund of a charge: succeeded at once, or pending until
// SettleRefund makes it succeeded or failed.
type refund struct {
	ID, Charge, Intent string
	Amount             int64
	Currency           string
	Status             string
	Failure            string // failure_reason, once failed
	Created            int64
}

// sub returns the expansions below field ("payment_intent.latest_charge"
// → "latest_charge" under "payment_intent") and whether field itself is
// expanded.
func sub(expand []string, field string) ([]string, bool) {
	var out []string
	found := false
	for _, e := range expand {
		if e == field {
			found = true
		} else if rest, ok := strings.CutPrefix(e, field+"."); ok {
			found = true
			out = append(out, rest)
		}
	}
	return out, found
}

func nullable(id string) any {
	if id == "" {
		return nil
	}
	return id
}

func orEmpty(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

func (s *Sim) sessionJSON(cs *session, expand []string) map[string]any {
	var pi any = nullable(cs.Intent)
	if rest, ok := sub(expand, "payment_intent"); ok && cs.Intent != "" {
		pi = s.intentJSON(s.intents[cs.Intent], rest)
	}
	var u any
	if cs.Status == "open" {
		u = s.cfg.PublicURL + "/c/pay/" + cs.ID
	}
	return map[string]any{"id": cs.ID, "object": "checkout.session", "amount_subtotal": cs.Amount, "amount_total": cs.Amount,
		"cancel_url": nullable(cs.CancelURL), "client_reference_id": nullable(cs.ClientRef), "created": cs.Created,
		"currency": cs.Currency, "customer": nil, "expires_at": cs.ExpiresAt, "livemode": false, "metadata": orEmpty(cs.Meta),
		"mode": "payment", "payment_intent": pi, "payment_method_options": pixOptions(cs), "payment_method_types": cs.Methods, "payment_status": cs.PaymentStatus,
		"status": cs.Status, "success_url": nullable(cs.SuccessURL), "ui_mode": "hosted", "url": u,
		// Required by Stripe's schema; features the shop does not use.
		"automatic_tax": map[string]any{"enabled": false, "liability": nil, "status": nil}, "custom_fields": []any{},
		"custom_text":      map[string]any{"after_submit": nil, "shipping_address": nil, "submit": nil, "terms_of_service_acceptance": nil},
		"shipping_options": []any{}}
}

// pixOptions are a session's payment_method_options: Pix's code lifetime
// when it offers Pix.
func pixOptions(cs *session) map[string]any {
	if !cs.offers("pix") {
		return map[string]any{}
	}
	return map[string]any{"pix": map[string]any{"expires_after_seconds": cs.PixSeconds}}
}

func (s *Sim) intentJSON(pi *intent, expand []string) map[string]any {
	var ch any = nullable(pi.Charge)
	if _, ok := sub(expand, "latest_charge"); ok && pi.Charge != "" {
		ch = s.chargeJSON(s.charges[pi.Charge])
	}
	var lastErr any
	if pi.LastError != nil {
		lastErr = pi.LastError
	}
	var canceledAt, reason any
	if pi.CanceledAt != 0 {
		canceledAt, reason = pi.CanceledAt, "abandoned"
	}
	var next any
	switch {
	case pi.pixPending():
		next = map[string]any{"type": "pix_display_qr_code", "pix_display_qr_code": map[string]any{
			"data": pi.PixData, "expires_at": pi.PixExpiresAt, "hosted_instructions_url": s.cfg.PublicURL + "/c/pay/" + pi.Session,
			"image_url_png": s.cfg.PublicURL + "/c/pay/" + pi.Session + "/pix.png", "image_url_svg": s.cfg.PublicURL + "/c/pay/" + pi.Session + "/pix.svg"}}
	case pi.Status == "requires_action":
		next = map[string]any{"type": "redirect_to_url", "redirect_to_url": map[string]any{
			"url": s.cfg.PublicURL + "/c/pay/" + pi.Session, "return_url": s.cfg.PublicURL + "/c/pay/" + pi.Session}}
	}
	return map[string]any{"id": pi.ID, "object": "payment_intent", "amount": pi.Amount, "amount_capturable": 0,
		"amount_received": pi.Received, "canceled_at": canceledAt, "cancellation_reason": reason, "capture_method": "automatic_async",
		"confirmation_method": "automatic", "created": pi.Created, "currency": pi.Currency, "last_payment_error": lastErr,
		"latest_charge": ch, "livemode": false, "metadata": orEmpty(pi.Meta), "next_action": next,
		"payment_method_types": pi.Methods, "status": pi.Status}
}

func (s *Sim) chargeJSON(ch *charge) map[string]any {
	details := map[string]any{"type": "pix", "pix": map[string]any{"bank_transaction_id": ch.BankTx}}
	if ch.Number != "" {
		details = map[string]any{"type": "card", "card": map[string]any{"brand": ch.Card.Brand,
			"last4": ch.Number[len(ch.Number)-4:], "fingerprint": Fingerprint(ch.Number), "exp_month": 12, "exp_year": time.Now().Year() + 3,
			"funding": "credit", "country": "US"}}
	}
	return map[string]any{"id": ch.ID, "object": "charge", "amount": ch.Amount, "amount_captured": ch.Amount,
		"amount_refunded": ch.AmountRefunded, "captured": true, "created": ch.Created, "currency": ch.Currency,
		"billing_details": map[string]any{"address": nil, "email": nil, "name": nil, "phone": nil},
		"disputed":        ch.Disputed, "livemode": false, "metadata": map[string]string{}, "paid": true, "payment_intent": ch.Intent,
		"payment_method_details": details,
		"refunded":               ch.Refunded, "status": "succeeded"}
}

func (s *Sim) refundJSON(re *refund, expand []string) map[string]any {
	var pi any = re.Intent
	if rest, ok := sub(expand, "payment_intent"); ok {
		pi = s.intentJSON(s.intents[re.Intent], rest)
	}
	out := map[string]any{"id": re.ID, "object": "refund", "amount": re.Amount, "balance_transaction": nil, "charge": re.Charge,
		"created": re.Created, "currency": re.Currency, "metadata": map[string]string{}, "payment_intent": pi, "reason": nil,
		"receipt_number": nil, "source_transfer_reversal": nil, "status": re.Status, "transfer_reversal": nil}
	if re.Failure != "" {
		out["failure_reason"] = re.Failure
	}
	if re.Status == "pending" {
		out["pending_reason"] = "processing" // since 2025-04-30.basil
	}
	return out
}

// viewLocked is a session and its PaymentIntent as the port sees them.
func (s *Sim) viewLocked(cs *session, pi *intent) psp.Payment {
	p := psp.Payment{Status: psp.StatusRequiresPayment}
	if cs != nil {
		p.ID, p.Amount, p.Currency, p.Created = cs.ID, cs.Amount, cs.Currency, time.Unix(cs.Created, 0).UTC()
		p.OrderID, _ = strconv.ParseInt(cs.Meta[psp.MetaOrder], 10, 64)
		p.Reference = cs.Meta[psp.MetaReference]
		if cs.Status == "open" {
			p.URL = s.cfg.PublicURL + "/c/pay/" + cs.ID
		}
	}
	if pi != nil {
		p.Intent = pi.ID
		if p.ID == "" {
			p.ID, p.Amount, p.Currency = pi.ID, pi.Amount, pi.Currency
		}
		switch {
		case pi.Status == "succeeded":
			p.Status = psp.StatusSucceeded
		case pi.pixPending():
			// The page was submitted with Pix: the fan pays from a bank app.
			p.Status, p.ExpiresAt = psp.StatusProcessing, time.Unix(pi.PixExpiresAt, 0).UTC()
		case pi.Status == "requires_action":
			p.Status = psp.StatusRequiresAction
		case pi.Status == "canceled":
			p.Status = psp.StatusCanceled
		case pi.Status == "requires_payment_method" && pi.LastError != nil:
			p.Status, p.Failure = psp.StatusFailed, cmp.Or(pi.LastError.DeclineCode, pi.LastError.Code)
		}
		if ch := s.charges[pi.Charge]; ch != nil {
			p.Refunded, p.Disputed = ch.Refunded, ch.Disputed
		}
	}
	if cs != nil && cs.Status == "expired" {
		p.Status = psp.StatusCanceled
	}
	return p
}

// Fingerprint is the stable card.fingerprint of a card number.
func Fingerprint(number string) string {
	h := sha256.Sum256([]byte("pspsim card " + number))
	return hex.EncodeToString(h[:])[:16]
}
