// Package challenge is the test a risky fan passes before the waiting room
// gives a place. It is a port (Port): proof-of-work (PoW), which the page
// solves in a Web Worker, is the implementation catraca ships and tests; a
// hosted CAPTCHA (Cloudflare Turnstile, hCaptcha) plugs in by configuration
// (Hosted). See docs/fairness.md.
package challenge

import (
	"context"
	"errors"
	"time"
)

// Kind names an implementation, as the page reads it.
type Kind string

// The kinds of challenge.
const (
	KindPoW       Kind = "pow"
	KindTurnstile Kind = "turnstile"
	KindHCaptcha  Kind = "hcaptcha"
)

// Challenge is what a risky join is answered with (the problem's
// "challenge" member).
type Challenge struct {
	Kind Kind `json:"kind"`
	// Token is the signed puzzle (pow): find a nonce such that
	// SHA-256(token ":" nonce) starts with Bits zero bits.
	Token     string `json:"token,omitempty"`
	Bits      int    `json:"bits,omitempty"`
	Algorithm string `json:"algorithm,omitempty"`
	// SiteKey renders the hosted widget (turnstile, hcaptcha).
	SiteKey   string    `json:"site_key,omitempty"`
	ExpiresAt time.Time `json:"expires_at"`
}

// Answer is what the page sends back with the join.
type Answer struct {
	// Token is the puzzle answered (pow); empty for a hosted CAPTCHA.
	Token string `json:"challenge"`
	// Solution is the nonce (pow) or the widget's response token.
	Solution string `json:"solution"`
}

// Subject is who is challenged, for what, and how risky the join looked.
type Subject struct {
	Account, Event int64
	Risk           int
	RemoteIP       string // passed to hosted verifiers; may be ""
}

// Port issues and verifies challenges.
type Port interface {
	Issue(s Subject) (Challenge, error)
	// Verify accepts an answer once; a refused one is a *Refused.
	Verify(ctx context.Context, s Subject, a Answer) error
}

// Refused says why an answer does not pass.
type Refused struct {
	Reason string // expired, replayed, wrong-subject, too-easy, invalid
	Detail string
}

func (e *Refused) Error() string { return "challenge " + e.Reason + ": " + e.Detail }

// Reasons an answer is refused.
const (
	ReasonInvalid      = "invalid"
	ReasonExpired      = "expired"
	ReasonReplayed     = "replayed"
	ReasonWrongSubject = "wrong-subject"
	ReasonTooEasy      = "too-easy"
)

func refused(reason, detail string) error { return &Refused{Reason: reason, Detail: detail} }

// ErrUnavailable is a verifier that could not decide (Redis, or the hosted
// service, did not answer): the join fails closed and is retried.
var ErrUnavailable = errors.New("challenge: verifier unavailable")

// Difficulty turns a risk score into leading zero bits: Base at the
// threshold, Step more for each point above it, never above Max.
type Difficulty struct {
	Threshold, Base, Step, Max int
}

// Bits is the difficulty for risk.
func (d Difficulty) Bits(risk int) int {
	b := d.Base + max(0, risk-d.Threshold)*d.Step
	return min(b, d.Max)
}
