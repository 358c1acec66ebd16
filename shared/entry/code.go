package entry

import (
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base32"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/catraca/catraca/shared/config"
)

// Step is how long one rotating code lasts; Tolerance is how many steps a
// gate accepts behind the current one (a slow phone or gate clock, and the
// time a fan takes to walk up). One step ahead is accepted too.
const (
	Step      = 15 * time.Second
	Tolerance = 2
)

// Code kinds: R codes rotate every Step; S codes are static (printable).
const (
	rotating = "R1"
	static   = "S1"
)

var b32 = base32.StdEncoding.WithPadding(base32.NoPadding)

// Ring derives each ticket's Ed25519 key from the ticket key ring: the
// first key derives keys for tickets keyed from now on, every key still in
// the ring derives keys for tickets keyed under it. Dropping a key from
// the ring voids the codes of tickets still keyed under it.
type Ring struct {
	keys []config.Key
	byID map[string][]byte
}

// NewRing returns a ring over keys; the first one keys new tickets.
func NewRing(keys []config.Key) (*Ring, error) {
	if len(keys) == 0 {
		return nil, errors.New("entry: no ticket keys")
	}
	r := &Ring{keys: keys, byID: map[string][]byte{}}
	for _, k := range keys {
		r.byID[k.ID] = k.Secret
	}
	return r, nil
}

// Current is the id of the key new tickets are keyed under.
func (r *Ring) Current() string { return r.keys[0].ID }

// TicketKey is one generation of one ticket's key.
type TicketKey struct {
	Ticket     int64
	Generation int
	KeyID      string
}

// private derives the ticket's signing key; ok is false when its ring key
// was retired.
func (r *Ring) private(k TicketKey) (ed25519.PrivateKey, bool) {
	secret, ok := r.byID[k.KeyID]
	if !ok {
		return nil, false
	}
	m := hmac.New(sha256.New, secret)
	fmt.Fprintf(m, "catraca-ticket-key/v1|%d|%d", k.Ticket, k.Generation)
	return ed25519.NewKeyFromSeed(m.Sum(nil)), true
}

// Public returns the ticket's verification key: what a scan bundle holds.
func (r *Ring) Public(k TicketKey) (ed25519.PublicKey, bool) {
	p, ok := r.private(k)
	if !ok {
		return nil, false
	}
	return p.Public().(ed25519.PublicKey), true
}

// StepAt is the time step of t.
func StepAt(t time.Time) int64 { return t.Unix() / int64(Step/time.Second) }

func message(kind string, ticket int64, gen int, step int64) []byte {
	if kind == static {
		return fmt.Appendf(nil, "catraca/%s/%d/%d", kind, ticket, gen)
	}
	return fmt.Appendf(nil, "catraca/%s/%d/%d/%d", kind, ticket, gen, step)
}

// Rotating returns the ticket's code for time step step:
// R1.<ticket>.<generation>.<step>.<signature>, all QR-alphanumeric.
func (r *Ring) Rotating(k TicketKey, step int64) (string, error) {
	p, ok := r.private(k)
	if !ok {
		return "", fmt.Errorf("entry: ticket %d: key %q retired", k.Ticket, k.KeyID)
	}
	sig := ed25519.Sign(p, message(rotating, k.Ticket, k.Generation, step))
	return fmt.Sprintf("%s.%d.%d.%d.%s", rotating, k.Ticket, k.Generation, step, b32.EncodeToString(sig)), nil
}

// Static returns the ticket's printable code: S1.<ticket>.<generation>.<signature>.
func (r *Ring) Static(k TicketKey) (string, error) {
	p, ok := r.private(k)
	if !ok {
		return "", fmt.Errorf("entry: ticket %d: key %q retired", k.Ticket, k.KeyID)
	}
	sig := ed25519.Sign(p, message(static, k.Ticket, k.Generation, 0))
	return fmt.Sprintf("%s.%d.%d.%s", static, k.Ticket, k.Generation, b32.EncodeToString(sig)), nil
}

// Scanned is a parsed code, not yet verified.
type Scanned struct {
	Static     bool
	Ticket     int64
	Generation int
	Step       int64
	sig        []byte
}

// ErrMalformed means the text is not a ticket code at all.
var ErrMalformed = errors.New("not a catraca ticket code")

// Parse reads a code; whitespace and lower case (hand typing) are forgiven.
func Parse(code string) (Scanned, error) {
	parts := strings.Split(strings.ToUpper(strings.TrimSpace(code)), ".")
	var s Scanned
	var err error
	switch {
	case len(parts) == 5 && parts[0] == rotating:
		if s.Step, err = strconv.ParseInt(parts[3], 10, 64); err != nil {
			return s, ErrMalformed
		}
	case len(parts) == 4 && parts[0] == static:
		s.Static = true
	default:
		return s, ErrMalformed
	}
	s.Ticket, err = strconv.ParseInt(parts[1], 10, 64)
	if err != nil || s.Ticket <= 0 {
		return s, ErrMalformed
	}
	if s.Generation, err = strconv.Atoi(parts[2]); err != nil || s.Generation <= 0 {
		return s, ErrMalformed
	}
	if s.sig, err = b32.DecodeString(parts[len(parts)-1]); err != nil || len(s.sig) != ed25519.SignatureSize {
		return s, ErrMalformed
	}
	return s, nil
}

// Signed tells whether pub made this code's signature.
func (s Scanned) Signed(pub ed25519.PublicKey) bool {
	kind := rotating
	if s.Static {
		kind = static
	}
	return ed25519.Verify(pub, message(kind, s.Ticket, s.Generation, s.Step), s.sig)
}

// Timing says whether a rotating code's step fits the clock at t: 0 when
// it does, -1 when it is too old (a screenshot), +1 when it is from the
// future (a phone clock far ahead).
func (s Scanned) Timing(t time.Time) int {
	now := StepAt(t)
	switch {
	case s.Static:
		return 0
	case s.Step < now-Tolerance:
		return -1
	case s.Step > now+1:
		return 1
	}
	return 0
}
