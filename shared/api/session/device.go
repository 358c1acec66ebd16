package session

import (
	"net/http"
	"time"

	"github.com/catraca/catraca/shared/api/web"
	"github.com/catraca/catraca/shared/fairness"
	"github.com/catraca/catraca/shared/risk"
)

// The device identifier (risk.DeviceCookie) is a random id the API sets at
// sign-up and log-in when the browser has none, read back at the next
// (docs/fairness.md). Nothing is read from the browser to make it (no
// fingerprinting).

// deviceCookieAge is as long as browsers keep a cookie (400 days).
const deviceCookieAge = 400 * 24 * time.Hour

// seeDevice records the device an account signs up or logs in from,
// and refuses a blocked account. It returns the device cookie to set
// (after the session's): the browser's, or a new one if it had none (or
// one we did not make).
func (s *Handlers) seeDevice(r *http.Request, account int64) (*http.Cookie, error) {
	if s.Fairness == nil {
		return nil, nil
	}
	device := ""
	if c, err := r.Cookie(risk.DeviceCookie); err == nil && fairness.ValidDeviceID(c.Value) {
		device = c.Value
	} else {
		device = fairness.NewDeviceID()
	}
	cookie := &http.Cookie{
		Name: risk.DeviceCookie, Value: device, Path: "/", MaxAge: int(deviceCookieAge.Seconds()),
		HttpOnly: true, Secure: web.IsHTTPS(r), SameSite: http.SameSiteLaxMode,
	}
	blocked, err := s.Fairness.SeenDevice(r.Context(), account, device)
	if err != nil {
		return nil, err
	}
	if blocked {
		// Restores the copy sessions read if Redis lost it.
		if err := s.Fairness.Reblock(r.Context(), account); err != nil {
			s.Auth.Log.Warn("block not copied to redis", "account", account, "err", err)
		}
		return nil, web.ErrBlocked
	}
	return cookie, nil
}
