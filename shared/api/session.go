package api

import (
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/catraca/catraca/shared/account"
	"github.com/catraca/catraca/shared/problem"
	"github.com/catraca/catraca/shared/rediskey"
	"github.com/catraca/catraca/shared/token"
)

// SessionCookie carries the session JWT for browsers.
const SessionCookie = "catraca_session"

type sessionRequest struct {
	Email    string `json:"email"`
	Password string `json:"password"`
}

type signUpRequest struct {
	Email    string `json:"email"`
	Password string `json:"password"`
	Name     string `json:"name"`
}

type sessionResponse struct {
	Account   account.Account `json:"account"`
	Token     string          `json:"token"`
	ExpiresAt time.Time       `json:"expires_at"`
}

func (s *Server) signUp(w http.ResponseWriter, r *http.Request) error {
	var req signUpRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	if err := s.throttleIP(r, "signup"); err != nil {
		return err
	}
	a, err := s.accounts.SignUp(r.Context(), req.Email, req.Password, req.Name)
	if err != nil {
		return err
	}
	device, err := s.seeDevice(r, a.ID)
	if err != nil {
		return err
	}
	return s.startSession(w, r, a, http.StatusCreated, device)
}

func (s *Server) logIn(w http.ResponseWriter, r *http.Request) error {
	var req sessionRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	if req.Email == "" || req.Password == "" {
		return problem.New(http.StatusBadRequest, "invalid-field", "Both email and password are required.")
	}
	// The email's bucket applies whether or not the account exists, so
	// throttling tells nothing about which emails are registered.
	if err := s.throttleIP(r, "login"); err != nil {
		return err
	}
	if err := s.throttle(r, "login:email:"+emailKey(req.Email), logInPerEmail); err != nil {
		return err
	}
	a, err := s.accounts.LogIn(r.Context(), req.Email, req.Password)
	if err != nil {
		return err
	}
	device, err := s.seeDevice(r, a.ID)
	if err != nil {
		return err
	}
	return s.startSession(w, r, a, http.StatusOK, device)
}

func (s *Server) startSession(w http.ResponseWriter, r *http.Request, a account.Account, status int, device *http.Cookie) error {
	raw, exp, err := s.sessions.Issue(token.Claims{Account: a.ID, Role: a.Role, Since: accountSince(a)}, s.cfg.SessionTTL)
	if err != nil {
		return err
	}
	http.SetCookie(w, &http.Cookie{
		Name: SessionCookie, Value: raw, Path: "/", Expires: exp, MaxAge: int(time.Until(exp).Seconds()),
		HttpOnly: true, Secure: isHTTPS(r), SameSite: http.SameSiteLaxMode,
	})
	if device != nil {
		http.SetCookie(w, device)
	}
	writeJSON(w, status, sessionResponse{Account: a, Token: raw, ExpiresAt: exp})
	return nil
}

// logOut revokes the session the request carries (cookie and bearer) until
// it would have expired, and clears the cookie.
func (s *Server) logOut(w http.ResponseWriter, r *http.Request) error {
	var buf [2]credential
	for _, cred := range sessionCandidates(r, &buf) {
		c, err := s.sessions.Verify(cred.raw)
		if err != nil {
			continue
		}
		if err := s.redis.Set(r.Context(), s.revokedKey(c), 1, time.Until(c.Expires)+time.Second).Err(); err != nil {
			p := problem.New(http.StatusServiceUnavailable, "temporarily-unavailable",
				"We could not log you out just now. Try again in a few seconds.")
			p.RetryAfter = 2
			return p.Wrap(err)
		}
	}
	expireCookie(w, r, SessionCookie, "/")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// revokedKey marks a logged-out session, in its account's slot: the
// session check reads it with the account's block and velocity flag in
// one MGET (checkedSession).
func (s *Server) revokedKey(c token.Claims) string {
	return rediskey.Account(s.cfg.RedisPrefix, c.Account) + "revoked:" + c.ID
}

// isHTTPS tells whether the viewer used HTTPS, directly or via CloudFront.
func isHTTPS(r *http.Request) bool {
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

var errNoSession = problem.New(http.StatusUnauthorized, "unauthenticated", "Log in to continue.")

// credential is a session token and where the request carried it.
type credential struct {
	raw    string
	cookie bool
}

// sessionCandidates lists the session tokens a request carries: the cookie
// (browsers) and the bearer (API clients), in buf (the caller's stack:
// every join and status call asks).
func sessionCandidates(r *http.Request, buf *[2]credential) []credential {
	out := buf[:0]
	if c, err := r.Cookie(SessionCookie); err == nil && c.Value != "" {
		out = append(out, credential{c.Value, true})
	}
	if b := bearer(r); b != "" {
		out = append(out, credential{b, false})
	}
	return out
}

// session returns the caller's verified session claims, refusing a session
// that was logged out or whose account is blocked (checkedSession).
func (s *Server) session(r *http.Request) (token.Claims, error) {
	c, _, err := s.checkedSession(r)
	return c, err
}

var errSessionExpired = problem.New(http.StatusUnauthorized, "session-expired",
	"Your session has expired, was logged out or is invalid. Log in again.")

// signedSession returns the session claims on their signature alone, with
// no lookup. Only the waiting room's join and status use it directly: they
// are the requests millions of fans send, and a logged-out token can at most
// keep a place in line; holds, orders and every other route call session.
func (s *Server) signedSession(r *http.Request) (token.Claims, error) {
	var buf [2]credential
	candidates := sessionCandidates(r, &buf)
	for _, cred := range candidates {
		c, err := s.sessions.Verify(cred.raw)
		if err != nil {
			continue
		}
		// A browser sends the cookie on its own; a bearer is sent on purpose.
		if cred.cookie && unsafeMethod(r.Method) {
			if err := s.sameOrigin(r); err != nil {
				return token.Claims{}, err
			}
		}
		return c, nil
	}
	if len(candidates) > 0 {
		return token.Claims{}, errSessionExpired
	}
	return token.Claims{}, errNoSession
}

// accountError maps account sentinels to problems.
func accountError(err error) error {
	switch {
	case errors.Is(err, account.ErrEmailTaken):
		return problem.New(http.StatusConflict, "email-taken", "An account with this email already exists. Log in instead.")
	case errors.Is(err, account.ErrInvalidCredentials):
		return problem.New(http.StatusUnauthorized, "invalid-credentials", "Wrong email or password.")
	case errors.Is(err, account.ErrWeakPassword), errors.Is(err, account.ErrInvalidInput):
		return refused(err, http.StatusBadRequest, "invalid-account")
	}
	return nil
}

// sessionAndID returns the caller's session and the {id} path value, the
// preamble of every account-scoped route.
func (s *Server) sessionAndID(r *http.Request) (token.Claims, int64, error) {
	return withID(r)(s.session(r))
}

// signedSessionAndID is sessionAndID for the waiting room's hot routes
// (see signedSession).
func (s *Server) signedSessionAndID(r *http.Request) (token.Claims, int64, error) {
	return withID(r)(s.signedSession(r))
}

func withID(r *http.Request) func(token.Claims, error) (token.Claims, int64, error) {
	return func(sess token.Claims, err error) (token.Claims, int64, error) {
		if err != nil {
			return sess, 0, err
		}
		id, err := pathID(r, "id")
		return sess, id, err
	}
}
