package session

import (
	"errors"
	"net/http"
	"time"

	"github.com/catraca/catraca/shared/account"
	"github.com/catraca/catraca/shared/api/web"
	"github.com/catraca/catraca/shared/problem"
	"github.com/catraca/catraca/shared/risk"
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

func (s *Handlers) signUp(w http.ResponseWriter, r *http.Request) error {
	var req signUpRequest
	if err := web.Decode(r, &req); err != nil {
		return err
	}
	if err := s.Limits.IP(r, "signup"); err != nil {
		return err
	}
	a, err := s.Accounts.SignUp(r.Context(), req.Email, req.Password, req.Name)
	if err != nil {
		return err
	}
	device, err := s.seeDevice(r, a.ID)
	if err != nil {
		return err
	}
	s.mailLink(r, a)
	return s.startSession(w, r, a, http.StatusCreated, device, "")
}

func (s *Handlers) logIn(w http.ResponseWriter, r *http.Request) error {
	var req sessionRequest
	if err := web.Decode(r, &req); err != nil {
		return err
	}
	if req.Email == "" || req.Password == "" {
		return problem.New(http.StatusBadRequest, "invalid-field", "Both email and password are required.")
	}
	// The email's bucket applies whether or not the account exists, so
	// throttling tells nothing about which emails are registered.
	if err := s.Limits.IP(r, "login"); err != nil {
		return err
	}
	if err := s.Limits.Take(r, "login:email:"+web.EmailKey(req.Email), web.LogInPerEmail); err != nil {
		return err
	}
	a, err := s.Accounts.LogIn(r.Context(), req.Email, req.Password)
	if err != nil {
		return err
	}
	device, err := s.seeDevice(r, a.ID)
	if err != nil {
		return err
	}
	return s.startSession(w, r, a, http.StatusOK, device, "")
}

// startSession issues a's session, naming the device cookie it is issued
// with (the one set with it, or dev, a digest kept from the session it
// replaces).
func (s *Handlers) startSession(w http.ResponseWriter, r *http.Request, a account.Account, status int, device *http.Cookie, dev string) error {
	if device != nil {
		dev = risk.DeviceDigest(device.Value)
	}
	raw, exp, err := s.Auth.Sessions.Issue(token.Claims{Account: a.ID, Role: a.Role, Since: accountSince(a), Email: emailClaim(a), Device: dev}, s.TTL)
	if err != nil {
		return err
	}
	http.SetCookie(w, &http.Cookie{
		Name: SessionCookie, Value: raw, Path: "/", Expires: exp, MaxAge: int(time.Until(exp).Seconds()),
		HttpOnly: true, Secure: web.IsHTTPS(r), SameSite: http.SameSiteLaxMode,
	})
	if device != nil {
		http.SetCookie(w, device)
	}
	web.WriteJSON(w, status, sessionResponse{Account: a, Token: raw, ExpiresAt: exp})
	return nil
}

// logOut revokes the session the request carries (cookie and bearer) until
// it would have expired, and clears the cookie.
func (s *Handlers) logOut(w http.ResponseWriter, r *http.Request) error {
	var buf [2]web.Credential
	for _, cred := range web.SessionCandidates(r, &buf) {
		c, err := s.Auth.Sessions.Verify(cred.Raw)
		if err != nil {
			continue
		}
		if err := s.Revocations.Revoke(r.Context(), c); err != nil {
			p := problem.New(http.StatusServiceUnavailable, "temporarily-unavailable",
				"We could not log you out just now. Try again in a few seconds.")
			p.RetryAfter = 2
			return p.Wrap(err)
		}
	}
	web.ExpireCookie(w, r, SessionCookie, "/")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// accountSince is the session claim of when the account was created (0
// when unknown): the join's account-age signal, read without a lookup.
func accountSince(a account.Account) int64 {
	if a.CreatedAt.IsZero() {
		return 0
	}
	return a.CreatedAt.Unix()
}

// AccountError maps account sentinels to problems.
func AccountError(err error) error {
	switch {
	case errors.Is(err, account.ErrEmailTaken):
		return problem.New(http.StatusConflict, "email-taken", "An account with this email already exists. Log in instead.")
	case errors.Is(err, account.ErrInvalidCredentials):
		return problem.New(http.StatusUnauthorized, "invalid-credentials", "Wrong email or password.")
	case errors.Is(err, account.ErrWeakPassword), errors.Is(err, account.ErrInvalidInput):
		return web.Refused(err, http.StatusBadRequest, "invalid-account")
	}
	return nil
}
