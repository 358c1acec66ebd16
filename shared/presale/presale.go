// Package presale runs an event's verified-fan presale: fans register in
// a window, a committed draw picks who gets a presale code, and the code,
// redeemed by its own account, opens the event's waiting room to it
// before everyone else (docs/fairness.md, "The verified-fan presale").
package presale

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"golang.org/x/text/unicode/norm"

	"github.com/catraca/catraca/shared/catalogstore"
	"github.com/catraca/catraca/shared/event"
	"github.com/catraca/catraca/shared/queue"
	"github.com/catraca/catraca/shared/reject"
)

// Refusals, matched with errors.Is; each comes as a reject.Error with a
// sentence for the fan or organizer.
var (
	ErrNotFound          = errors.New("presale: no presale")
	ErrInvalid           = errors.New("presale: invalid settings")
	ErrExists            = errors.New("presale: already opened")
	ErrWindow            = errors.New("presale: registration not open")
	ErrAlreadyRegistered = errors.New("presale: already registered")
	ErrTooEarly          = errors.New("presale: registration still open")
	ErrBadCode           = errors.New("presale: no such code")
	ErrNotYourCode       = errors.New("presale: code of another account")
	ErrOver              = errors.New("presale: presale over")
)

// Service runs presales over the catalog and the waiting room.
type Service struct {
	DB      *pgxpool.Pool
	Room    *queue.Room
	Cluster ClusterOf // nil: Unlinked
	Log     *slog.Logger
	Now     func() time.Time // nil: time.Now
}

func (s *Service) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

func (s *Service) log() *slog.Logger {
	if s.Log != nil {
		return s.Log
	}
	return slog.Default()
}

// Spec is what an organizer sets when opening a registration.
type Spec struct {
	RegistrationOpensAt  time.Time `json:"registration_opens_at"`
	RegistrationClosesAt time.Time `json:"registration_closes_at"`
	Codes                int       `json:"codes"`
	// SaleEndsAt ends the presale: from the event's sale start until
	// then, only code holders get a place in the waiting room.
	SaleEndsAt time.Time `json:"presale_ends_at"`
}

// MaxCodes bounds a presale's codes.
const MaxCodes = 1_000_000

func (sp Spec) check(e event.Event, now time.Time) error {
	var reasons []reject.Reason
	add := func(ptr, detail string) { reasons = append(reasons, reject.Reason{Pointer: ptr, Detail: detail}) }
	if sp.Codes < 1 || sp.Codes > MaxCodes {
		add("/codes", "codes must be between 1 and "+strconv.Itoa(MaxCodes)+".")
	}
	if sp.RegistrationOpensAt.IsZero() || sp.RegistrationClosesAt.IsZero() || sp.SaleEndsAt.IsZero() {
		add("", "registration_opens_at, registration_closes_at and presale_ends_at are required (RFC 3339 times).")
	} else {
		if !sp.RegistrationOpensAt.Before(sp.RegistrationClosesAt) {
			add("/registration_closes_at", "The registration must close after it opens.")
		}
		if !sp.RegistrationClosesAt.After(now) {
			add("/registration_closes_at", "The registration must close in the future.")
		}
		b := breachesOf(sp.RegistrationClosesAt, sp.SaleEndsAt, e)
		if b.closesAfterStart {
			add("/registration_closes_at", "The registration must close by the event's sale start ("+
				e.SaleStartsAt.UTC().Format(time.RFC3339)+"), so that codes are drawn before the presale begins.")
		}
		if b.endsBeforeStart || b.endsAfterSale {
			add("/presale_ends_at", "The presale runs from the event's sale start ("+e.SaleStartsAt.UTC().Format(time.RFC3339)+
				"): presale_ends_at must be after it and no later than the sale's end.")
		}
	}
	if !e.WaitingRoom.Enabled {
		add("", "A presale admits code holders through the waiting room: turn the event's waiting room on first.")
	}
	if len(reasons) > 0 {
		return &reject.Error{Kind: ErrInvalid, Reasons: reasons}
	}
	return nil
}

