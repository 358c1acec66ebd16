package fan

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/catraca/catraca/shared/challenge"
	"github.com/catraca/catraca/shared/fairness"
	"github.com/catraca/catraca/shared/risk"
)

// Device is one browser: the cookies every account used on it shares (a
// first-party device cookie among them), apart from each account's own
// session and admission cookies. A scalper farm runs many accounts on a
// few devices; an ordinary fan has a device of its own.
type Device struct {
	jar http.CookieJar
	// ID is the device cookie the server set at this browser's first
	// log-in (fairness.NewDeviceID's form).
	ID string
}

// NewDevice returns a device with no cookies yet and the id its first
// log-in will be given.
func NewDevice() *Device {
	jar, _ := cookiejar.New(nil)
	return &Device{jar: jar, ID: fairness.NewDeviceID()}
}

// OnDevice returns a fan whose cookies, but for its account's own, are
// those of d.
func OnDevice(base string, transport http.RoundTripper, d *Device) *Fan {
	f := New(base, transport)
	f.client.Jar = &accountJar{own: f.client.Jar, device: d.jar}
	if u, err := url.Parse(base); err == nil {
		d.jar.SetCookies(u, []*http.Cookie{{Name: risk.DeviceCookie, Value: d.ID, Path: "/"}})
	}
	return f
}

// accountJar keeps an account's own cookies apart and the rest on the
// device.
type accountJar struct{ own, device http.CookieJar }

// ownCookie: the cookies that belong to the signed-in account, not the
// browser (shared/api's SessionCookie and admission cookies).
func ownCookie(name string) bool {
	return name == "catraca_session" || strings.HasPrefix(name, "catraca_admission")
}

func (j *accountJar) SetCookies(u *url.URL, cookies []*http.Cookie) {
	var own, device []*http.Cookie
	for _, c := range cookies {
		if ownCookie(c.Name) {
			own = append(own, c)
		} else {
			device = append(device, c)
		}
	}
	j.own.SetCookies(u, own)
	j.device.SetCookies(u, device)
}

func (j *accountJar) Cookies(u *url.URL) []*http.Cookie {
	return append(j.own.Cookies(u), j.device.Cookies(u)...)
}

// Solver answers the challenge a join was given (a proof-of-work puzzle)
// with what the join sends back. It is a hook so the simulator can solve
// at CPU speed with the server's own solver once the challenge exists.
type Solver func(ctx context.Context, challenge json.RawMessage) (answer json.RawMessage, err error)

// challengeRequired is the problem type (its last path segment) of a join
// that must first solve the challenge in the problem's "challenge" member;
// the join is then sent again with the Solver's answer as its body.
const challengeRequired = "challenge-required"

// Challenged tells how often the fan's joins were challenged, and how long
// solving took in all.
func (f *Fan) Challenged() (n int, solving time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.challenges, f.solving
}

// answer solves the challenge of a join refused with challengeRequired.
func (f *Fan) answer(ctx context.Context, e *Error) (json.RawMessage, error) {
	if f.Solve == nil {
		return nil, fmt.Errorf("join challenged and no solver: %w", e)
	}
	raw, err := json.Marshal(e.Body["challenge"])
	if err != nil {
		return nil, err
	}
	start := time.Now()
	a, err := f.Solve(ctx, raw)
	f.mu.Lock()
	f.challenges++
	f.solving += time.Since(start)
	f.mu.Unlock()
	return a, err
}

// challenged is the challenge problem of a join, if err is one.
func challenged(err error) (*Error, bool) {
	var e *Error
	return e, errors.As(err, &e) && e.Code == challengeRequired
}

// Transfer sends a ticket to the account with email.
func (f *Fan) Transfer(ctx context.Context, ticket int64, email string) error {
	return f.Call(ctx, "transfer", http.MethodPost, fmt.Sprintf("/api/tickets/%d/transfer", ticket), map[string]string{"email": email}, nil)
}

// guard is the fan's counters, for the rare calls that run concurrently.
type guard struct {
	mu         sync.Mutex
	challenges int
	solving    time.Duration
}

// SolvePoW is the Solver of the shipped proof-of-work challenge: the
// server's own solver at CPU speed, answered as the page answers.
func SolvePoW(_ context.Context, raw json.RawMessage) (json.RawMessage, error) {
	var c challenge.Challenge
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, err
	}
	if c.Kind != challenge.KindPoW {
		return nil, fmt.Errorf("a %q challenge: only the proof-of-work can be solved here", c.Kind)
	}
	return json.Marshal(challenge.Answer{Token: c.Token, Solution: challenge.Solve(c)})
}
