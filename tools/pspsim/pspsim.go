// Package pspsim is a payment provider simulator that speaks Stripe's wire
// format for the subset catraca uses: form-encoded requests with a secret
// key, Checkout Sessions with a hosted page where a person types one of
// Stripe's test cards, PaymentIntents, charges, refunds, disputes, the
// events list and signed webhook events (Stripe-Signature), Stripe's error
// objects and Idempotency-Key replay (same key and body → same answer;
// same key, other body → 400; kept 24 h). Tests drive it through stripe-go
// itself, so the adapter in shared/psp runs unchanged against it and
// against Stripe.
//
// Beyond Stripe it has switchable faults (duplicates, reordering, delays,
// outages, slowness, a rate limit) and test controls: refunds and disputes
// made on the provider's side, charges made outside the shop's checkout,
// and a ledger of every charge, refund and dispute, so tests can check that
// money conserves.
package pspsim

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/stripe/stripe-go/v82"

	"github.com/catraca/catraca/shared/psp"
)

// Faults are the simulator's switches, changeable at run time.
type Faults struct {
	RatePerSecond int  `json:"rate_per_second"` // API operations per second, then 429
	Outage        bool `json:"outage"`          // API answers 503
	WebhookOutage bool `json:"webhook_outage"`  // deliveries are not attempted (kept for later)
	RefundOutage  bool `json:"refund_outage"`   // refunds alone answer 503 (the rest of the API is up)
	// RefundsPending makes the API's refunds answer status pending, as a
	// bank that takes days does: the money moves (or the refund fails)
	// when a test settles it (SettleRefund).
	RefundsPending bool          `json:"refunds_pending"`
	Duplicates     int           `json:"duplicates"`   // extra copies of each delivery
	Reorder        time.Duration `json:"reorder"`      // random delay up to this before each delivery
	Delay          time.Duration `json:"delay"`        // fixed delay before each delivery
	Latency        time.Duration `json:"latency"`      // added to every API call (slow PSP)
	RetryBase      time.Duration `json:"retry_base"`   // first retry backoff
	MaxAttempts    int           `json:"max_attempts"` // deliveries per event before giving up
}

// Config sets up a simulator.
type Config struct {
	// APIKey is the one secret key accepted; without one, every API call
	// is refused (there is no default key).
	APIKey     string
	Secret     string // webhook signing secret (whsec_…)
	WebhookURL string // where events are delivered
	PublicURL  string // base URL of the hosted page
	Faults     Faults
}

