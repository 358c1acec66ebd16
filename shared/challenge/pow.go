package challenge

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"math/bits"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Algorithm is the puzzle the page solves: the leading zero bits of
// SHA-256 over the token, a colon and a decimal nonce.
const Algorithm = "sha256-leading-zero-bits"

// PoW is the proof-of-work challenge. A puzzle is a token signed with
// HMAC-SHA256 that names the account, the event, the difficulty, an expiry
// and a random id: the server keeps nothing until an answer arrives, and
// then spends one Redis command (SET NX of the id) to make it single-use.
type PoW struct {
	keys   [][]byte // the first signs, all verify (rotation)
	redis  redis.UniversalClient
	prefix string
	ttl    time.Duration
	diff   Difficulty
	now    func() time.Time
}

// NewPoW returns a proof-of-work port. keys must not be empty.
func NewPoW(keys [][]byte, rdb redis.UniversalClient, prefix string, ttl time.Duration, d Difficulty) *PoW {
	return &PoW{keys: keys, redis: rdb, prefix: prefix, ttl: ttl, diff: d, now: time.Now}
}

// Issue signs a puzzle for s, as hard as its risk says.
func (p *PoW) Issue(s Subject) (Challenge, error) {
	var id [12]byte
	rand.Read(id[:])
	exp := p.now().Add(p.ttl).Truncate(time.Millisecond)
	b := p.diff.Bits(s.Risk)
	payload := fmt.Sprintf("1.%d.%d.%d.%d.%s", s.Account, s.Event, b, exp.UnixMilli(), base64.RawURLEncoding.EncodeToString(id[:]))
	tok := base64.RawURLEncoding.EncodeToString([]byte(payload)) + "." + base64.RawURLEncoding.EncodeToString(mac(p.keys[0], payload))
	return Challenge{Kind: KindPoW, Token: tok, Bits: b, Algorithm: Algorithm, ExpiresAt: exp.UTC()}, nil
}

func mac(key []byte, payload string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(payload))
	return m.Sum(nil)
}

// puzzle is a token's signed content.
type puzzle struct {
	account, event int64
	bits           int
	expires        time.Time
	id             string
}

// open checks a token's signature and reads it.
func (p *PoW) open(tok string) (puzzle, error) {
	enc, sig, ok := strings.Cut(tok, ".")
	if !ok || len(tok) > 512 {
		return puzzle{}, refused(ReasonInvalid, "The challenge is not one this service issued.")
	}
	raw, err1 := base64.RawURLEncoding.DecodeString(enc)
	got, err2 := base64.RawURLEncoding.DecodeString(sig)
	signed := false
	for _, k := range p.keys {
		if err1 == nil && err2 == nil && hmac.Equal(got, mac(k, string(raw))) {
			signed = true
			break
		}
	}
	f := strings.Split(string(raw), ".")
	if !signed || len(f) != 6 || f[0] != "1" {
		return puzzle{}, refused(ReasonInvalid, "The challenge is not one this service issued.")
	}
	var z puzzle
	var errs [4]error
	z.account, errs[0] = strconv.ParseInt(f[1], 10, 64)
	z.event, errs[1] = strconv.ParseInt(f[2], 10, 64)
	z.bits, errs[2] = strconv.Atoi(f[3])
	var ms int64
	ms, errs[3] = strconv.ParseInt(f[4], 10, 64)
	if err := errors.Join(errs[:]...); err != nil {
		return puzzle{}, refused(ReasonInvalid, "The challenge is not one this service issued.")
	}
	z.expires, z.id = time.UnixMilli(ms), f[5]
	return z, nil
}

// Verify accepts a solved puzzle once: signature, subject, expiry and work
// are checked in memory, and only an answer that passes them costs the
// Redis command that spends it.
func (p *PoW) Verify(ctx context.Context, s Subject, a Answer) error {
	z, err := p.open(a.Token)
	if err != nil {
		return err
	}
	now := p.now()
	switch {
	case z.account != s.Account || z.event != s.Event:
		return refused(ReasonWrongSubject, "This challenge was issued to another account or for another event.")
	case !now.Before(z.expires):
		return refused(ReasonExpired, "The challenge expired. Join again for a new one.")
	case len(a.Solution) == 0 || len(a.Solution) > 20 || !digits(a.Solution):
		return refused(ReasonInvalid, "The solution must be a decimal nonce of 1 to 20 digits.")
	case ZeroBits(a.Token, a.Solution) < z.bits:
		return refused(ReasonTooEasy, fmt.Sprintf("The solution does not reach %d leading zero bits.", z.bits))
	}
	fresh, err := p.redis.SetNX(ctx, p.prefix+"pow:"+z.id, 1, z.expires.Sub(now)+time.Second).Result()
	if err != nil {
		return fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	if !fresh {
		return refused(ReasonReplayed, "This challenge was already used. Join again for a new one.")
	}
	return nil
}

func digits(s string) bool {
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// ZeroBits counts the leading zero bits of SHA-256(token ":" nonce).
func ZeroBits(token, nonce string) int {
	h := sha256.New()
	h.Write([]byte(token))
	h.Write([]byte{':'})
	h.Write([]byte(nonce))
	var sum [sha256.Size]byte
	return leadingZeros(h.Sum(sum[:0]))
}

func leadingZeros(b []byte) int {
	n := 0
	for _, c := range b {
		if c != 0 {
			return n + bits.LeadingZeros8(c)
		}
		n += 8
	}
	return n
}

// Solve finds the smallest nonce that solves a proof-of-work challenge, at
// CPU speed: for clients that are not browsers (the on-sale simulator, an
// API client). It tries about 2^bits hashes.
func Solve(c Challenge) string {
	h := sha256.New()
	prefix := append([]byte(c.Token), ':')
	buf := make([]byte, 0, len(prefix)+20)
	var sum [sha256.Size]byte
	for n := uint64(0); ; n++ {
		buf = strconv.AppendUint(append(buf[:0], prefix...), n, 10)
		h.Reset()
		h.Write(buf)
		if leadingZeros(h.Sum(sum[:0])) >= c.Bits {
			return strconv.FormatUint(n, 10)
		}
	}
}
