package challenge

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// The providers' server-side verification endpoints.
const (
	TurnstileVerifyURL = "https://challenges.cloudflare.com/turnstile/v0/siteverify"
	HCaptchaVerifyURL  = "https://api.hcaptcha.com/siteverify"
)

// Hosted is a CAPTCHA run by a provider (Turnstile, hCaptcha): the page
// renders the provider's widget with SiteKey and sends its response token as
// the answer's solution; Verify posts it with Secret to the provider's
// siteverify endpoint. Both providers accept a response token once and
// for a few minutes, so no Redis key is spent here. Binding to the
// account and event: the page passes "<account>.<event>" as the widget's
// cdata (Turnstile returns it; hCaptcha has no such field, so there the
// binding is the token's single use and short life).
type Hosted struct {
	Kind      Kind
	SiteKey   string
	Secret    string
	VerifyURL string // the provider's by default
	Client    *http.Client
	TTL       time.Duration
}

// Issue tells the page to render the widget.
func (h *Hosted) Issue(Subject) (Challenge, error) {
	return Challenge{Kind: h.Kind, SiteKey: h.SiteKey, ExpiresAt: time.Now().Add(h.TTL).UTC()}, nil
}

// siteverify is the part of both providers' answers Verify reads.
type siteverify struct {
	Success bool     `json:"success"`
	Errors  []string `json:"error-codes"`
	CData   string   `json:"cdata"`
}

// Verify asks the provider whether the widget's token is good.
func (h *Hosted) Verify(ctx context.Context, s Subject, a Answer) error {
	if a.Solution == "" || len(a.Solution) > 4096 {
		return refused(ReasonInvalid, "Complete the check on the page, then join again.")
	}
	form := url.Values{"secret": {h.Secret}, "response": {a.Solution}}
	if s.RemoteIP != "" {
		form.Set("remoteip", s.RemoteIP)
	}
	target := h.VerifyURL
	if target == "" {
		target = TurnstileVerifyURL
		if h.Kind == KindHCaptcha {
			target = HCaptchaVerifyURL
		}
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, strings.NewReader(form.Encode()))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	client := h.Client
	if client == nil {
		client = http.DefaultClient
	}
	res, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	defer res.Body.Close()
	var v siteverify
	if res.StatusCode != http.StatusOK || json.NewDecoder(res.Body).Decode(&v) != nil {
		return fmt.Errorf("%w: %s answered %d", ErrUnavailable, target, res.StatusCode)
	}
	switch {
	case !v.Success:
		return refused(ReasonInvalid, "The check did not pass ("+strings.Join(v.Errors, ", ")+"). Try it again.")
	// A Turnstile token without cdata is bound to nobody (a CAPTCHA
	// farm's tokens would serve any account): it is refused too.
	case h.Kind == KindTurnstile && v.CData != strconv.FormatInt(s.Account, 10)+"."+strconv.FormatInt(s.Event, 10):
		return refused(ReasonWrongSubject, "This check was passed for another account or event.")
	}
	return nil
}