// Sim is the simulator; it is an http.Handler.
type Sim struct {
	mu       sync.Mutex
	cfg      Config
	sessions map[string]*session
	intents  map[string]*intent
	charges  map[string]*charge
	refunds  map[string]*refund
	// inflight are the idempotency keys of requests being answered: the
	// same key again meanwhile is a 409, as Stripe answers it.
	inflight map[string]bool
	order    []string // session ids in creation order
	idem     map[string]idemEntry
	events   []event
	seq      int
	// rate limiting and its audit
	windowSec int64
	windowOps int
	opsBySec  map[int64]int
	limited   int
	paid      map[int64]int // order → successful charges
	givenBack map[int64]int // order → refunds and disputes
	ledger    Ledger
	delivered int
	mux       *http.ServeMux
	stop      chan struct{}
	client    *http.Client
	// afterFunc schedules the simulator's own clock (a Pix code's expiry);
	// tests replace it to run that clock without waiting.
	afterFunc func(d time.Duration, f func()) *time.Timer
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
	s := &Sim{cfg: cfg, sessions: map[string]*session{}, intents: map[string]*intent{}, charges: map[string]*charge{},
		refunds: map[string]*refund{}, inflight: map[string]bool{}, idem: map[string]idemEntry{}, opsBySec: map[int64]int{}, paid: map[int64]int{}, givenBack: map[int64]int{},
		mux: http.NewServeMux(), stop: make(chan struct{}), client: &http.Client{Timeout: 10 * time.Second}, afterFunc: time.AfterFunc}
	s.mux.HandleFunc("POST /v1/checkout/sessions", s.api(s.createSession))
	s.mux.HandleFunc("GET /v1/checkout/sessions", s.api(s.listSessions))
	s.mux.HandleFunc("GET /v1/checkout/sessions/{id}", s.api(s.getSession))
	s.mux.HandleFunc("POST /v1/checkout/sessions/{id}/expire", s.api(s.expireSession))
	s.mux.HandleFunc("GET /v1/payment_intents/{id}", s.api(s.getIntent))
	s.mux.HandleFunc("POST /v1/refunds", s.api(s.refund))
	s.mux.HandleFunc("GET /v1/refunds/{id}", s.api(s.getRefund))
	s.mux.HandleFunc("GET /v1/events", s.api(s.listEvents))
	s.mux.HandleFunc("GET /c/pay/{id}", s.page)
	s.mux.HandleFunc("POST /c/pay/{id}", s.submit)
	s.mux.HandleFunc("POST /c/pay/{id}/3ds", s.authenticate)
	s.mux.HandleFunc("POST /c/pay/{id}/pix", s.choosePix)
	s.mux.HandleFunc("POST /c/pay/{id}/pix/pay", s.payPix)
	s.mux.HandleFunc("GET /c/pay/{id}/pix.svg", s.pixImage)
	s.mux.HandleFunc("GET /c/pay/{id}/pix.png", s.pixImage)
	s.mux.HandleFunc("POST /_sim/payments/{id}/pix/expire", s.dashboardHandler(s.ExpirePix))
	s.mux.HandleFunc("GET /_sim/stats", s.statsHandler)
	s.mux.HandleFunc("PUT /_sim/faults", s.faultsHandler)
	s.mux.HandleFunc("GET /_sim/ledger", s.ledgerHandler)
	s.mux.HandleFunc("POST /_sim/charges", s.chargeHandler)
	s.mux.HandleFunc("POST /_sim/payments/{id}/refund", s.dashboardHandler(s.RefundAtPSP))
	s.mux.HandleFunc("POST /_sim/payments/{id}/dispute", s.dashboardHandler(s.Dispute))
	s.mux.HandleFunc("POST /_sim/refunds/{id}/succeed", s.settleHandler(true))
	s.mux.HandleFunc("POST /_sim/refunds/{id}/fail", s.settleHandler(false))
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
	s.cfg.Faults = f
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// apiErr is Stripe's error object, answered as {"error": …}.
type apiErr struct {
	status      int
	Type        string `json:"type"`
	Code        string `json:"code,omitempty"`
	DeclineCode string `json:"decline_code,omitempty"`
	Message     string `json:"message"`
	Param       string `json:"param,omitempty"`
}

func invalid(status int, code, param, format string, args ...any) *apiErr {
	return &apiErr{status: status, Type: "invalid_request_error", Code: code, Param: param, Message: fmt.Sprintf(format, args...)}
}

func noSuch(kind, param, id string) *apiErr {
	return invalid(http.StatusNotFound, "resource_missing", param, "No such %s: '%s'", kind, id)
}

func (e *apiErr) body() map[string]any { return map[string]any{"error": e} }

// request is one API call's parameters: the query string of a GET, the
// form-encoded body of a POST.
type request struct {
	r    *http.Request
	form url.Values
}

func (q request) get(key string) string { return q.form.Get(key) }

// list reads an array parameter, encoded as key[0]=…&key[1]=… (or key[]=…).
func (q request) list(key string) []string {
	type item struct {
		i int
		v string
	}
	var items []item
	for k, vs := range q.form {
		if !strings.HasPrefix(k, key+"[") || !strings.HasSuffix(k, "]") || strings.Contains(k[len(key)+1:len(k)-1], "[") {
			continue
		}
		i, _ := strconv.Atoi(k[len(key)+1 : len(k)-1])
		for _, v := range vs {
			items = append(items, item{i, v})
		}
	}
	sort.SliceStable(items, func(a, b int) bool { return items[a].i < items[b].i })
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.v
	}
	return out
}

// hash reads a hash parameter (key[name]=…), as metadata is sent.
func (q request) hash(key string) map[string]string {
	out := map[string]string{}
	for k, vs := range q.form {
		if name, ok := strings.CutPrefix(k, key+"["); ok && strings.HasSuffix(name, "]") && !strings.Contains(name, "[") {
			out[strings.TrimSuffix(name, "]")] = vs[0]
		}
	}
	return out
}

func (q request) int(key string) (int64, bool) {
	n, err := strconv.ParseInt(q.form.Get(key), 10, 64)
	return n, err == nil
}

