// Package fan is a Go client of catraca's public API as a fan's browser
// uses it: sign up, wait in the queue, hold, pay on the PSP's page, read the
// order. The on-sale simulator and the browser tests drive it.
package fan

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Fan is one fan's session (a cookie jar) against a base URL.
type Fan struct {
	Base    string
	Account int64
	client  *http.Client
	// Observe, when set, sees every call's route and latency.
	Observe func(route string, status int, d time.Duration)
	// Solve, when set, answers a challenged join (see Solver).
	Solve Solver
	guard
}

// New returns a fan with an empty cookie jar; transport may be shared.
func New(base string, transport http.RoundTripper) *Fan {
	jar, _ := cookiejar.New(nil)
	return &Fan{Base: strings.TrimRight(base, "/"), client: &http.Client{Jar: jar, Transport: transport, Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// Error is a non-2xx answer with its problem details.
type Error struct {
	Status     int
	Code       string
	Detail     string
	RetryAfter time.Duration
	Body       map[string]any
}

func (e *Error) Error() string { return fmt.Sprintf("%d %s: %s", e.Status, e.Code, e.Detail) }

// Call sends one request; out (if not nil) receives the JSON answer.
func (f *Fan) Call(ctx context.Context, route, method, path string, body, out any, header ...string) error {
	var raw []byte
	if body != nil {
		var err error
		if raw, err = json.Marshal(body); err != nil {
			return err
		}
	}
	req, err := http.NewRequestWithContext(ctx, method, f.Base+path, bytes.NewReader(raw))
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if method != http.MethodGet {
		sum := sha256.Sum256(raw)
		req.Header.Set("x-amz-content-sha256", hex.EncodeToString(sum[:]))
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	start := time.Now()
	res, err := f.client.Do(req)
	if err != nil {
		if f.Observe != nil {
			f.Observe(route, 0, time.Since(start))
		}
		return err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if f.Observe != nil {
		f.Observe(route, res.StatusCode, time.Since(start))
	}
	if err != nil {
		return err
	}
	if res.StatusCode >= 300 {
		e := &Error{Status: res.StatusCode}
		if json.Unmarshal(b, &e.Body) == nil {
			e.Detail, _ = e.Body["detail"].(string)
			t, _ := e.Body["type"].(string)
			e.Code = t[strings.LastIndex(t, "/")+1:]
		}
		if s, err := strconv.Atoi(res.Header.Get("Retry-After")); err == nil {
			e.RetryAfter = time.Duration(s) * time.Second
		}
		return e
	}
	if out != nil && len(b) > 0 {
		return json.Unmarshal(b, out)
	}
	return nil
}

type sessionAnswer struct {
	Account struct {
		ID int64 `json:"id"`
	} `json:"account"`
}

// SignUp creates the account and keeps its session.
func (f *Fan) SignUp(ctx context.Context, email, password, name string) error {
	var a sessionAnswer
	err := f.Call(ctx, "signup", http.MethodPost, "/api/accounts", map[string]string{"email": email, "password": password, "name": name}, &a)
	f.Account = a.Account.ID
	return err
}

// LogIn starts a session for an existing account.
func (f *Fan) LogIn(ctx context.Context, email, password string) error {
	var a sessionAnswer
	err := f.Call(ctx, "login", http.MethodPost, "/api/session", map[string]string{"email": email, "password": password}, &a)
	f.Account = a.Account.ID
	return err
}

// QueueStatus is the fan's own state in a waiting room.
type QueueStatus struct {
	State     string     `json:"state"`
	Position  int64      `json:"position"`
	Ahead     int64      `json:"ahead"`
	DrawAt    *time.Time `json:"draw_at"`
	Admission string     `json:"admission_token"`
	Poll      struct {
		ProgressMs int64 `json:"progress_every_ms"`
		StatusMs   int64 `json:"status_every_ms"`
	} `json:"poll"`
}

// Progress is the shared, edge-cached picture of a waiting room.
type Progress struct {
	Phase    string `json:"phase"`
	Served   int64  `json:"served"`
	Waiting  int64  `json:"waiting"`
	Prequeue int64  `json:"prequeue"`
	Active   int64  `json:"active"`
	Ceiling  int64  `json:"ceiling"`
	Admitted int64  `json:"admitted_total"`
	PerMin   int64  `json:"admitted_last_minute"`
	SoldOut  bool   `json:"sold_out"`
	Paused   bool   `json:"paused"` // the organizer paused admission
	// AdmitAt is when admission starts (at or a little after the draw).
	AdmitAt time.Time `json:"admission_starts_at"`
}

// Join takes a place in the event's waiting room. A challenged join is
// answered with f.Solve and sent again, once.
// A room that is opening (the sale just opened, its line not yet
// published) gives no place: the join is sent again, as the page does.
func (f *Fan) Join(ctx context.Context, event int64) (QueueStatus, error) {
	var body any // the challenge's answer, once one was asked
	for {
		var s QueueStatus
		err := f.Call(ctx, "queue.join", http.MethodPost, fmt.Sprintf("/api/events/%d/queue", event), body, &s)
		if e, ok := challenged(err); ok && body == nil {
			a, aerr := f.answer(ctx, e)
			if aerr != nil {
				return s, aerr
			}
			body = a
			continue
		}
		if err != nil || s.State != "opening" {
			return s, err
		}
		select {
		case <-time.After(500*time.Millisecond + mrand.N(time.Second)):
		case <-ctx.Done():
			return s, ctx.Err()
		}
	}
}

// Status reads the fan's own place (and picks up the admission cookie).
func (f *Fan) Status(ctx context.Context, event int64) (QueueStatus, error) {
	var s QueueStatus
	return s, f.Call(ctx, "queue.status", http.MethodGet, fmt.Sprintf("/api/events/%d/queue", event), nil, &s)
}

// Leave gives up the fan's place or shopping slot.
func (f *Fan) Leave(ctx context.Context, event int64) error {
	return f.Call(ctx, "queue.leave", http.MethodDelete, fmt.Sprintf("/api/events/%d/queue", event), nil, nil)
}

// Progress reads the shared progress.
func (f *Fan) Progress(ctx context.Context, event int64) (Progress, error) {
	var p Progress
	return p, f.Call(ctx, "queue.progress", http.MethodGet, fmt.Sprintf("/api/events/%d/queue/progress", event), nil, &p)
}

// Hold is the answer to a hold request.
type Hold struct {
	HoldID    int64     `json:"hold_id"`
	OrderID   int64     `json:"order_id"`
	Total     int64     `json:"total_cents"`
	ExpiresAt time.Time `json:"expires_at"`
	Items     []struct {
		SeatID     int64  `json:"seat_id"`
		SeatIndex  int    `json:"seat_index"`
		Quantity   int    `json:"quantity"`
		Label      string `json:"label"`
		PriceLevel string `json:"price_level"`
		PriceCents int    `json:"price_cents"`
	} `json:"items"`
}

// HoldSeats holds seats by id; HoldBest and HoldGA the other two shapes.
// Each reports its latency as "hold.<shape>".
func (f *Fan) HoldSeats(ctx context.Context, event int64, seats []int64) (Hold, error) {
	return f.hold(ctx, event, "seats", map[string]any{"seats": seats})
}

// HoldBest holds the best n adjacent seats ("" section: anywhere).
func (f *Fan) HoldBest(ctx context.Context, event int64, n int, section string) (Hold, error) {
	best := map[string]any{"quantity": n}
	if section != "" {
		best["section"] = section
	}
	return f.hold(ctx, event, "best", map[string]any{"best": best})
}

// HoldGA holds n places of a general-admission pool.
func (f *Fan) HoldGA(ctx context.Context, event int64, pool string, n int) (Hold, error) {
	return f.hold(ctx, event, "ga", map[string]any{"pool": pool, "quantity": n})
}

func (f *Fan) hold(ctx context.Context, event int64, shape string, body map[string]any) (Hold, error) {
	var h Hold
	return h, f.Call(ctx, "hold."+shape, http.MethodPost, fmt.Sprintf("/api/events/%d/holds", event), body, &h, "Idempotency-Key", newKey())
}

// Release lets a hold go.
func (f *Fan) Release(ctx context.Context, hold int64) error {
	return f.Call(ctx, "release", http.MethodDelete, fmt.Sprintf("/api/holds/%d", hold), nil, nil)
}

// Order is the part of an order the clients read.
type Order struct {
	ID      int64      `json:"id"`
	EventID int64      `json:"event_id"`
	Status  string     `json:"status"`
	PaidAt  *time.Time `json:"paid_at"`
	Payment *struct {
		Status string `json:"status"`
		URL    string `json:"url"`
	} `json:"payment"`
	Tickets []struct {
		ID int64 `json:"id"`
	} `json:"tickets"`
}

// Checkout starts payment; the URL is empty while the PSP call is queued.
func (f *Fan) Checkout(ctx context.Context, order int64) (string, Order, error) {
	var v struct {
		Order      Order  `json:"order"`
		PaymentURL string `json:"payment_url"`
	}
	err := f.Call(ctx, "checkout", http.MethodPost, fmt.Sprintf("/api/orders/%d/checkout", order), nil, &v)
	return v.PaymentURL, v.Order, err
}

// Order reads one order.
func (f *Fan) Order(ctx context.Context, order int64) (Order, error) {
	var o Order
	return o, f.Call(ctx, "order", http.MethodGet, fmt.Sprintf("/api/orders/%d", order), nil, &o)
}

// PayOnPage submits a card on the PSP simulator's hosted page, as the fan
// does in the browser.
func (f *Fan) PayOnPage(ctx context.Context, paymentURL, card string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, paymentURL, strings.NewReader(url.Values{"card": {card}}.Encode()))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	start := time.Now()
	res, err := f.client.Do(req)
	if err != nil {
		return err
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if f.Observe != nil {
		f.Observe("psp.pay", res.StatusCode, time.Since(start))
	}
	if res.StatusCode >= 400 {
		return &Error{Status: res.StatusCode, Code: "payment-page", Detail: res.Status}
	}
	return nil
}

func newKey() string {
	b := make([]byte, 16)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// SetSession puts a session token in the jar, as a log-in would.
func (f *Fan) SetSession(raw string) {
	u, err := url.Parse(f.Base)
	if err != nil {
		return
	}
	f.client.Jar.SetCookies(u, []*http.Cookie{{Name: "catraca_session", Value: raw, Path: "/"}})
}

// Retry repeats a call through 429 and 503 answers (rate limits, the
// fail-closed waiting room) honouring Retry-After, as the web client does;
// other answers and errors return at once.
func Retry[T any](ctx context.Context, call func() (T, error)) (T, error) {
	for attempt := 0; ; attempt++ {
		v, err := call()
		var e *Error
		if err == nil || !errors.As(err, &e) || (e.Status != 429 && e.Status != 503) || attempt >= 20 || ctx.Err() != nil {
			return v, err
		}
		wait := e.RetryAfter
		if wait <= 0 || wait > 3*time.Second {
			wait = time.Second
		}
		select {
		case <-time.After(wait/2 + mrand.N(wait)):
		case <-ctx.Done():
			return v, ctx.Err()
		}
	}
}
