package token

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"hash"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/catraca/catraca/shared/config"
)

// The waiting room verifies a session on every join and status call, the
// requests millions of fans send. A generic JWT parse spends most of its
// time in encoding/json and in building a fresh HMAC, so tokens in the
// exact form Issue writes (header byte-for-byte one of ours, a flat claims
// object) are signed and checked here by hand with pooled HMAC states. The
// tokens are ordinary HS256 JWTs all the same (the edge verifies them), and
// the checks are the library's: signature first, then expiry (required),
// not-before, audience and subject.

// signingKey is one key with the header its tokens carry.
type signingKey struct {
	secret []byte
	header string // base64url of {"alg":"HS256","kid":…,"typ":"JWT"}, as the JWT library writes it
	macs   sync.Pool
}

// macState is a pooled HMAC with scratch space for a token's parts.
type macState struct {
	mac    hash.Hash
	buf    []byte
	claims []byte // a token's claims being issued, as JSON
	sum    [sha256.Size]byte
}

func newKey(k config.Key) *signingKey {
	// A map marshals with sorted keys: the same bytes the JWT library wrote.
	h, _ := json.Marshal(map[string]string{"alg": "HS256", "kid": k.ID, "typ": "JWT"})
	nk := &signingKey{secret: k.Secret, header: base64.RawURLEncoding.EncodeToString(h)}
	nk.macs.New = func() any {
		return &macState{mac: hmac.New(sha256.New, k.Secret), buf: make([]byte, 0, 2048), claims: make([]byte, 0, 512)}
	}
	return nk
}

// sign returns the HMAC-SHA256 of input (in m.sum).
func (m *macState) sign(input []byte) []byte {
	m.mac.Reset()
	m.mac.Write(input)
	return m.mac.Sum(m.sum[:0])
}

// token returns the token of claims c signed with k. Its parts are written
// in the pooled state's buffers, so that issuing allocates the token alone:
// a join issues one on every call.
func (k *signingKey) token(c Claims, audience string, iat, exp int64) string {
	m := k.macs.Get().(*macState)
	defer k.macs.Put(m)
	m.claims = appendClaims(m.claims[:0], c, audience, iat, exp)
	b := append(append(m.buf[:0], k.header...), '.')
	b = append(base64.RawURLEncoding.AppendEncode(b, m.claims), '.')
	m.buf = base64.RawURLEncoding.AppendEncode(b, m.sign(b[:len(b)-1]))
	return string(m.buf)
}

// appendClaims appends the claims of a token as JSON, in the fields and
// order the JWT library used (role, evt, plc, trn, acs, emv, dev, sub, aud, exp, iat,
// jti); a claims without an ID gets a random one (12 bytes, base64url).
func appendClaims(j []byte, c Claims, audience string, iat, exp int64) []byte {
	j = append(j, '{')
	if c.Role != "" {
		j = appendString(append(j, `"role":`...), c.Role)
		j = append(j, ',')
	}
	for _, f := range []struct {
		name string
		v    int64
	}{{`"evt":`, c.Event}, {`"plc":`, c.Place}, {`"trn":`, c.Turn}, {`"acs":`, c.Since}, {`"emv":`, c.Email}} {
		if f.v != 0 {
			j = strconv.AppendInt(append(j, f.name...), f.v, 10)
			j = append(j, ',')
		}
	}
	if c.Device != "" {
		j = appendString(append(j, `"dev":`...), c.Device)
		j = append(j, ',')
	}
	j = strconv.AppendInt(append(j, `"sub":"`...), c.Account, 10)
	j = appendString(append(j, `","aud":[`...), audience)
	j = strconv.AppendInt(append(j, `],"exp":`...), exp, 10)
	j = strconv.AppendInt(append(j, `,"iat":`...), iat, 10)
	j = append(j, `,"jti":`...)
	if c.ID == "" {
		var id [12]byte
		rand.Read(id[:])
		j = append(base64.RawURLEncoding.AppendEncode(append(j, '"'), id[:]), '"')
	} else {
		j = appendString(j, c.ID)
	}
	return append(j, '}')
}

// appendString appends s as a JSON string.
func appendString(b []byte, s string) []byte {
	if plain(s) {
		return append(append(append(b, '"'), s...), '"')
	}
	q, _ := json.Marshal(s)
	return append(b, q...)
}