// api wraps API endpoints with auth, outage, latency, the rate limit and
// idempotency.
func (s *Sim) api(h func(q request) (any, *apiErr)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Request-Id", "req_"+randomID(14))
		fail := func(e *apiErr) { writeJSON(w, e.status, e.body()) }
		if s.cfg.APIKey == "" || subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), []byte("Bearer "+s.cfg.APIKey)) != 1 {
			fail(invalid(http.StatusUnauthorized, "", "", "Invalid API Key provided."))
			return
		}
		s.mu.Lock()
		f := s.cfg.Faults
		s.mu.Unlock()
		if f.Outage || f.RefundOutage && r.URL.Path == "/v1/refunds" {
			fail(&apiErr{status: http.StatusServiceUnavailable, Type: "api_error", Message: "The simulator is down (outage fault)."})
			return
		}
		if !s.admit(f.RatePerSecond) {
			w.Header().Set("Retry-After", "1")
			fail(invalid(http.StatusTooManyRequests, "rate_limit", "", "Too many requests hit the API too quickly."))
			return
		}
		var body bytes.Buffer
		body.ReadFrom(http.MaxBytesReader(w, r.Body, 1<<20))
		q := request{r: r, form: r.URL.Query()}
		if r.Method == http.MethodPost {
			form, err := url.ParseQuery(body.String())
			if err != nil {
				fail(invalid(http.StatusBadRequest, "parameter_invalid_string", "", "The request body is not form-encoded: %v", err))
				return
			}
			q.form = form
		}
		run := func() (int, []byte) {
			// A slow PSP is slow while the request is in flight (its
			// idempotency key taken).
			time.Sleep(f.Latency)
			v, e := h(q)
			if e != nil {
				b, _ := json.Marshal(e.body())
				return e.status, b
			}
			b, _ := json.Marshal(v)
			return http.StatusOK, b
		}
		key := r.Header.Get("Idempotency-Key")
		if key == "" || r.Method != http.MethodPost {
			status, b := run()
			writeRaw(w, status, b)
			return
		}
		hash := sha256.Sum256(append([]byte(r.URL.Path+"\n"), body.Bytes()...))
		s.mu.Lock()
		prev, ok := s.idem[key]
		busy := s.inflight[key]
		if !busy {
			s.inflight[key] = true
			defer func() {
				s.mu.Lock()
				delete(s.inflight, key)
				s.mu.Unlock()
			}()
		}
		s.mu.Unlock()
		if busy {
			// Stripe's answer to a second request under a key whose first
			// is still being answered: no answer yet, try again later.
			fail(&apiErr{status: http.StatusConflict, Type: "idempotency_error", Code: "idempotency_key_in_use", Message: fmt.Sprintf(
				"There is currently another in-progress request using this idempotent key (that probably means you submitted twice, and the other request is still going through): %s. Please try again later.", key)})
			return
		}
		if ok && time.Since(prev.created) < 24*time.Hour {
			if prev.hash != hash {
				fail(&apiErr{status: http.StatusBadRequest, Type: "idempotency_error", Message: fmt.Sprintf(
					"Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than '%s' if you meant to execute a different request.", key)})
				return
			}
			w.Header().Set("Idempotent-Replayed", "true")
			writeRaw(w, prev.status, prev.body)
			return
		}
		status, b := run()
		if status < 500 {
			s.mu.Lock()
			s.idem[key] = idemEntry{hash: hash, status: status, body: b, created: time.Now()}
			s.mu.Unlock()
		}
		w.Header().Set("Idempotency-Key", key)
		writeRaw(w, status, b)
	}
}

func writeRaw(w http.ResponseWriter, status int, b []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(b)
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

// newID is an object id with Stripe's prefix for its kind.
func (s *Sim) newID(prefix string) string {
	s.seq++
	return fmt.Sprintf("%s_test_%06d%s", prefix, s.seq, randomID(8))
}

const idChars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

func randomID(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = idChars[rand.IntN(len(idChars))]
	}
	return string(b)
}

