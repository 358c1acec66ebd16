// Package pspsim is a payment provider simulator that behaves like Stripe
// where catraca depends on it: API keys, idempotency keys (same key and body
// → same answer; same key, other body → 400; kept 24 h), a hosted payment
// page where a person types a test card, cancelling an unpaid payment,
// refunds and disputes made on the provider's side (its dashboard, a
// chargeback), signed webhooks delivered with retries and exponential
// backoff, and the faults real providers have: duplicates, reordering,
// delays, outages, slowness and a rate limit (429). Its ledger records every
// charge, refund and dispute, so tests can check that money conserves.
package pspsim

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"html/template"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/catraca/catraca/shared/psp"
)

// Test cards, as on Stripe's list.
const (
	CardSuccess      = "4242424242424242"
	CardDeclined     = "4000000000000002"
	CardInsufficient = "4000000000009995"
	CardSlowBank     = "4000000000003220" // processing, then succeeds later
)

// Faults are the simulator's switches, changeable at run time.
type Faults struct {
	RatePerSecond int           `json:"rate_per_second"` // API operations per second, then 429
	Outage        bool          `json:"outage"`          // API answers 503
	WebhookOutage bool          `json:"webhook_outage"`  // deliveries are not attempted (kept for later)
	Duplicates    int           `json:"duplicates"`      // extra copies of each delivery
	Reorder       time.Duration `json:"reorder"`         // random delay up to this before each delivery
	Delay         time.Duration `json:"delay"`           // fixed delay before each delivery
	Latency       time.Duration `json:"latency"`         // added to every API call (slow PSP)
	SlowBank      time.Duration `json:"slow_bank"`       // how long a slow confirmation takes
	RetryBase     time.Duration `json:"retry_base"`      // first retry backoff
	MaxAttempts   int           `json:"max_attempts"`    // deliveries per event before giving up
}

// Config sets up a simulator.
type Config struct {
	// APIKey is the one secret key accepted; without one, every API call
	// is refused (there is no default key).
	APIKey     string
	Secret     []byte // webhook signing secret
	WebhookURL string // where events are delivered
	PublicURL  string // base URL of the hosted page
	Faults     Faults
}

// Sim is the simulator; it is an http.Handler.
type Sim struct {
	mu       sync.Mutex
	cfg      Config
	payments map[string]*psp.Payment
	idem     map[string]idemEntry
	events   []psp.Event
	seq      int
	// rate limiting and its audit
	windowSec int64
	windowOps int
	opsBySec  map[int64]int
	limited   int
	charges   map[int64]int // order → successful charges
	refunds   map[int64]int // order → refunds and disputes
	ledger    Ledger
	delivered int
	mux       *http.ServeMux
	stop      chan struct{}
	client    *http.Client
}

type idemEntry struct {
	hash    [32]byte
	status  int
	body    []byte
	created time.Time
}

// New returns a simulator.
func New(cfg Config) *Sim {
	if cfg.Faults.RetryBase == 0 {
		cfg.Faults.RetryBase = time.Second
	}
	if cfg.Faults.MaxAttempts == 0 {
		cfg.Faults.MaxAttempts = 10
	}
	if cfg.Faults.SlowBank == 0 {
		cfg.Faults.SlowBank = 3 * time.Second
	}
	s := &Sim{cfg: cfg, payments: map[string]*psp.Payment{}, idem: map[string]idemEntry{}, opsBySec: map[int64]int{},
		charges: map[int64]int{}, refunds: map[int64]int{}, mux: http.NewServeMux(), stop: make(chan struct{}),
		client: &http.Client{Timeout: 10 * time.Second}}
	s.mux.HandleFunc("POST /v1/payments", s.api(s.createPayment))
	s.mux.HandleFunc("GET /v1/payments/{id}", s.api(s.getPayment))
	s.mux.HandleFunc("POST /v1/payments/{id}/cancel", s.api(s.cancelPayment))
	s.mux.HandleFunc("POST /v1/refunds", s.api(s.refund))
	s.mux.HandleFunc("GET /v1/events", s.api(s.listEvents))
	s.mux.HandleFunc("GET /pay/{id}", s.page)
	s.mux.HandleFunc("POST /pay/{id}", s.submit)
	s.mux.HandleFunc("GET /_sim/stats", s.statsHandler)
	s.mux.HandleFunc("PUT /_sim/faults", s.faultsHandler)
	s.mux.HandleFunc("GET /_sim/ledger", s.ledgerHandler)
	s.mux.HandleFunc("POST /_sim/charges", s.chargeHandler)
	s.mux.HandleFunc("POST /_sim/payments/{id}/refund", s.dashboardHandler(s.RefundAtPSP))
	s.mux.HandleFunc("POST /_sim/payments/{id}/dispute", s.dashboardHandler(s.Dispute))
	return s
}

