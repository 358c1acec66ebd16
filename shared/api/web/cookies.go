package web

import (
	"net/http"
	"strings"
	"time"
)

// SetTokenCookie sets an HttpOnly, SameSite=Lax cookie holding a token
// (base64url and dots: nothing to escape), written as http.SetCookie
// writes it (TestTokenCookieIsNetHTTPs) for a fraction of its cost: joins
// and status calls set one or two on every answer.
func SetTokenCookie(w http.ResponseWriter, r *http.Request, name, token, path string, expires time.Time) {
	var c strings.Builder // its buffer becomes the string: one allocation
	c.Grow(len(name) + len(token) + len(path) + 90)
	c.WriteString(name)
	c.WriteByte('=')
	c.WriteString(token)
	c.WriteString("; Path=")
	c.WriteString(path)
	c.WriteString("; Expires=")
	var at [len(http.TimeFormat)]byte
	c.Write(expires.UTC().AppendFormat(at[:0], http.TimeFormat))
	c.WriteString("; HttpOnly")
	if IsHTTPS(r) {
		c.WriteString("; Secure")
	}
	c.WriteString("; SameSite=Lax")
	h := w.Header()
	h["Set-Cookie"] = append(h["Set-Cookie"], c.String())
}

// ExpireCookie tells the browser to drop a cookie set by this API.
func ExpireCookie(w http.ResponseWriter, r *http.Request, name, path string) {
	http.SetCookie(w, &http.Cookie{Name: name, Path: path, MaxAge: -1, HttpOnly: true, Secure: IsHTTPS(r), SameSite: http.SameSiteLaxMode})
}