// createSession serves POST /v1/checkout/sessions for mode=payment with
// one price_data line (what the shop sends).
func (s *Sim) createSession(q request) (any, *apiErr) {
	if q.get("mode") != "payment" {
		return nil, invalid(http.StatusBadRequest, "parameter_invalid_string", "mode", "Only mode=payment is simulated.")
	}
	if q.get("success_url") == "" {
		return nil, invalid(http.StatusBadRequest, "parameter_missing", "success_url", "Missing required param: success_url.")
	}
	var total int64
	currency := ""
	for i := 0; ; i++ {
		p := fmt.Sprintf("line_items[%d]", i)
		if q.get(p+"[quantity]") == "" && q.get(p+"[price_data][currency]") == "" {
			break
		}
		qty, ok1 := q.int(p + "[quantity]")
		unit, ok2 := q.int(p + "[price_data][unit_amount]")
		cur := q.get(p + "[price_data][currency]")
		if !ok1 || !ok2 || qty < 1 || unit < 0 || cur == "" || (currency != "" && cur != currency) {
			return nil, invalid(http.StatusBadRequest, "parameter_invalid_integer", p, "Each line item needs quantity, price_data[unit_amount] and one price_data[currency].")
		}
		total, currency = total+qty*unit, cur
	}
	if total <= 0 {
		return nil, invalid(http.StatusBadRequest, "parameter_missing", "line_items", "Missing required param: line_items.")
	}
	if currency != strings.ToLower(currency) || len(currency) != 3 {
		return nil, invalid(http.StatusBadRequest, "parameter_invalid_string", "line_items[0][price_data][currency]", "Invalid currency: %s.", currency)
	}
	methods, pixSeconds, e := paymentMethods(q, currency)
	if e != nil {
		return nil, e
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	cs := s.newSessionLocked(total, currency, q.get("client_reference_id"), q.hash("metadata"), q.hash("payment_intent_data[metadata]"))
	cs.SuccessURL, cs.CancelURL = q.get("success_url"), q.get("cancel_url")
	cs.Methods, cs.PixSeconds = methods, pixSeconds
	return s.sessionJSON(cs, nil), nil
}

// Pix's code lifetime, as Stripe bounds and defaults it
// (payment_method_options[pix][expires_after_seconds]).
const (
	pixMinSeconds     = 10
	pixMaxSeconds     = 1209600
	pixDefaultSeconds = 86400
)

// paymentMethods reads payment_method_types (card, and pix in BRL only;
// card when none is given) and Pix's code lifetime.
func paymentMethods(q request, currency string) ([]string, int64, *apiErr) {
	methods := q.list("payment_method_types")
	if len(methods) == 0 {
		methods = []string{"card"}
	}
	for _, m := range methods {
		switch {
		case m != "card" && m != "pix":
			return nil, 0, invalid(http.StatusBadRequest, "parameter_invalid_string", "payment_method_types",
				"The payment method type %q is not simulated: only card and pix are.", m)
		case m == "pix" && currency != "brl":
			return nil, 0, invalid(http.StatusBadRequest, "", "payment_method_types",
				"The currency provided (%s) is invalid. Payment method type pix only supports: brl.", currency)
		}
	}
	secs := int64(pixDefaultSeconds)
	if v := q.get("payment_method_options[pix][expires_after_seconds]"); v != "" {
		n, ok := q.int("payment_method_options[pix][expires_after_seconds]")
		if !ok || n < pixMinSeconds || n > pixMaxSeconds {
			return nil, 0, invalid(http.StatusBadRequest, "parameter_invalid_integer", "payment_method_options[pix][expires_after_seconds]",
				"Invalid integer: %s: expires_after_seconds must be between %d and %d.", v, pixMinSeconds, pixMaxSeconds)
		}
		secs = n
	}
	if !contains(methods, "pix") {
		secs = 0
	}
	return methods, secs, nil
}

func (s *Sim) newSessionLocked(amount int64, currency, ref string, meta, intentMeta map[string]string) *session {
	now := time.Now()
	cs := &session{ID: s.newID("cs"), Status: "open", PaymentStatus: "unpaid", Amount: amount, Currency: currency,
		ClientRef: ref, Meta: meta, IntentMeta: intentMeta, Created: now.Unix(), ExpiresAt: now.Add(24 * time.Hour).Unix(),
		Methods: []string{"card"}}
	s.sessions[cs.ID] = cs
	s.order = append(s.order, cs.ID)
	return cs
}

func (s *Sim) getSession(q request) (any, *apiErr) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cs, ok := s.sessions[q.r.PathValue("id")]
	if !ok {
		return nil, noSuch("checkout.session", "session", q.r.PathValue("id"))
	}
	return s.sessionJSON(cs, q.list("expand")), nil
}

