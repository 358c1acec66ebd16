package web

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/catraca/catraca/shared/account"
	"github.com/catraca/catraca/shared/fairness"
	"github.com/catraca/catraca/shared/problem"
	"github.com/catraca/catraca/shared/token"
)

// SessionCookie carries the session JWT for browsers.
const SessionCookie = "catraca_session"

// Standings read a session's standing: logged out, blocked, over the
// velocity threshold (fairness.Service).
type Standings interface {
	Standing(ctx context.Context, c token.Claims) (fairness.Standing, error)
	// Window is the velocity window, for the message of a paused hold.
	Window() time.Duration
}

// Roles read an account's role.
type Roles interface {
	Role(ctx context.Context, account int64) (string, error)
}

// Auth checks the caller's session: its signature, its standing (not
// logged out, its account not blocked) and, for cookies on writes, that
// it came from this site.
type Auth struct {
	Sessions *token.Signer
	Standing Standings
	// Roles reads an account's role for the organizer routes
	// (account.Service).
	Roles Roles
	// PublicURL is the site's own origin, always same-origin.
	PublicURL string
	Log       *slog.Logger
}

// IsHTTPS tells whether the viewer used HTTPS, directly or via CloudFront.
func IsHTTPS(r *http.Request) bool {
	return r.TLS != nil || r.Header.Get("X-Forwarded-Proto") == "https" ||
		r.Header.Get("Cloudfront-Forwarded-Proto") == "https" // CloudFront-…, spelled canonically: Get need not build the key
}

// TokenHeader carries an API client's bearer token from the edge to the
// API: CloudFront's OAC signs every origin request in Authorization,
// overwriting the client's "Authorization: Bearer", so the viewer-request
// function copies the token here first (edge/function/viewer-request.js).
const TokenHeader = "X-Catraca-Token"

// BearerToken is the token an API client sent as "Authorization: Bearer".
func BearerToken(r *http.Request) string { return bearer(r) }

// bearer returns the client's bearer token: the edge's copy when it came
// through CloudFront, else the Authorization header (the API called
// directly, as the local tests and tools do).
func bearer(r *http.Request) string {
	if t := r.Header.Get(TokenHeader); t != "" {
		return t
	}
	h := r.Header.Get("Authorization")
	if len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
		return strings.TrimSpace(h[7:])
	}
	return ""
}

var ErrNoSession = problem.New(http.StatusUnauthorized, "unauthenticated", "Log in to continue.")

// Credential is a session token and where the request carried it.
type Credential struct {
	Raw    string
	Cookie bool
}

// SessionCandidates lists the session tokens a request carries: the cookie
// (browsers) and the bearer (API clients), in buf (the caller's stack:
// every join and status call asks).
func SessionCandidates(r *http.Request, buf *[2]Credential) []Credential {
	out := buf[:0]
	if c, err := r.Cookie(SessionCookie); err == nil && c.Value != "" {
		out = append(out, Credential{c.Value, true})
	}
	if b := bearer(r); b != "" {
		out = append(out, Credential{b, false})
	}
	return out
}

// Session returns the caller's verified session claims, refusing a session
// that was logged out or whose account is blocked (checkedSession).
func (s *Auth) Session(r *http.Request) (token.Claims, error) {
	c, _, err := s.checkedSession(r)
	return c, err
}

// checkedSession is Session, also telling whether the account is over
// the velocity threshold. The revocation, the block and the flag are in
// the account's Redis slot: one MGET (fairness.Service.Standing). When
// Redis is down it is skipped (fail open, like the admission gate), so
// buying goes on through a Redis outage.
func (s *Auth) checkedSession(r *http.Request) (token.Claims, bool, error) {
	c, err := s.SignedSession(r)
	if err != nil {
		return c, false, err
	}
	st, err := s.Standing.Standing(r.Context(), c)
	switch {
	case err != nil:
		s.Log.Warn("session revocation check skipped", "err", err)
		return c, false, nil
	case st.Revoked:
		return token.Claims{}, false, ErrSessionExpired
	case st.Blocked:
		return token.Claims{}, false, ErrBlocked
	}
	return c, st.Flagged, nil
}

// OrganizerSession is Session for the organizer routes: the role is read
// from the catalog, not the token, so a promotion or a demotion applies
// at once (organizer routes are rare and write to the catalog anyway).
func (s *Auth) OrganizerSession(r *http.Request) (token.Claims, error) {
	sess, err := s.Session(r)
	if err != nil {
		return sess, err
	}
	role, err := s.Roles.Role(r.Context(), sess.Account)
	if err != nil {
		return sess, err
	}
	if role != account.RoleOrganizer {
		return sess, problem.New(http.StatusForbidden, "organizer-only", "Only organizer accounts can do this.")
	}
	return sess, nil
}