// plain tells whether s is printable ASCII that JSON (and encoding/json,
// which also escapes <, > and &) writes as it is.
func plain(s string) bool {
	for i := range len(s) {
		if c := s[i]; c < 0x20 || c >= 0x80 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}

// verifyCompact checks a token whose header is one of the signer's and
// whose claims are a flat object (as Issue writes them). decided is false
// for any other token, which Verify hands to the JWT library.
func (s *Signer) verifyCompact(raw string) (c Claims, err error, decided bool) {
	header, rest, ok := strings.Cut(raw, ".")
	if !ok {
		return Claims{}, nil, false
	}
	k := s.byHeader[header]
	payload, sig, ok := strings.Cut(rest, ".")
	if k == nil || !ok || strings.Contains(sig, ".") || len(raw) > 1024 {
		return Claims{}, nil, false
	}
	m := k.macs.Get().(*macState)
	defer k.macs.Put(m)
	// buf: the token, then its decoded signature, then its decoded claims.
	input := len(header) + 1 + len(payload)
	m.buf = append(m.buf[:0], raw...)
	tok, scratch := m.buf, m.buf[len(raw):cap(m.buf)]
	want := m.sign(tok[:input])
	n, err := base64.RawURLEncoding.Decode(scratch, tok[input+1:])
	if err != nil {
		return Claims{}, nil, false
	}
	if !hmac.Equal(scratch[:n], want) {
		return Claims{}, invalid("signature is invalid"), true
	}
	n, err = base64.RawURLEncoding.Decode(scratch, tok[len(header)+1:input])
	if err != nil {
		return Claims{}, nil, false
	}
	f, ok := scanClaims(scratch[:n], s.audience)
	if !ok {
		return Claims{}, nil, false
	}
	now := s.now()
	switch {
	case !f.hasExp:
		return Claims{}, invalid("exp is required"), true
	case !now.Before(time.Unix(f.exp, 0)):
		return Claims{}, invalid("token is expired"), true
	case f.hasNbf && now.Before(time.Unix(f.nbf, 0)):
		return Claims{}, invalid("token is not valid yet"), true
	case !f.audience:
		return Claims{}, invalid("token has invalid audience"), true
	}
	account, err := strconv.ParseInt(string(f.sub), 10, 64) // on the stack: sub is only parsed
	if err != nil || account <= 0 {
		return Claims{}, invalid("bad subject"), true
	}
	return Claims{Account: account, Role: f.role, Event: f.evt, Place: f.plc, Turn: f.trn, Since: f.acs, Email: f.emv, Device: f.dev, ID: f.jti,
		Expires: time.Unix(f.exp, 0)}, nil, true
}

func invalid(why string) error { return &invalidError{why} }

type invalidError struct{ why string }

func (e *invalidError) Error() string { return ErrInvalid.Error() + ": " + e.why }
func (e *invalidError) Unwrap() error { return ErrInvalid }

// fields are the claims scanClaims reads.
type fields struct {
	role, jti, dev string
	sub            []byte // in the token's buffer
	evt, plc, trn  int64
	acs, emv       int64
	exp, nbf       int64
	hasExp, hasNbf bool
	audience       bool // aud names the signer's audience
}

// scanClaims reads a flat claims object of known names whose values are
// strings of printable ASCII without escapes, non-negative integers, or
// (aud) arrays of such strings. ok is false for anything else: other
// forms are valid JSON the JWT library reads the same way, only slower.
func scanClaims(p []byte, audience string) (f fields, ok bool) {
	sc := scanner{p: p}
	if !sc.eat('{') {
		return f, false
	}
	for first := true; !sc.eat('}'); first = false {
		if !first && !sc.eat(',') {
			return f, false
		}
		name, ok := sc.str()
		if !ok || !sc.eat(':') {
			return f, false
		}
		switch string(name) {
		case "role", "sub", "jti", "iss", "dev":
			v, ok := sc.str()
			if !ok {
				return f, false
			}
			switch string(name) {
			case "role":
				f.role = string(v)
			case "sub":
				f.sub = v
			case "jti":
				f.jti = string(v)
			case "dev":
				f.dev = string(v)
			}
		case "evt", "plc", "trn", "acs", "emv", "exp", "nbf", "iat":
			v, ok := sc.int()
			if !ok {
				return f, false
			}
			switch string(name) {
			case "evt":
				f.evt = v
			case "plc":
				f.plc = v
			case "trn":
				f.trn = v
			case "acs":
				f.acs = v
			case "emv":
				f.emv = v
			case "exp":
				f.exp, f.hasExp = v, true
			case "nbf":
				f.nbf, f.hasNbf = v, true
			}
		case "aud":
			if f.audience, ok = sc.audience(audience); !ok {
				return f, false
			}
		default:
			return f, false
		}
	}
	return f, sc.i == len(p)
}

type scanner struct {
	p []byte
	i int
}

func (s *scanner) eat(c byte) bool {
	if s.i < len(s.p) && s.p[s.i] == c {
		s.i++
		return true
	}
	return false
}

func (s *scanner) str() ([]byte, bool) {
	if !s.eat('"') {
		return nil, false
	}
	start := s.i
	for ; s.i < len(s.p); s.i++ {
		switch c := s.p[s.i]; {
		case c == '"':
			s.i++
			return s.p[start : s.i-1], true
		case c < 0x20 || c >= 0x80 || c == '\\':
			return nil, false
		}
	}
	return nil, false
}

// int reads up to 18 digits: no sign, fraction or exponent.
func (s *scanner) int() (int64, bool) {
	start := s.i
	var v int64
	for s.i < len(s.p) && s.p[s.i] >= '0' && s.p[s.i] <= '9' && s.i-start < 18 && (s.i == start || s.p[start] != '0') {
		v = v*10 + int64(s.p[s.i]-'0')
		s.i++
	}
	if s.i == start || (s.i < len(s.p) && (s.p[s.i] >= '0' && s.p[s.i] <= '9' || s.p[s.i] == '.' || s.p[s.i] == 'e' || s.p[s.i] == 'E')) {
		return 0, false
	}
	return v, true
}

// audience reads aud, a string or an array of strings, and tells whether
// it names want.
func (s *scanner) audience(want string) (named, ok bool) {
	if !s.eat('[') {
		v, ok := s.str()
		return string(v) == want, ok
	}
	for first := true; !s.eat(']'); first = false {
		if !first && !s.eat(',') {
			return false, false
		}
		v, ok := s.str()
		if !ok {
			return false, false
		}
		named = named || string(v) == want
	}
	return named, true
}