// listSessions serves GET /v1/checkout/sessions?payment_intent=…: the
// session that made a PaymentIntent.
func (s *Sim) listSessions(q request) (any, *apiErr) {
	s.mu.Lock()
	defer s.mu.Unlock()
	pi := q.get("payment_intent")
	var expand []string
	for _, e := range q.list("expand") {
		if rest, ok := strings.CutPrefix(e, "data."); ok {
			expand = append(expand, rest)
		}
	}
	data := []any{}
	for i := len(s.order) - 1; i >= 0; i-- {
		if cs := s.sessions[s.order[i]]; pi == "" || cs.Intent == pi {
			data = append(data, s.sessionJSON(cs, expand))
		}
		if len(data) == 10 {
			break
		}
	}
	return listJSON("/v1/checkout/sessions", data, false), nil
}

// expireSession serves POST /v1/checkout/sessions/{id}/expire: only an open
// session can be expired; its page takes no card any more.
func (s *Sim) expireSession(q request) (any, *apiErr) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cs, ok := s.sessions[q.r.PathValue("id")]
	if !ok {
		return nil, noSuch("checkout.session", "session", q.r.PathValue("id"))
	}
	if cs.Status != "open" {
		return nil, invalid(http.StatusBadRequest, "", "", `Only Checkout Sessions with a status in ["open"] can be expired. This Checkout Session has a status of %q.`, cs.Status)
	}
	cs.Status = "expired"
	if pi := s.intents[cs.Intent]; pi != nil {
		pi.Status, pi.CanceledAt, pi.Authenticating = "canceled", time.Now().Unix(), ""
	}
	s.emitLocked("checkout.session.expired", s.sessionJSON(cs, nil))
	return s.sessionJSON(cs, nil), nil
}

func (s *Sim) getIntent(q request) (any, *apiErr) {
	s.mu.Lock()
	defer s.mu.Unlock()
	pi, ok := s.intents[q.r.PathValue("id")]
	if !ok {
		return nil, noSuch("payment_intent", "intent", q.r.PathValue("id"))
	}
	return s.intentJSON(pi, q.list("expand")), nil
}

// refund serves POST /v1/refunds for a whole PaymentIntent (or charge).
func (s *Sim) refund(q request) (any, *apiErr) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var ch *charge
	if id := q.get("payment_intent"); id != "" {
		pi, ok := s.intents[id]
		if !ok {
			return nil, noSuch("payment_intent", "payment_intent", id)
		}
		ch = s.charges[pi.Charge]
		if ch == nil {
			return nil, invalid(http.StatusBadRequest, "charge_not_refundable", "payment_intent",
				"This PaymentIntent (%s) does not have a successful charge to refund.", id)
		}
	} else if id := q.get("charge"); id != "" {
		if ch = s.charges[id]; ch == nil {
			return nil, noSuch("charge", "charge", id)
		}
	} else {
		return nil, invalid(http.StatusBadRequest, "parameter_missing", "payment_intent", "One of the following params should be provided for this request: payment_intent or charge.")
	}
	// As Stripe: amount defaults to what is left; a refund never gives
	// back more than the charge kept (refunded and pending refunds count).
	left := ch.Amount - ch.AmountRefunded - s.pendingLocked(ch)
	amount := left
	if q.form.Get("amount") != "" {
		n, ok := q.int("amount")
		if !ok || n < 1 {
			return nil, invalid(http.StatusBadRequest, "parameter_invalid_integer", "amount", "Invalid positive integer")
		}
		amount = n
	}
	switch {
	case ch.Refunded:
		return nil, invalid(http.StatusBadRequest, "charge_already_refunded", "", "Charge %s has already been refunded.", ch.ID)
	case ch.Disputed:
		return nil, invalid(http.StatusBadRequest, "charge_disputed", "", "Charge %s has been charged back; cannot issue a refund.", ch.ID)
	case amount > left:
		return nil, invalid(http.StatusBadRequest, "amount_too_large", "amount",
			"Refund amount (%s) is greater than unrefunded amount on charge (%s)", cents(amount, ch.Currency), cents(left, ch.Currency))
	}
	if s.cfg.Faults.RefundsPending {
		re := &refund{ID: s.newID("re"), Charge: ch.ID, Intent: ch.Intent, Amount: amount, Currency: ch.Currency,
			Status: "pending", Created: time.Now().Unix()}
		s.refunds[re.ID] = re
		s.emitLocked("refund.created", s.refundJSON(re, nil))
		return s.refundJSON(re, nil), nil
	}
	re, e := s.giveBackLocked(ch, "refund", amount)
	if e != nil {
		return nil, e
	}
	return re, nil
}

