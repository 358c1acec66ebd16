package api

import (
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/catraca/catraca/shared/account"
	"github.com/catraca/catraca/shared/problem"
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
	a, err := s.accounts.SignUp(r.Context(), req.Email, req.Password, req.Name)
	if err != nil {
		return err
	}
	return s.startSession(w, r, a, http.StatusCreated)
}

func (s *Server) logIn(w http.ResponseWriter, r *http.Request) error {
	var req sessionRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	if req.Email == "" || req.Password == "" {
		return problem.New(http.StatusBadRequest, "invalid-field", "Both email and password are required.")
	}
	a, err := s.accounts.LogIn(r.Context(), req.Email, req.Password)
	if err != nil {
		return err
	}
	return s.startSession(w, r, a, http.StatusOK)
}

func (s *Server) startSession(w http.ResponseWriter, r *http.Request, a account.Account, status int) error {
	raw, exp, err := s.sessions.Issue(token.Claims{Account: a.ID, Role: a.Role}, s.cfg.SessionTTL)
	if err != nil {
		return err
	}
	http.SetCookie(w, &http.Cookie{
		Name: SessionCookie, Value: raw, Path: "/", Expires: exp, MaxAge: int(time.Until(exp).Seconds()),
		HttpOnly: true, Secure: isHTTPS(r), SameSite: http.SameSiteLaxMode,
	})
	writeJSON(w, status, sessionResponse{Account: a, Token: raw, ExpiresAt: exp})
	return nil
}

func (s *Server) logOut(w http.ResponseWriter, r *http.Request) error {
	http.SetCookie(w, &http.Cookie{
		Name: SessionCookie, Value: "", Path: "/", MaxAge: -1,
		HttpOnly: true, Secure: isHTTPS(r), SameSite: http.SameSiteLaxMode,
	})
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// isHTTPS tells whether the viewer used HTTPS, directly or via CloudFront.
func isHTTPS(r *http.Request) bool {
	return r.TLS != nil || r.Header.Get("X-Forwarded-Proto") == "https" ||
		r.Header.Get("CloudFront-Forwarded-Proto") == "https"
}

// bearer returns the token of an "Authorization: Bearer" header.
func bearer(r *http.Request) string {
	h := r.Header.Get("Authorization")
	if len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
		return strings.TrimSpace(h[7:])
	}
	return ""
}

var errNoSession = problem.New(http.StatusUnauthorized, "unauthenticated", "Log in to continue.")

// session returns the caller's verified session claims. Browsers send the
// cookie; API clients send the token as a bearer.
func (s *Server) session(r *http.Request) (token.Claims, error) {
	var candidates []string
	if c, err := r.Cookie(SessionCookie); err == nil && c.Value != "" {
		candidates = append(candidates, c.Value)
	}
	if b := bearer(r); b != "" {
		candidates = append(candidates, b)
	}
	for _, raw := range candidates {
		if c, err := s.sessions.Verify(raw); err == nil {
			return c, nil
		}
	}
	if len(candidates) > 0 {
		return token.Claims{}, problem.New(http.StatusUnauthorized, "session-expired",
			"Your session has expired or is invalid. Log in again.")
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
		return problem.New(http.StatusBadRequest, "invalid-account", strings.ToUpper(err.Error()[:1])+err.Error()[1:]+".")
	}
	return nil
}

// sessionAndID returns the caller's session and the {id} path value, the
// preamble of every account-scoped route.
func (s *Server) sessionAndID(r *http.Request) (token.Claims, int64, error) {
	sess, err := s.session(r)
	if err != nil {
		return sess, 0, err
	}
	id, err := pathID(r, "id")
	return sess, id, err
}