// Open creates the event's presale with a fresh secret seed and publishes
// its commitment; the room admits only code holders from now until the
// presale ends. A presale is opened once.
func (s *Service) Open(ctx context.Context, e event.Event, organizerID int64, sp Spec) (Public, error) {
	if err := sp.check(e, s.now()); err != nil {
		return Public{}, err
	}
	seed := make([]byte, 32)
	rand.Read(seed)
	p := catalogstore.Presale{EventID: e.ID, RegistrationOpensAt: sp.RegistrationOpensAt.UTC(),
		RegistrationClosesAt: sp.RegistrationClosesAt.UTC(), Codes: sp.Codes, SaleEndsAt: sp.SaleEndsAt.UTC(),
		Seed: seed, Commitment: Commitment(seed), CreatedBy: organizerID}
	created, err := catalogstore.CreatePresale(ctx, s.DB, p)
	if err != nil {
		return Public{}, fmt.Errorf("open presale of event %d: %w", e.ID, err)
	}
	if !created {
		return Public{}, reject.New(ErrExists, "", "This event's presale registration is already open; its commitment is published and cannot change.")
	}
	// Before any fan can join: the room is closed to non-holders from
	// the start. The sweep writes it again if this fails.
	if err := s.Room.SetPresale(ctx, e.ID, p.SaleEndsAt); err != nil {
		s.log().Warn("presale room gate", "event", e.ID, "err", err)
	}
	return s.Public(ctx, e.ID)
}

// Phase is where a presale stands.
type Phase string

// The phases, in order.
const (
	PhaseUpcoming Phase = "upcoming" // registration not open yet
	PhaseOpen     Phase = "open"     // fans register
	PhaseClosed   Phase = "closed"   // registration closed, draw not run yet
	PhaseDrawn    Phase = "drawn"    // seed revealed, codes given
)

// Public is what anyone may read of a presale: enough to check the draw.
type Public struct {
	EventID              int64     `json:"event_id"`
	Phase                Phase     `json:"phase"`
	RegistrationOpensAt  time.Time `json:"registration_opens_at"`
	RegistrationClosesAt time.Time `json:"registration_closes_at"`
	SaleEndsAt           time.Time `json:"presale_ends_at"`
	Codes                int       `json:"codes"`
	// Commitment is hex SHA-256 of the seed, public from the opening.
	Commitment string `json:"seed_sha256"`
	// Seed is revealed by the draw (hex).
	Seed          string     `json:"seed,omitempty"`
	DrawnAt       *time.Time `json:"drawn_at,omitempty"`
	Registrations int        `json:"registrations"`
	Winners       int        `json:"winners"`
	Redeemed      int        `json:"redeemed"`
	// Algorithm names the draw, for whoever checks it.
	Algorithm string `json:"algorithm"`
	// IDsURL lists the registration ids once registration has closed.
	IDsURL string `json:"registration_ids_url,omitempty"`
}

// Algorithm names the draw that Winners implements.
const Algorithm = "hmac-sha256-order/v1"

func (s *Service) get(ctx context.Context, eventID int64) (catalogstore.Presale, error) {
	p, found, err := catalogstore.GetPresale(ctx, s.DB, eventID, false)
	if err == nil && !found {
		err = reject.New(ErrNotFound, "", "This event has no verified-fan presale.")
	}
	return p, err
}

func phaseOf(p catalogstore.Presale, now time.Time) Phase {
	switch {
	case p.DrawnAt != nil:
		return PhaseDrawn
	case now.Before(p.RegistrationOpensAt):
		return PhaseUpcoming
	case now.Before(p.RegistrationClosesAt):
		return PhaseOpen
	}
	return PhaseClosed
}