// pendingLocked sums a charge's refunds not settled yet.
func (s *Sim) pendingLocked(ch *charge) int64 {
	var n int64
	for _, re := range s.refunds {
		if re.Charge == ch.ID && re.Status == "pending" {
			n += re.Amount
		}
	}
	return n
}

// cents writes an amount as Stripe's messages do ("$12.00" style, with
// the currency's code).
func cents(n int64, currency string) string {
	return fmt.Sprintf("%s %d.%02d", strings.ToUpper(currency), n/100, n%100)
}

// getRefund serves GET /v1/refunds/{id} (expand[]=payment_intent).
func (s *Sim) getRefund(q request) (any, *apiErr) {
	s.mu.Lock()
	defer s.mu.Unlock()
	re, ok := s.refunds[q.r.PathValue("id")]
	if !ok {
		return nil, noSuch("refund", "refund", q.r.PathValue("id"))
	}
	return s.refundJSON(re, q.list("expand")), nil
}

// SettleRefund ends a pending refund (Faults.RefundsPending) as the bank
// did: succeed moves the money (refund.updated, then charge.refunded, as
// for any refund); otherwise the refund fails and the charge keeps its
// money (refund.failed and charge.refund.updated, each with the refund
// object, status failed and its failure_reason).
func (s *Sim) SettleRefund(id string, succeed bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	re := s.refunds[id]
	if re == nil || re.Status != "pending" {
		return fmt.Errorf("refund %s is not pending", id)
	}
	ch := s.charges[re.Charge]
	if !succeed {
		re.Status, re.Failure = "failed", "expired_or_canceled_card"
		s.emitLocked("refund.failed", s.refundJSON(re, nil))
		s.emitLocked("charge.refund.updated", s.refundJSON(re, nil))
		return nil
	}
	re.Status = "succeeded"
	s.emitLocked("refund.updated", s.refundJSON(re, nil))
	s.moveBackLocked(ch, "refund", re.Amount)
	s.refundedLocked(ch, re.Amount)
	return nil
}

// PendingRefunds lists the ids of the refunds waiting to be settled.
func (s *Sim) PendingRefunds() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for id, re := range s.refunds {
		if re.Status == "pending" {
			out = append(out, id)
		}
	}
	sort.Strings(out)
	return out
}

// settleHandler serves POST /_sim/refunds/{id}/succeed and …/fail.
func (s *Sim) settleHandler(succeed bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := s.SettleRefund(r.PathValue("id"), succeed); err != nil {
			simError(w, err.Error())
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}
}

// giveBackLocked returns amount of a charge's money to the card holder:
// kind is "refund" or "dispute" (which takes what is left of the charge);
// the shop learns of it by webhook. It answers the refund or dispute
// object.
func (s *Sim) giveBackLocked(ch *charge, kind string, amount int64) (map[string]any, *apiErr) {
	switch {
	case ch.Refunded:
		return nil, invalid(http.StatusBadRequest, "charge_already_refunded", "", "Charge %s has already been refunded.", ch.ID)
	case ch.Disputed:
		return nil, invalid(http.StatusBadRequest, "charge_disputed", "", "Charge %s has been charged back; cannot issue a refund.", ch.ID)
	}
	now := time.Now().Unix()
	if kind == "dispute" {
		pi := s.moveBackLocked(ch, kind, ch.Amount-ch.AmountRefunded)
		ch.Disputed = true
		d := map[string]any{"id": s.newID("dp"), "object": "dispute", "amount": ch.Amount, "charge": ch.ID, "created": now,
			"currency": ch.Currency, "livemode": false, "metadata": map[string]string{}, "payment_intent": pi.ID,
			"reason": "fraudulent", "status": "needs_response", "is_charge_refundable": false, "balance_transactions": []any{},
			"evidence": map[string]any{}, "evidence_details": map[string]any{"due_by": now + 7*24*3600, "has_evidence": false,
				"past_due": false, "submission_count": 0}}
		s.emitLocked("charge.dispute.created", d)
		return d, nil
	}
	pi := s.moveBackLocked(ch, kind, amount)
	re := &refund{ID: s.newID("re"), Charge: ch.ID, Intent: pi.ID, Amount: amount, Currency: ch.Currency, Status: "succeeded", Created: now}
	s.refunds[re.ID] = re
	s.refundedLocked(ch, amount)
	return s.refundJSON(re, nil), nil
}