// SetWebhookURL sets where events are delivered.
func (s *Sim) SetWebhookURL(url string) {
	s.mu.Lock()
	s.cfg.WebhookURL = url
	s.mu.Unlock()
}

// Close stops pending deliveries.
func (s *Sim) Close() { close(s.stop) }

func (s *Sim) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// SetFaults changes the fault switches.
func (s *Sim) SetFaults(f Faults) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f.RetryBase == 0 {
		f.RetryBase = s.cfg.Faults.RetryBase
	}
	if f.MaxAttempts == 0 {
		f.MaxAttempts = s.cfg.Faults.MaxAttempts
	}
	if f.SlowBank == 0 {
		f.SlowBank = s.cfg.Faults.SlowBank
	}
	s.cfg.Faults = f
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func apiError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"error": msg})
}

// api wraps API endpoints with auth, outage, latency, the rate limit and
// idempotency.
func (s *Sim) api(h func(r *http.Request, body []byte) (int, any)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if s.cfg.APIKey == "" || subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), []byte("Bearer "+s.cfg.APIKey)) != 1 {
			apiError(w, http.StatusUnauthorized, "invalid api key")
			return
		}
		s.mu.Lock()
		f := s.cfg.Faults
		s.mu.Unlock()
		if f.Latency > 0 {
			time.Sleep(f.Latency)
		}
		if f.Outage {
			apiError(w, http.StatusServiceUnavailable, "service unavailable")
			return
		}
		if !s.admit(f.RatePerSecond) {
			w.Header().Set("Retry-After", "1")
			apiError(w, http.StatusTooManyRequests, "rate limit exceeded")
			return
		}
		var body bytes.Buffer
		body.ReadFrom(http.MaxBytesReader(w, r.Body, 1<<20))
		key := r.Header.Get("Idempotency-Key")
		if key != "" && r.Method == http.MethodPost {
			hash := sha256.Sum256(append([]byte(r.URL.Path+"\n"), body.Bytes()...))
			s.mu.Lock()
			prev, ok := s.idem[key]
			s.mu.Unlock()
			if ok && time.Since(prev.created) < 24*time.Hour {
				if prev.hash != hash {
					apiError(w, http.StatusBadRequest, "idempotency key reused with different parameters")
					return
				}
				w.Header().Set("Idempotent-Replayed", "true")
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(prev.status)
				w.Write(prev.body)
				return
			}
			status, v := h(r, body.Bytes())
			b, _ := json.Marshal(v)
			s.mu.Lock()
			if status < 500 {
				s.idem[key] = idemEntry{hash: hash, status: status, body: b, created: time.Now()}
			}
			s.mu.Unlock()
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			w.Write(b)
			return
		}
		status, v := h(r, body.Bytes())
		writeJSON(w, status, v)
	}
}

// admit applies the per-second operation cap and records what passed.
func (s *Sim) admit(rate int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	sec := time.Now().Unix()
	if sec != s.windowSec {
		s.windowSec, s.windowOps = sec, 0
	}
	if rate > 0 && s.windowOps >= rate {
		s.limited++
		return false
	}
	s.windowOps++
	s.opsBySec[sec]++
	return true
}