// Public reads the event's presale as anyone may see it.
func (s *Service) Public(ctx context.Context, eventID int64) (Public, error) {
	p, err := s.get(ctx, eventID)
	if err != nil {
		return Public{}, err
	}
	v := Public{EventID: eventID, Phase: phaseOf(p, s.now()), RegistrationOpensAt: p.RegistrationOpensAt.UTC(),
		RegistrationClosesAt: p.RegistrationClosesAt.UTC(), SaleEndsAt: p.SaleEndsAt.UTC(), Codes: p.Codes,
		Commitment: p.Commitment, DrawnAt: p.DrawnAt, Algorithm: Algorithm}
	if v.Phase == PhaseDrawn {
		v.Seed = hex.EncodeToString(p.Seed)
	}
	if v.Phase == PhaseDrawn || v.Phase == PhaseClosed {
		v.IDsURL = "/api/events/" + strconv.FormatInt(eventID, 10) + "/presale/registrations"
	}
	if v.Registrations, v.Winners, v.Redeemed, err = catalogstore.PresaleCounts(ctx, s.DB, eventID); err != nil {
		return Public{}, err
	}
	return v, nil
}

// RegistrationIDs lists the event's registration ids, sorted, once the
// registration has closed (the list the draw takes).
func (s *Service) RegistrationIDs(ctx context.Context, eventID int64) ([]string, error) {
	p, err := s.get(ctx, eventID)
	if err != nil {
		return nil, err
	}
	if ph := phaseOf(p, s.now()); ph != PhaseClosed && ph != PhaseDrawn {
		// As the draw refuses the same moment (ErrTooEarly).
		return nil, reject.New(ErrTooEarly, "", "The registration ids are published when the registration closes, at "+
			p.RegistrationClosesAt.UTC().Format(time.RFC3339)+".")
	}
	return catalogstore.PresaleRegistrationIDs(ctx, s.DB, eventID)
}

// Mine is a fan's view of their own registration.
type Mine struct {
	// State: not_registered, registered (draw to come), won, not_drawn.
	State          string     `json:"state"`
	RegistrationID string     `json:"registration_id,omitempty"`
	RegisteredAt   *time.Time `json:"registered_at,omitempty"`
	Code           string     `json:"code,omitempty"`
	Redeemed       bool       `json:"redeemed,omitempty"`
	// Over: the presale has ended; everyone joins the general sale's
	// waiting room, code or not.
	Over    bool   `json:"presale_over,omitempty"`
	Message string `json:"message"`
	Presale Public `json:"presale"`
}

// Fan states.
const (
	StateNotRegistered = "not_registered"
	StateRegistered    = "registered"
	StateWon           = "won"
	StateNotDrawn      = "not_drawn"
)

// MineOf reads an account's registration for the event.
func (s *Service) MineOf(ctx context.Context, eventID, account int64) (Mine, error) {
	pub, err := s.Public(ctx, eventID)
	if err != nil {
		return Mine{}, err
	}
	r, found, err := catalogstore.PresaleRegistrationOf(ctx, s.DB, eventID, account)
	if err != nil {
		return Mine{}, err
	}
	m := Mine{Presale: pub, Over: !s.now().Before(pub.SaleEndsAt)}
	switch {
	case !found:
		m.State, m.Message = StateNotRegistered, "You are not registered for this presale."
		if pub.Phase == PhaseOpen {
			m.Message += " Registration is open until " + pub.RegistrationClosesAt.Format(time.RFC3339) + "."
		}
	case r.Won == nil:
		m.State, m.Message = StateRegistered, "You are registered. Codes are drawn after the registration closes at "+
			pub.RegistrationClosesAt.Format(time.RFC3339)+"."
	case *r.Won:
		m.State, m.Code, m.Redeemed = StateWon, *r.Code, r.RedeemedAt != nil
		m.Message = "You won a presale code. It works for this account only: enter it to join the presale's waiting room."
	default:
		m.State = StateNotDrawn
		m.Message = "Your registration was not drawn this time. The general sale's waiting room opens to everyone at " +
			pub.SaleEndsAt.Format(time.RFC3339) + "."
	}
	if found {
		m.RegistrationID, m.RegisteredAt = r.ID, &r.RegisteredAt
	}
	if m.Over {
		// Whatever the state, a code no longer opens anything (redeeming
		// answers presale-over).
		m.Message = "The presale is over: the general sale's waiting room is open to everyone, no code needed."
	}
	return m, nil
}