// refundedLocked records amount of a charge given back by a refund and
// tells the shop: charge.refunded follows every refund, a partial one
// too (refunded stays false until the whole charge is back), as Stripe's.
func (s *Sim) refundedLocked(ch *charge, amount int64) {
	ch.AmountRefunded += amount
	ch.Refunded = ch.AmountRefunded >= ch.Amount
	s.emitLocked("charge.refunded", s.chargeJSON(ch))
}

// moveBackLocked records amount of a charge's money going back (the
// ledger, the stats) and returns its PaymentIntent.
func (s *Sim) moveBackLocked(ch *charge, kind string, amount int64) *intent {
	pi := s.intents[ch.Intent]
	view := s.viewLocked(s.sessions[pi.Session], pi)
	view.Amount = amount
	s.givenBack[view.OrderID]++
	s.recordLocked(kind, view)
	return pi
}

// RefundAtPSP refunds a payment (a session, or a PaymentIntent) from the
// provider's side, as someone using its dashboard would.
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
	cs, pi := s.findLocked(id)
	if pi == nil || s.charges[pi.Charge] == nil {
		return psp.Payment{}, fmt.Errorf("payment %s has no charge to give back (%s)", id, kind)
	}
	ch := s.charges[pi.Charge]
	if _, e := s.giveBackLocked(ch, kind, ch.Amount-ch.AmountRefunded); e != nil {
		return psp.Payment{}, fmt.Errorf("%s: %s", e.Code, e.Message)
	}
	return s.viewLocked(cs, pi), nil
}

// findLocked finds a payment by its session or PaymentIntent id.
func (s *Sim) findLocked(id string) (*session, *intent) {
	if cs, ok := s.sessions[id]; ok {
		return cs, s.intents[cs.Intent]
	}
	if pi, ok := s.intents[id]; ok {
		return s.sessions[pi.Session], pi
	}
	return nil, nil
}

// Charge makes a Checkout Session that is paid at once without the shop's
// checkout — another integration on the same account, a Payment Link, a
// tampered session. Its metadata names c's order and reference, so tests
// can send the shop signed charges for the wrong amount, currency or
// reference.
func (s *Sim) Charge(c psp.CreatePayment) psp.Payment {
	s.mu.Lock()
	defer s.mu.Unlock()
	meta := map[string]string{}
	if c.OrderID != 0 {
		meta[psp.MetaOrder] = strconv.FormatInt(c.OrderID, 10)
	}
	if c.Reference != "" {
		meta[psp.MetaReference] = c.Reference
	}
	cs := s.newSessionLocked(c.Amount, strings.ToLower(c.Currency), c.Reference, meta, meta)
	cs.SuccessURL = c.ReturnURL
	s.payLocked(cs, CardVisa)
	return s.viewLocked(cs, s.intents[cs.Intent])
}

func (s *Sim) listEvents(q request) (any, *apiErr) {
	gte, _ := q.int("created[gte]")
	if gt, ok := q.int("created[gt]"); ok {
		gte = gt + 1
	}
	limit, ok := q.int("limit")
	if !ok {
		limit = 10
	}
	if limit < 1 || limit > 100 {
		return nil, invalid(http.StatusBadRequest, "parameter_invalid_integer", "limit", "Invalid integer: limit must be between 1 and 100.")
	}
	types := q.list("types")
	if t := q.get("type"); t != "" {
		types = append(types, t)
	}
	after := q.get("starting_after")
	s.mu.Lock()
	defer s.mu.Unlock()
	data := []any{}
	more, skipping := false, after != ""
	for i := len(s.events) - 1; i >= 0; i-- { // newest first, as Stripe lists
		e := s.events[i]
		if skipping {
			skipping = e.ID != after
			continue
		}
		if e.Created < gte || (len(types) > 0 && !contains(types, e.Type)) {
			continue
		}
		if int64(len(data)) == limit {
			more = true
			break
		}
		data = append(data, e.json())
	}
	return listJSON("/v1/events", data, more), nil
}

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

func listJSON(url string, data []any, more bool) map[string]any {
	return map[string]any{"object": "list", "data": data, "has_more": more, "url": url}
}

// event is one notification, its object as it was when it happened.
type event struct {
	ID      string
	Type    string
	Created int64
	Object  any
}

func (e event) json() map[string]any {
	return map[string]any{"id": e.ID, "object": "event", "api_version": stripe.APIVersion, "created": e.Created,
		"data": map[string]any{"object": e.Object}, "livemode": false, "pending_webhooks": 1,
		"request": map[string]any{"id": nil, "idempotency_key": nil}, "type": e.Type}
}