func (s *Sim) createPayment(r *http.Request, body []byte) (int, any) {
	var req psp.CreatePayment
	if err := json.Unmarshal(body, &req); err != nil || req.Amount <= 0 || req.Currency == "" {
		return http.StatusBadRequest, map[string]string{"error": "amount and currency are required"}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return http.StatusOK, *s.newPaymentLocked(req)
}

func (s *Sim) newPaymentLocked(req psp.CreatePayment) *psp.Payment {
	s.seq++
	id := fmt.Sprintf("pay_%06d", s.seq)
	p := &psp.Payment{ID: id, Status: psp.StatusRequiresPayment, Amount: req.Amount, Currency: req.Currency,
		OrderID: req.OrderID, Reference: req.Reference, URL: s.cfg.PublicURL + "/pay/" + id, Created: time.Now().UTC(),
		ReturnURL: req.ReturnURL}
	s.payments[id] = p
	return p
}

func (s *Sim) getPayment(r *http.Request, _ []byte) (int, any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.payments[r.PathValue("id")]
	if !ok {
		return http.StatusNotFound, map[string]string{"error": "no such payment"}
	}
	return http.StatusOK, *p
}

// cancelPayment stops a payment nobody has paid yet, as Stripe cancels a
// PaymentIntent: its page no longer takes a card.
func (s *Sim) cancelPayment(r *http.Request, _ []byte) (int, any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.payments[r.PathValue("id")]
	if !ok {
		return http.StatusNotFound, map[string]string{"error": "no such payment"}
	}
	if p.Status != psp.StatusRequiresPayment && p.Status != psp.StatusFailed {
		return http.StatusBadRequest, map[string]string{"error": "payment cannot be canceled: it is " + p.Status}
	}
	p.Status = psp.StatusCanceled
	s.emitLocked(psp.EventCanceled, *p)
	return http.StatusOK, *p
}

func (s *Sim) refund(r *http.Request, body []byte) (int, any) {
	var req struct {
		Payment string `json:"payment"`
		Amount  int64  `json:"amount"`
	}
	json.Unmarshal(body, &req)
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.payments[req.Payment]
	if ok && req.Amount != 0 && req.Amount != p.Amount {
		return http.StatusBadRequest, map[string]string{"error": "only whole refunds are simulated"}
	}
	ref, err := s.refundLocked(req.Payment)
	if err != nil {
		return http.StatusBadRequest, map[string]string{"error": err.Error()}
	}
	return http.StatusOK, ref
}

// giveBackLocked returns a succeeded payment's money to the card holder,
// once: kind is "refund" or "dispute"; the shop learns of it by webhook.
func (s *Sim) giveBackLocked(id, kind string) (*psp.Payment, error) {
	p, ok := s.payments[id]
	if !ok || p.Status != psp.StatusSucceeded || p.Refunded || p.Disputed {
		return nil, fmt.Errorf("payment cannot be given back (%s)", kind)
	}
	event := psp.EventRefunded
	if kind == "dispute" {
		p.Disputed, event = true, psp.EventDisputed
	} else {
		p.Refunded = true
	}
	s.refunds[p.OrderID]++
	s.recordLocked(kind, *p)
	s.emitLocked(event, *p)
	return p, nil
}

// refundLocked refunds a whole succeeded payment, once.
func (s *Sim) refundLocked(id string) (psp.Refund, error) {
	p, err := s.giveBackLocked(id, "refund")
	if err != nil {
		return psp.Refund{}, err
	}
	s.seq++
	return psp.Refund{ID: fmt.Sprintf("re_%06d", s.seq), Payment: p.ID, Amount: p.Amount, Status: "succeeded"}, nil
}

// RefundAtPSP refunds a payment from the provider's side, as someone
// using its dashboard would.
func (s *Sim) RefundAtPSP(id string) (psp.Payment, error) {
	return s.giveBack(id, "refund")
}

// Dispute is a chargeback: the card holder's bank takes the money of a
// succeeded payment back.
func (s *Sim) Dispute(id string) (psp.Payment, error) {
	return s.giveBack(id, "dispute")
}

func (s *Sim) giveBack(id, kind string) (psp.Payment, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, err := s.giveBackLocked(id, kind)
	if err != nil {
		return psp.Payment{}, err
	}
	return *p, nil
}

// Charge makes a payment that succeeds at once without the shop's
// checkout: another integration on the same account, a payment link, a
// tampered session. Its webhook says whatever c says, so tests can send the
// shop signed charges for the wrong amount, currency or reference.
func (s *Sim) Charge(c psp.CreatePayment) psp.Payment {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.newPaymentLocked(c)
	s.succeedLocked(p)
	return *p
}

func (s *Sim) listEvents(r *http.Request, _ []byte) (int, any) {
	since, _ := strconv.ParseInt(r.URL.Query().Get("since"), 10, 64)
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []psp.Event{}
	for _, e := range s.events {
		if e.Created.UnixMilli() >= since {
			out = append(out, e)
		}
	}
	return http.StatusOK, map[string]any{"data": out}
}

var pageTmpl = template.Must(template.New("pay").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>Pay {{.Amount}} — PSP simulator</title>
<style>body{font-family:system-ui,sans-serif;max-width:28rem;margin:3rem auto;padding:0 1rem}
label,input,button{display:block;width:100%;font-size:1.1rem;margin:.4rem 0}input{padding:.5rem}button{padding:.7rem;background:#0a6;color:#fff;border:0;border-radius:.3rem}
small{color:#555}</style></head><body>
<h1>Pay {{.Amount}}</h1><p>Order {{.OrderID}} · payment {{.ID}}</p>
{{if .Done}}<p role="status">This payment is {{.Status}}.</p>{{if .ReturnURL}}<p><a href="{{.ReturnURL}}">Back to the shop</a></p>{{end}}
{{else}}{{if .Failure}}<p role="alert"><strong>{{.Failure}}</strong> Nothing was charged. Try another card{{if .ReturnURL}}, or <a href="{{.ReturnURL}}">go back to the shop</a>{{end}}.</p>{{end}}
<form method="post"><label for="card">Card number</label>
<input id="card" name="card" inputmode="numeric" autocomplete="cc-number" required value="">
<button type="submit">Pay</button></form>
<p><small>Test cards: 4242 4242 4242 4242 succeeds · 4000 0000 0000 0002 is declined ·
4000 0000 0000 9995 has insufficient funds · 4000 0000 0000 3220 needs a slow bank confirmation.</small></p>{{end}}
</body></html>`))

func (s *Sim) page(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	p, ok := s.payments[r.PathValue("id")]
	var view psp.Payment
	if ok {
		view = *p
	}
	s.mu.Unlock()
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	pageTmpl.Execute(w, map[string]any{"ID": view.ID, "OrderID": view.OrderID, "Status": view.Status,
		"Amount": fmt.Sprintf("%s %d.%02d", strings.ToUpper(view.Currency), view.Amount/100, view.Amount%100),
		"Done":   view.Status != psp.StatusRequiresPayment && view.Status != psp.StatusFailed, "ReturnURL": view.ReturnURL,
		"Failure": map[string]string{"card_declined": "Your bank declined this card.", "insufficient_funds": "This card does not have enough funds."}[view.Failure]})
}

func (s *Sim) submit(w http.ResponseWriter, r *http.Request) {
	card := strings.ReplaceAll(r.FormValue("card"), " ", "")
	p, err := s.Pay(r.PathValue("id"), card)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if p.Status == psp.StatusSucceeded && p.ReturnURL != "" {
		http.Redirect(w, r, p.ReturnURL, http.StatusSeeOther)
		return
	}
	http.Redirect(w, r, "/pay/"+p.ID, http.StatusSeeOther)
}

// Pay is what the hosted page does when a person submits a card.
func (s *Sim) Pay(id, card string) (psp.Payment, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.payments[id]
	if !ok {
		return psp.Payment{}, fmt.Errorf("no such payment")
	}
	if p.Status != psp.StatusRequiresPayment && p.Status != psp.StatusFailed {
		return *p, nil
	}
	switch card {
	case CardSuccess:
		s.succeedLocked(p)
	case CardDeclined, CardInsufficient:
		p.Status = psp.StatusFailed
		p.Failure = map[string]string{CardDeclined: "card_declined", CardInsufficient: "insufficient_funds"}[card]
		s.emitLocked(psp.EventFailed, *p)
	case CardSlowBank:
		p.Status = psp.StatusProcessing
		s.emitLocked(psp.EventProcessing, *p)
		go func() {
			select {
			case <-time.After(s.cfg.Faults.SlowBank):
			case <-s.stop:
				return
			}
			s.mu.Lock()
			s.succeedLocked(p)
			s.mu.Unlock()
		}()
	default:
		return *p, fmt.Errorf("unknown test card %q", card)
	}
	return *p, nil
}

func (s *Sim) succeedLocked(p *psp.Payment) {
	p.Status = psp.StatusSucceeded
	p.Failure = ""
	s.charges[p.OrderID]++
	s.recordLocked("charge", *p)
	s.emitLocked(psp.EventSucceeded, *p)
}

// emitLocked records an event and schedules its delivery.
func (s *Sim) emitLocked(typ string, p psp.Payment) {
	s.seq++
	e := psp.Event{ID: fmt.Sprintf("evt_%06d", s.seq), Type: typ, Created: time.Now().UTC(), Payment: p}
	s.events = append(s.events, e)
	f := s.cfg.Faults
	for range 1 + f.Duplicates {
		go s.deliver(e, f)
	}
}

// deliver posts an event until the shop answers 2xx, backing off
// exponentially, like a provider retrying for days (here: MaxAttempts).
func (s *Sim) deliver(e psp.Event, f Faults) {
	body, _ := json.Marshal(e)
	wait := f.Delay
	if f.Reorder > 0 {
		wait += time.Duration(rand.Int64N(int64(f.Reorder)))
	}
	backoff := f.RetryBase
	for attempt := 0; attempt < f.MaxAttempts; attempt++ {
		select {
		case <-time.After(wait):
		case <-s.stop:
			return
		}
		wait, backoff = backoff, backoff*2
		s.mu.Lock()
		outage, url := s.cfg.Faults.WebhookOutage, s.cfg.WebhookURL
		s.mu.Unlock()
		if outage || url == "" {
			continue
		}
		req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("PSP-Signature", psp.Sign(s.cfg.Secret, time.Now(), body))
		res, err := s.client.Do(req)
		if err != nil {
			continue
		}
		res.Body.Close()
		if res.StatusCode/100 == 2 {
			s.mu.Lock()
			s.delivered++
			s.mu.Unlock()
			return
		}
	}
}

// Stats is what the simulator saw, for invariant checks.
type Stats struct {
	MaxOpsPerSecond int           `json:"max_ops_per_second"`
	RateLimited     int           `json:"rate_limited"`
	Charges         map[int64]int `json:"charges"` // order → successful charges
	Refunds         map[int64]int `json:"refunds"` // order → refunds and disputes
	Delivered       int           `json:"delivered"`
	Events          int           `json:"events"`
	Payments        int           `json:"payments"`
}

// Stats returns a copy of the simulator's counters.
func (s *Sim) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := Stats{RateLimited: s.limited, Charges: map[int64]int{}, Refunds: map[int64]int{}, Delivered: s.delivered,
		Events: len(s.events), Payments: len(s.payments)}
	for _, n := range s.opsBySec {
		st.MaxOpsPerSecond = max(st.MaxOpsPerSecond, n)
	}
	for k, v := range s.charges {
		st.Charges[k] = v
	}
	for k, v := range s.refunds {
		st.Refunds[k] = v
	}
	return st
}

func (s *Sim) statsHandler(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, s.Stats())
}

func (s *Sim) ledgerHandler(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"entries": s.Ledger(), "net": s.Ledger().Net()})
}

// chargeHandler serves POST /_sim/charges: Charge over HTTP.
func (s *Sim) chargeHandler(w http.ResponseWriter, r *http.Request) {
	var c psp.CreatePayment
	if err := json.NewDecoder(r.Body).Decode(&c); err != nil || c.Amount <= 0 || c.Currency == "" {
		apiError(w, http.StatusBadRequest, "amount and currency are required")
		return
	}
	writeJSON(w, http.StatusOK, s.Charge(c))
}

// dashboardHandler serves a provider-side action on payment {id}.
func (s *Sim) dashboardHandler(act func(id string) (psp.Payment, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		p, err := act(r.PathValue("id"))
		if err != nil {
			apiError(w, http.StatusBadRequest, err.Error())
			return
		}
		writeJSON(w, http.StatusOK, p)
	}
}

func (s *Sim) faultsHandler(w http.ResponseWriter, r *http.Request) {
	var f Faults
	if err := json.NewDecoder(r.Body).Decode(&f); err != nil {
		apiError(w, http.StatusBadRequest, err.Error())
		return
	}
	s.SetFaults(f)
	writeJSON(w, http.StatusOK, f)
}

// Payments lists the simulator's payments (for tests and the simulator).
func (s *Sim) Payments() []psp.Payment {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]psp.Payment, 0, len(s.payments))
	for _, p := range s.payments {
		out = append(out, *p)
	}
	return out
}