// Register registers an account for the event's presale: one
// registration per cluster of linked accounts (see ClusterOf), while the
// registration is open.
func (s *Service) Register(ctx context.Context, eventID, account int64) (Mine, error) {
	cluster := s.Cluster
	if cluster == nil {
		cluster = Unlinked
	}
	c, err := cluster(ctx, account)
	if err != nil {
		return Mine{}, err
	}
	id := newID()
	err = pgx.BeginFunc(ctx, s.DB, func(tx pgx.Tx) error {
		// FOR SHARE: registrations run side by side, and a draw (FOR
		// UPDATE) waits for those under way, so none lands after it.
		p, found, err := catalogstore.LockPresaleShared(ctx, tx, eventID)
		if err != nil {
			return err
		}
		if !found {
			return reject.New(ErrNotFound, "", "This event has no verified-fan presale.")
		}
		now := s.now()
		if now.Before(p.RegistrationOpensAt) || !now.Before(p.RegistrationClosesAt) || p.DrawnAt != nil {
			return reject.New(ErrWindow, "", "Registration for this presale is open from "+
				p.RegistrationOpensAt.UTC().Format(time.RFC3339)+" to "+p.RegistrationClosesAt.UTC().Format(time.RFC3339)+
				"; it is "+now.UTC().Format(time.RFC3339)+" now.")
		}
		_, err = catalogstore.InsertPresaleRegistration(ctx, tx, catalogstore.PresaleRegistration{
			ID: id, EventID: eventID, AccountID: account, ClusterID: c})
		if errors.Is(err, catalogstore.ErrDuplicate) {
			return reject.New(ErrAlreadyRegistered, "", "This account (or an account linked to it) is already registered for this presale: one registration per fan.")
		}
		return err
	})
	if err != nil {
		return Mine{}, err
	}
	return s.MineOf(ctx, eventID, account)
}

// newID is a registration's public id: random, so it tells nothing of
// the account or of when it registered.
func newID() string {
	b := make([]byte, 10)
	rand.Read(b)
	return "r" + hex.EncodeToString(b)
}

// codeAlphabet leaves out letters read as digits (Crockford's base 32).
const codeAlphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

// newCode is a presale code: 12 random characters (60 bits) in groups of
// four, to type from an email.
func newCode() string {
	b := make([]byte, codeLength)
	rand.Read(b)
	var c strings.Builder
	for i, x := range b {
		if i > 0 && i%4 == 0 {
			c.WriteByte('-')
		}
		c.WriteByte(codeAlphabet[x%32])
	}
	return c.String()
}

// NormalizeCode reads a presale code as typed, one way wherever a code is
// read: in its compatibility form (NFKC: fullwidth characters, as a phone
// keyboard may type them, are the ASCII ones), case, spaces and dashes do
// not count, and the letters Crockford's alphabet leaves out are read as
// the digits they look like (O as 0, I and L as 1). A code of the right length comes back as newCode writes
// it (XXXX-XXXX-XXXX); anything else comes back without spaces and
// dashes, to be found by no code ("" if nothing was typed).
func NormalizeCode(typed string) string {
	bare := strings.Map(func(r rune) rune {
		switch {
		case unicode.IsSpace(r) || unicode.Is(unicode.Pd, r):
			return -1
		case r == 'O' || r == 'o':
			return '0'
		case r == 'I' || r == 'i' || r == 'L' || r == 'l':
			return '1'
		}
		return unicode.ToUpper(r)
	}, norm.NFKC.String(typed))
	if len(bare) != codeLength {
		return bare
	}
	return bare[:4] + "-" + bare[4:8] + "-" + bare[8:]
}

// codeLength is a code's characters, dashes left out.
const codeLength = 12

