package room

import (
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"time"

	"github.com/catraca/catraca/shared/api/web"
	"github.com/catraca/catraca/shared/challenge"
	"github.com/catraca/catraca/shared/problem"
	"github.com/catraca/catraca/shared/risk"
	"github.com/catraca/catraca/shared/token"
)

// Door is the adaptive challenge in front of the waiting room's line: a
// join is scored from cheap signals, and a risky one must pass the
// challenge before it gets a place (docs/fairness.md). Clean traffic pays
// nothing: its signals come from the session token and the headers. The
// wiring builds it from the configuration (app.NewLineDoor); a nil Door
// lets every join in.
type Door struct {
	Port     challenge.Port
	Rules    risk.Rules
	Counter  *risk.Counter
	Velocity risk.VelocityPort
	Now      func() time.Time
}

// joinAnswer is the optional body of a join: a solved challenge.
type joinAnswer = challenge.Answer

// maxSolution is the longest solution a join takes (openapi.json's
// ChallengeAnswer): a hosted CAPTCHA's response token fits in it.
const maxSolution = 4096

// pass lets a join through the door, or refuses it with the challenge to
// solve (428 challenge-required) or the reason its answer failed (403
// challenge-failed). A fan holding a valid queue ticket for this event
// already passed: its place is not questioned again.
func (d *Door) pass(r *http.Request, sess token.Claims, eventID, restore int64) error {
	if d == nil || restore > 0 {
		return nil
	}
	ip, _ := web.ClientIP(r)
	subject := challenge.Subject{Account: sess.Account, Event: eventID, RemoteIP: ip}
	var a joinAnswer
	if sent, err := web.DecodeOptional(r, &a); err != nil {
		return err
	} else if sent && (a.Token != "" || a.Solution != "") {
		if len(a.Solution) > maxSolution {
			return problem.New(http.StatusBadRequest, "invalid-field",
				fmt.Sprintf("The solution is %d bytes; a solution has at most %d (the proof of work's is a decimal nonce).", len(a.Solution), maxSolution))
		}
		return d.verify(r, subject, a)
	}
	sig := risk.Signals{Bot: r.Header.Get(risk.BotHeader),
		EmailKnown: sess.Email != token.EmailUnknown, EmailVerified: sess.Email == token.EmailVerified}
	if sess.Since > 0 {
		sig.Since = time.Unix(sess.Since, 0)
	}
	// A device cookie counts when it is the one this session was issued
	// with (a device the account signed up or logged in from); a session
	// older than the dev claim takes the cookie as it comes.
	if c, err := r.Cookie(risk.DeviceCookie); err == nil && (sess.Device == "" || risk.DeviceDigest(c.Value) == sess.Device) {
		sig.Device = c.Value
	}
	now := d.Now()
	score := d.Rules.Free(sig, now)
	if d.Rules.NeedsCounts(score) {
		var err error
		sig.DeviceJoins, sig.NetJoins, err = d.Counter.Count(r.Context(), eventID, sig.Device, viewerNetwork(ip), now)
		if err != nil {
			return queueUnavailable(err)
		}
		sig.Velocity = d.Velocity.Flag(r.Context(), sess.Account, sig.Device)
		score = d.Rules.Counted(score, sig)
	}
	if !d.Rules.Challenged(score) {
		return nil
	}
	subject.Risk = score.Points
	c, err := d.Port.Issue(subject)
	if err != nil {
		return err
	}
	return problem.New(http.StatusPreconditionRequired, "challenge-required",
		"Before you get a place in line, this page has a short check to do. It runs by itself; keep the page open.").
		With("challenge", c).With("risk", score.Reasons.String())
}

// verify checks a solved challenge; one that passes lets the join in.
func (d *Door) verify(r *http.Request, s challenge.Subject, a joinAnswer) error {
	err := d.Port.Verify(r.Context(), s, a)
	var no *challenge.Refused
	switch {
	case err == nil:
		return nil
	case errors.As(err, &no):
		return problem.New(http.StatusForbidden, "challenge-failed", no.Detail).With("reason", no.Reason)
	case errors.Is(err, challenge.ErrUnavailable):
		return queueUnavailable(err)
	}
	return err
}

// viewerNetwork is the /24 (or /64) of a viewer's address, or "" for an
// address that is not a viewer's network: loopback and private ones are a
// proxy's or a test's.
func viewerNetwork(ip string) string {
	a, err := netip.ParseAddr(ip)
	if err == nil && (a.IsLoopback() || a.IsPrivate()) {
		return ""
	}
	if p, err := netip.ParsePrefix(ip); err == nil && (p.Addr().IsLoopback() || p.Addr().IsPrivate()) {
		return ""
	}
	return risk.Network(ip)
}
