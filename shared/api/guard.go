package api

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/netip"
	"net/url"
	"strings"

	"github.com/catraca/catraca/shared/problem"
)

// bucket is a token-bucket limit: a burst and a steady rate per second.
type bucket struct {
	burst     int
	perSecond float64
}

// logInPerEmail makes guessing slow (10 tries, then one every 30 s) whether
// or not the account exists. Per address the limit is config.AuthPerIP, a
// generous one: a carrier's NAT puts thousands of fans behind one IPv4
// address, so the address only stops a single client hammering the service.
var logInPerEmail = bucket{10, 1.0 / 30}

// throttleIP spends a token of the per-address bucket named kind.
func (s *Server) throttleIP(r *http.Request, kind string) error {
	ip, ok := clientIP(r)
	if !ok {
		return nil
	}
	return s.throttle(r, kind+":ip:"+ip, bucket{s.cfg.AuthPerIP, float64(s.cfg.AuthPerIP) / 60})
}

// throttle spends one token of a bucket. When Redis is down it lets the
// request through (fail open): sessions are stateless and must keep working.
func (s *Server) throttle(r *http.Request, key string, b bucket) error {
	wait, err := s.limiter.Allow(r.Context(), key, b.burst, b.perSecond)
	if err != nil {
		s.log.Warn("throttle skipped", "key", key, "err", err)
		return nil
	}
	if wait > 0 {
		return problem.New(http.StatusTooManyRequests, "too-many-attempts",
			"Too many attempts. Wait a little (see Retry-After) and try again.").RetryIn(wait)
	}
	return nil
}

// emailKey is a bucket name for an email, in any case, without storing it.
func emailKey(email string) string {
	sum := sha256.Sum256([]byte(strings.ToLower(strings.TrimSpace(email))))
	return hex.EncodeToString(sum[:12])
}

// clientIP is the viewer's address: CloudFront-Viewer-Address behind
// CloudFront (and the local gateway, which sets it the same way), else the
// peer. An IPv6 address counts as its /64, the block one subscriber gets.
// A request CloudFront forwarded without the viewer's address has none
// (ok false): its peer is an edge server that many viewers share.
func clientIP(r *http.Request) (ip string, ok bool) {
	addr := r.RemoteAddr
	if v := r.Header.Get("CloudFront-Viewer-Address"); v != "" {
		addr = v // "ip:port", IPv6 unbracketed
	} else if r.Header.Get("X-Amz-Cf-Id") != "" {
		return "", false
	}
	if i := strings.LastIndexByte(addr, ':'); i > 0 {
		addr = addr[:i]
	}
	a, err := netip.ParseAddr(strings.Trim(addr, "[]"))
	if err != nil {
		return "", false
	}
	if a.Is6() && !a.Is4In6() {
		p, _ := a.Prefix(64)
		return p.String(), true
	}
	return a.Unmap().String(), true
}

// unsafeMethod tells whether a request may change state.
func unsafeMethod(m string) bool {
	return m != http.MethodGet && m != http.MethodHead && m != http.MethodOptions
}

var errCrossSite = problem.New(http.StatusForbidden, "cross-site-request",
	"This request came from another site, so it was refused. Open catraca directly and try again.")

// sameOrigin refuses a cookie-authenticated write that a browser sent from
// another origin (CSRF). Browsers send Sec-Fetch-Site, older ones Origin; a
// client sending neither is not a browser acting for someone else.
func (s *Server) sameOrigin(r *http.Request) error {
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
	if pub, err := url.Parse(s.cfg.PublicURL); err == nil && pub.Scheme == u.Scheme && pub.Host == u.Host {
		return nil
	}
	if sameHost(u.Host, r.Host) || sameHost(u.Host, r.Header.Get("X-Forwarded-Host")) {
		return nil
	}
	return errCrossSite
}

func sameHost(a, b string) bool { return b != "" && strings.EqualFold(a, b) }