// ErrBlocked refuses an account an organizer blocked.
var ErrBlocked = problem.New(http.StatusForbidden, "account-blocked",
	"This account is blocked: an event organizer found it linked to other accounts buying more tickets than one fan may. "+
		"If this is a mistake, write to the organizer of your event; they can unblock it.")

// UnflaggedSessionAndID is SessionAndID for holds: an account over the
// velocity threshold may not take a new hold until its window has passed.
func (s *Auth) UnflaggedSessionAndID(r *http.Request) (token.Claims, int64, error) {
	return withID(r)(s.unflaggedSession(r))
}

func (s *Auth) unflaggedSession(r *http.Request) (token.Claims, error) {
	c, flagged, err := s.checkedSession(r)
	if err == nil && flagged {
		p := problem.New(http.StatusTooManyRequests, "purchase-velocity",
			fmt.Sprintf("This account, its card or its device bought tickets more often than a fan does within %s, across events, "+
				"so new holds are paused for now. If this is a mistake, write to the organizer of your event.", humanWindow(s.Standing.Window())))
		return token.Claims{}, p.RetryIn(time.Hour)
	}
	return c, err
}

func humanWindow(d time.Duration) string {
	if d >= 48*time.Hour && d%(24*time.Hour) == 0 {
		return fmt.Sprintf("%d days", d/(24*time.Hour))
	}
	return d.String()
}

var ErrSessionExpired = problem.New(http.StatusUnauthorized, "session-expired",
	"Your session has expired, was logged out or is invalid. Log in again.")

// SignedSession returns the session claims on their signature alone, with
// no lookup. Only the waiting room's join and status use it directly: they
// are the requests millions of fans send, and a logged-out token can at most
// keep a place in line; holds, orders and every other route call session.
func (s *Auth) SignedSession(r *http.Request) (token.Claims, error) {
	var buf [2]Credential
	candidates := SessionCandidates(r, &buf)
	for _, cred := range candidates {
		c, err := s.Sessions.Verify(cred.Raw)
		if err != nil {
			continue
		}
		// A browser sends the cookie on its own; a bearer is sent on purpose.
		if cred.Cookie && UnsafeMethod(r.Method) {
			if err := s.sameOrigin(r); err != nil {
				return token.Claims{}, err
			}
		}
		return c, nil
	}
	if len(candidates) > 0 {
		return token.Claims{}, ErrSessionExpired
	}
	return token.Claims{}, ErrNoSession
}

// SessionAndID returns the caller's session and the {id} path value, the
// preamble of every account-scoped route.
func (s *Auth) SessionAndID(r *http.Request) (token.Claims, int64, error) {
	return withID(r)(s.Session(r))
}

// SignedSessionAndID is SessionAndID for the waiting room's hot routes
// (see SignedSession).
func (s *Auth) SignedSessionAndID(r *http.Request) (token.Claims, int64, error) {
	return withID(r)(s.SignedSession(r))
}

func withID(r *http.Request) func(token.Claims, error) (token.Claims, int64, error) {
	return func(sess token.Claims, err error) (token.Claims, int64, error) {
		if err != nil {
			return sess, 0, err
		}
		id, err := PathID(r, "id")
		return sess, id, err
	}
}

// UnsafeMethod tells whether a request may change state.
func UnsafeMethod(m string) bool {
	return m != http.MethodGet && m != http.MethodHead && m != http.MethodOptions
}

var errCrossSite = problem.New(http.StatusForbidden, "cross-site-request",
	"This request came from another site, so it was refused. Open catraca directly and try again.")

// sameOrigin refuses a cookie-authenticated write that a browser sent from
// another origin (CSRF). Browsers send Sec-Fetch-Site, older ones Origin; a
// client sending neither is not a browser acting for someone else.
func (s *Auth) sameOrigin(r *http.Request) error {
	switch r.Header.Get("Sec-Fetch-Site") {
	case "same-origin":
		return nil
	case "":
	default:
		return errCrossSite
	}
	origin := r.Header.Get("Origin")
	if origin == "" {
		return nil
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return errCrossSite
	}
	if pub, err := url.Parse(s.PublicURL); err == nil && pub.Scheme == u.Scheme && pub.Host == u.Host {
		return nil
	}
	if sameHost(u.Host, r.Host) || sameHost(u.Host, r.Header.Get("X-Forwarded-Host")) {
		return nil
	}
	return errCrossSite
}

func sameHost(a, b string) bool { return b != "" && strings.EqualFold(a, b) }
