package session

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/catraca/catraca/shared/account"
	"github.com/catraca/catraca/shared/api/web"
	"github.com/catraca/catraca/shared/order"
	"github.com/catraca/catraca/shared/problem"
	"github.com/catraca/catraca/shared/token"
)

// EmailLinks mail an account a link that proves its owner reads the
// address: a token of audience catraca-email naming the account, valid
// linkTTL, opened on the web app's /verify-email page. Nothing is stored
// until the link is used (docs/accounts.md).
type EmailLinks struct {
	Signer    *token.Signer // AudienceEmail
	Mailer    order.Mailer
	PublicURL string
}

// linkTTL is how long a verification link works.
const linkTTL = 7 * 24 * time.Hour

// send mails a the verification link; the mail's key makes a resend
// replace the last one.
func (l *EmailLinks) send(ctx context.Context, a account.Account) error {
	raw, _, err := l.Signer.Issue(token.Claims{Account: a.ID}, linkTTL)
	if err != nil {
		return err
	}
	link := strings.TrimSuffix(l.PublicURL, "/") + "/verify-email?token=" + raw
	return l.Mailer.Send(ctx, order.Mail{Key: "verify-" + strconv.FormatInt(a.ID, 10), To: a.Email, Subject: "Verify your email",
		Body: "Open this link to confirm that this address is yours (it works for 7 days):\n\n" + link + "\n\n" +
			"A verified email makes the waiting room's check less likely to stop you.\n"})
}

// mailLink mails a new account its link; a failure is logged, not the
// sign-up's: the fan can ask again (POST /api/me/email-verification).
func (s *Handlers) mailLink(r *http.Request, a account.Account) {
	if s.Emails == nil {
		return
	}
	if err := s.Emails.send(r.Context(), a); err != nil {
		s.Auth.Log.Warn("email verification mail", "account", a.ID, "err", err)
	}
}

var errBadLink = problem.New(http.StatusUnprocessableEntity, "invalid-verification",
	"This verification link is not valid or has expired (a link works for 7 days). Log in and ask for a new one.")

// verifyEmail serves POST /api/accounts/email-verification {token}: the
// link's account is marked verified. When the request carries a live
// session of that account, the session is issued again, so the waiting
// room sees the verified email at once.
func (s *Handlers) verifyEmail(w http.ResponseWriter, r *http.Request) error {
	var req struct {
		Token string `json:"token"`
	}
	if err := web.Decode(r, &req); err != nil {
		return err
	}
	if s.Emails == nil || req.Token == "" {
		return errBadLink
	}
	c, err := s.Emails.Signer.Verify(req.Token)
	if err != nil {
		return errBadLink
	}
	a, err := s.Accounts.VerifyEmail(r.Context(), c.Account)
	if errors.Is(err, account.ErrNoAccount) {
		return errBadLink
	}
	if err != nil {
		return err
	}
	if sess, err := s.Auth.Session(r); err == nil && sess.Account == a.ID {
		return s.startSession(w, r, a, http.StatusOK, nil, sess.Device)
	}
	web.WriteJSON(w, http.StatusOK, map[string]any{"account": a})
	return nil
}

// resendLink serves POST /api/me/email-verification: the session's
// account is mailed a new link.
func (s *Handlers) resendLink(w http.ResponseWriter, r *http.Request) error {
	sess, err := s.Auth.Session(r)
	if err != nil {
		return err
	}
	if err := s.Limits.IP(r, "verify"); err != nil {
		return err
	}
	if s.Emails == nil {
		return problem.New(http.StatusServiceUnavailable, "temporarily-unavailable", "Verification mail is not available here.")
	}
	email, err := s.Accounts.Email(r.Context(), sess.Account)
	if err != nil {
		return err
	}
	if err := s.Emails.send(r.Context(), account.Account{ID: sess.Account, Email: email}); err != nil {
		return err
	}
	w.WriteHeader(http.StatusAccepted)
	return nil
}

// emailClaim is the session's email claim for a.
func emailClaim(a account.Account) int64 {
	if a.EmailVerified {
		return token.EmailVerified
	}
	return token.EmailUnverified
}