// Draw runs the event's draw, once: the registration must have closed.
// It reveals the seed, gives each winner a code, marks the others, and
// queues every registration's mail in the catalog's outbox (Mailing
// sends them). A second draw, concurrent or later, waits for the first
// and returns its result.
func (s *Service) Draw(ctx context.Context, eventID int64) (Public, error) {
	err := pgx.BeginFunc(ctx, s.DB, func(tx pgx.Tx) error {
		p, found, err := catalogstore.GetPresale(ctx, tx, eventID, true)
		if err != nil {
			return err
		}
		if !found {
			return reject.New(ErrNotFound, "", "This event has no verified-fan presale.")
		}
		if p.DrawnAt != nil {
			return nil
		}
		if now := s.now(); now.Before(p.RegistrationClosesAt) {
			return reject.New(ErrTooEarly, "", "The draw runs after the registration closes, at "+
				p.RegistrationClosesAt.UTC().Format(time.RFC3339)+".")
		}
		ids, err := catalogstore.PresaleRegistrationIDs(ctx, tx, eventID)
		if err != nil {
			return err
		}
		for _, id := range Winners(p.Seed, ids, p.Codes) {
			if err := catalogstore.SetPresaleWinner(ctx, tx, id, newCode()); err != nil {
				return err
			}
		}
		if err := catalogstore.SetPresaleLosers(ctx, tx, eventID); err != nil {
			return err
		}
		if err := catalogstore.EnqueuePresaleMails(ctx, tx, eventID); err != nil {
			return err
		}
		return catalogstore.MarkPresaleDrawn(ctx, tx, eventID, s.now().UTC())
	})
	if err != nil {
		return Public{}, err
	}
	return s.Public(ctx, eventID)
}

// Redeem spends a presale code for the account it was drawn for: from
// then on the room gives that account a place during the presale. A code
// is bound to its winner: another account is refused, and the account's
// own second redeem changes nothing.
func (s *Service) Redeem(ctx context.Context, eventID, account int64, code string) (Mine, error) {
	p, err := s.get(ctx, eventID)
	if err != nil {
		return Mine{}, err
	}
	if !s.now().Before(p.SaleEndsAt) {
		return Mine{}, reject.New(ErrOver, "", "The presale is over: join the general sale's waiting room, no code needed.")
	}
	code = NormalizeCode(code)
	r, found, err := catalogstore.PresaleCode(ctx, s.DB, eventID, code)
	if err != nil {
		return Mine{}, err
	}
	if !found {
		return Mine{}, reject.New(ErrBadCode, "/code", "This is not a presale code of this event. Check it against your email or your presale page.")
	}
	if r.AccountID != account {
		return Mine{}, reject.New(ErrNotYourCode, "/code", "This presale code was drawn for another account and works only there.")
	}
	if _, err := catalogstore.RedeemPresaleCode(ctx, s.DB, r.ID); err != nil {
		return Mine{}, err
	}
	if err := s.Room.SetPresale(ctx, eventID, p.SaleEndsAt, account); err != nil {
		return Mine{}, err
	}
	return s.MineOf(ctx, eventID, account)
}

// Sweep draws the presales whose registration closed and nobody drew,
// and writes again the room gate of every presale still selling (Redis
// may have lost it). It returns the number of draws it ran.
func (s *Service) Sweep(ctx context.Context) (int, error) {
	due, err := catalogstore.PresalesToDraw(ctx, s.DB, s.now())
	if err != nil {
		return 0, err
	}
	var errs []error
	for _, id := range due {
		if _, err := s.Draw(ctx, id); err != nil {
			errs = append(errs, fmt.Errorf("draw presale of event %d: %w", id, err))
		}
	}
	selling, err := catalogstore.PresalesSelling(ctx, s.DB, s.now())
	if err != nil {
		return len(due), errors.Join(append(errs, err)...)
	}
	for _, p := range selling {
		accounts, err := catalogstore.PresaleRedeemers(ctx, s.DB, p.EventID)
		if err == nil {
			err = s.Room.SetPresale(ctx, p.EventID, p.SaleEndsAt, accounts...)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("presale gate of event %d: %w", p.EventID, err))
		}
	}
	return len(due), errors.Join(errs...)
}
