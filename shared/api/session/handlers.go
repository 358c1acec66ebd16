// Package session is the HTTP face of accounts: signing up, logging in and
// out, and the device cookie that links accounts (docs/fairness.md).
// Other groups check the session through web.Auth.
package session

import (
	"time"

	"github.com/catraca/catraca/shared/account"
	"github.com/catraca/catraca/shared/api/web"
	"github.com/catraca/catraca/shared/fairness"
	"github.com/catraca/catraca/shared/token"
)

// Handlers serve the account and session routes.
type Handlers struct {
	Accounts *account.Service
	// Auth issues sessions (Auth.Sessions); Revocations revoke them on
	// log-out.
	Auth        *web.Auth
	Revocations *token.Revocations
	// Fairness records the device of each sign-up and log-in and refuses
	// a blocked account (nil: neither).
	Fairness *fairness.Service
	Limits   *web.Throttle
	TTL      time.Duration
	// Emails mail the link that verifies an account's email (nil: none
	// is mailed, and no link verifies).
	Emails *EmailLinks
}

// Mount registers the routes on m.
func (s *Handlers) Mount(m *web.Mux) {
	m.Route("POST /api/accounts", s.signUp)
	m.Route("POST /api/session", s.logIn)
	m.Route("DELETE /api/session", s.logOut)
	m.Route("POST /api/accounts/email-verification", s.verifyEmail)
	m.Route("POST /api/me/email-verification", s.resendLink)
}