// emitLocked records an event and schedules its delivery. The object is
// copied through JSON: the event keeps the state it had.
func (s *Sim) emitLocked(typ string, obj any) {
	b, _ := json.Marshal(obj)
	var snapshot map[string]any
	json.Unmarshal(b, &snapshot)
	e := event{ID: s.newID("evt"), Type: typ, Created: time.Now().Unix(), Object: snapshot}
	s.events = append(s.events, e)
	f := s.cfg.Faults
	for range 1 + f.Duplicates {
		go s.deliver(e, f)
	}
}

// Sign returns the Stripe-Signature header of body at t.
func Sign(secret string, t time.Time, body []byte) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(ts + "."))
	m.Write(body)
	return "t=" + ts + ",v1=" + hex.EncodeToString(m.Sum(nil))
}

// EventBody is a new event of type typ about payment id (a session), as
// the simulator would send it, not recorded nor delivered: for tests that
// deliver a webhook by hand.
func (s *Sim) EventBody(typ, id string) []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	cs, pi := s.findLocked(id)
	var obj any = map[string]any{}
	switch {
	case cs != nil && strings.HasPrefix(typ, "checkout.session."):
		obj = s.sessionJSON(cs, nil)
	case pi != nil:
		obj = s.intentJSON(pi, nil)
	}
	b, _ := json.Marshal(event{ID: s.newID("evt"), Type: typ, Created: time.Now().Unix(), Object: obj}.json())
	return b
}

// deliver posts an event until the shop answers 2xx, backing off
// exponentially, like Stripe retrying for days (here: MaxAttempts).
func (s *Sim) deliver(e event, f Faults) {
	body, _ := json.Marshal(e.json())
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
		outage, url, secret := s.cfg.Faults.WebhookOutage, s.cfg.WebhookURL, s.cfg.Secret
		s.mu.Unlock()
		if outage || url == "" {
			continue
		}
		req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json; charset=utf-8")
		req.Header.Set("User-Agent", "Stripe/1.0 (+https://stripe.com/docs/webhooks)")
		req.Header.Set("Stripe-Signature", Sign(secret, time.Now(), body))
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
		Events: len(s.events), Payments: len(s.sessions)}
	for _, n := range s.opsBySec {
		st.MaxOpsPerSecond = max(st.MaxOpsPerSecond, n)
	}
	for k, v := range s.paid {
		st.Charges[k] = v
	}
	for k, v := range s.givenBack {
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

// simError answers a test control's error.
func simError(w http.ResponseWriter, msg string) {
	writeJSON(w, http.StatusBadRequest, invalid(http.StatusBadRequest, "", "", "%s", msg).body())
}

// chargeHandler serves POST /_sim/charges: Charge over HTTP, its body
// JSON {"amount", "currency", "order_id", "reference"}.
func (s *Sim) chargeHandler(w http.ResponseWriter, r *http.Request) {
	var c struct {
		Amount    int64  `json:"amount"`
		Currency  string `json:"currency"`
		OrderID   int64  `json:"order_id"`
		Reference string `json:"reference"`
	}
	if err := json.NewDecoder(r.Body).Decode(&c); err != nil || c.Amount <= 0 || len(c.Currency) != 3 {
		simError(w, "amount and currency are required")
		return
	}
	writeJSON(w, http.StatusOK, s.Charge(psp.CreatePayment{Amount: c.Amount, Currency: c.Currency, OrderID: c.OrderID, Reference: c.Reference}))
}

// dashboardHandler serves a provider-side action on payment {id}.
func (s *Sim) dashboardHandler(act func(id string) (psp.Payment, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		p, err := act(r.PathValue("id"))
		if err != nil {
			simError(w, err.Error())
			return
		}
		writeJSON(w, http.StatusOK, p)
	}
}

func (s *Sim) faultsHandler(w http.ResponseWriter, r *http.Request) {
	var f Faults
	if err := json.NewDecoder(r.Body).Decode(&f); err != nil {
		simError(w, err.Error())
		return
	}
	s.SetFaults(f)
	writeJSON(w, http.StatusOK, f)
}

// Payments lists the simulator's payments (Checkout Sessions), for tests
// and the simulator.
func (s *Sim) Payments() []psp.Payment {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]psp.Payment, 0, len(s.sessions))
	for _, id := range s.order {
		cs := s.sessions[id]
		out = append(out, s.viewLocked(cs, s.intents[cs.Intent]))
	}
	return out
}
