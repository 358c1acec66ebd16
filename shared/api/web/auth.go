package web

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/catraca/catraca/shared/problem"
	"github.com/catraca/catraca/shared/token"
)

// SessionCookie carries the session JWT for browsers.
const SessionCookie = "catraca_session"

// Revocations remember logged-out sessions (token.Revocations over Redis).
type Revocations interface {
	Revoke(ctx context.Context, jti string, until time.Time) error
	Revoked(ctx context.Context, jti string) (bool, error)
}

// Auth checks the caller's session: its signature, its revocation and,
// for cookies on writes, that it came from this site.
type Auth struct {
	Sessions *token.Signer
	Revoked  Revocations
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
// that was logged out. The revocation check is one Redis EXISTS; when Redis
// is down it is skipped (fail open, like the admission gate), so buying
// goes on through a Redis outage.
func (s *Auth) Session(r *http.Request) (token.Claims, error) {
	c, err := s.SignedSession(r)
	if err != nil {
		return c, err
	}
	revoked, err := s.Revoked.Revoked(r.Context(), c.ID)
	if err != nil {
		s.Log.Warn("session revocation check skipped", "err", err)
	} else if revoked {
		return token.Claims{}, ErrSessionExpired
	}
	return c, nil
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
	"This request came from another site, so it was Refused. Open catraca directly and try again.")

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
