// Package token issues and verifies catraca's HS256 JWTs: session tokens
// (who you are) and admission tokens (you may buy for this event now). Keys
// carry a kid so a new key can sign while the old one still verifies, and the
// algorithm is pinned so "alg: none" or RS/HS confusion is rejected.
package token

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/catraca/catraca/shared/config"
)

// Audiences keep a session token from being replayed as an admission token.
const (
	AudienceSession   = "catraca-session"
	AudienceAdmission = "catraca-admission"
	// AudienceQueue is the signed queue ticket: proof of a place in line
	// that survives a Redis failover.
	AudienceQueue = "catraca-queue"
	// AudienceEmail is the link mailed at sign-up that verifies the
	// account's email.
	AudienceEmail = "catraca-email"
)

// A session's email claim (emv): whether the account's email was
// verified when the session was issued, a risk signal of the join.
const (
	EmailUnknown    = 0 // a session issued before the claim existed
	EmailUnverified = 1
	EmailVerified   = 2
)

// ErrInvalid is returned for any token that must not be trusted.
var ErrInvalid = errors.New("invalid token")

// Claims are the fields catraca reads from its tokens.
type Claims struct {
	Account int64  // sub
	Role    string // session tokens only
	Event   int64  // evt, admission tokens and queue tickets
	Place   int64  // plc, queue tickets only
	Turn    int64  // trn, admission tokens only: the waiting-room turn they belong to
	Since   int64  // acs, session tokens: when the account was created (Unix seconds), a risk signal the join reads without a lookup
	Email   int64  // emv, session tokens: EmailUnverified or EmailVerified (EmailUnknown: not said)
	Device  string // dev, session tokens: risk.DeviceDigest of the device cookie the session was issued with ("" if none)
	ID      string // jti
	Expires time.Time
}

type jwtClaims struct {
	Role   string `json:"role,omitempty"`
	Event  int64  `json:"evt,omitempty"`
	Place  int64  `json:"plc,omitempty"`
	Turn   int64  `json:"trn,omitempty"`
	Since  int64  `json:"acs,omitempty"`
	Email  int64  `json:"emv,omitempty"`
	Device string `json:"dev,omitempty"`
	jwt.RegisteredClaims
}

// Signer signs with the first key and verifies with any of them.
type Signer struct {
	keys     []*signingKey
	byID     map[string]*signingKey
	byHeader map[string]*signingKey // the encoded header each key's tokens carry
	audience string
	now      func() time.Time
}

// NewSigner returns a signer for one audience. keys must not be empty.
func NewSigner(audience string, keys []config.Key) (*Signer, error) {
	if len(keys) == 0 {
		return nil, errors.New("token: no signing keys")
	}
	s := &Signer{byID: map[string]*signingKey{}, byHeader: map[string]*signingKey{}, audience: audience, now: time.Now}
	for _, k := range keys {
		nk := newKey(k)
		s.keys = append(s.keys, nk)
		s.byID[k.ID] = nk
		s.byHeader[nk.header] = nk
	}
	return s, nil
}

// Issue signs claims valid for ttl.
func (s *Signer) Issue(c Claims, ttl time.Duration) (string, time.Time, error) {
	now := s.now()
	exp := now.Add(ttl).Truncate(time.Second)
	return s.keys[0].token(c, s.audience, now.Unix(), exp.Unix()), exp, nil
}

// Verify checks signature, algorithm, kid, audience and expiry, with no lookup.
// Tokens in the form Issue writes are checked without encoding/json
// (verifyCompact); any other form goes through the JWT library.
func (s *Signer) Verify(raw string) (Claims, error) {
	if c, err, decided := s.verifyCompact(raw); decided {
		return c, err
	}
	return s.verifyJWT(raw)
}

// verifyJWT is Verify through the JWT library, for any form of token.
func (s *Signer) verifyJWT(raw string) (Claims, error) {
	var jc jwtClaims
	_, err := jwt.ParseWithClaims(raw, &jc, func(t *jwt.Token) (any, error) {
		kid, _ := t.Header["kid"].(string)
		k, ok := s.byID[kid]
		if !ok {
			return nil, fmt.Errorf("unknown kid %q", kid)
		}
		return k.secret, nil
	},
		jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}),
		jwt.WithAudience(s.audience),
		jwt.WithExpirationRequired(),
		jwt.WithTimeFunc(s.now),
	)
	if err != nil {
		return Claims{}, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	account, err := strconv.ParseInt(jc.Subject, 10, 64)
	if err != nil || account <= 0 {
		return Claims{}, fmt.Errorf("%w: bad subject", ErrInvalid)
	}
	return Claims{Account: account, Role: jc.Role, Event: jc.Event, Place: jc.Place, Turn: jc.Turn, Since: jc.Since, Email: jc.Email, Device: jc.Device, ID: jc.ID, Expires: jc.ExpiresAt.Time}, nil
}
