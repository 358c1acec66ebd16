// Package account signs fans and organizers up and logs them in. Passwords
// are hashed with argon2id; the session itself is a stateless JWT (package
// token), so logging in is the only call that reaches the catalog.
package account

import (
	"context"
	"errors"
	"fmt"
	"net/mail"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/catraca/catraca/shared/reject"
	"github.com/catraca/catraca/shared/text"
)

// Roles an account can have.
const (
	RoleFan       = "fan"
	RoleOrganizer = "organizer"
)

// Domain errors, translated to HTTP at the API seam.
var (
	ErrEmailTaken         = errors.New("email already registered")
	ErrInvalidCredentials = errors.New("wrong email or password")
	ErrWeakPassword       = errors.New("password too weak")
	ErrInvalidInput       = errors.New("invalid account data")
	ErrNoAccount          = errors.New("no such account")
)

// Account is a registered person.
type Account struct {
	ID        int64     `json:"id"`
	Email     string    `json:"email"`
	Name      string    `json:"name"`
	Role      string    `json:"role"`
	CreatedAt time.Time `json:"created_at"`
	// EmailVerified: the owner opened the link mailed at sign-up (a
	// signal of the waiting room's risk score, docs/fairness.md).
	EmailVerified bool `json:"email_verified"`
}

// Store persists accounts; pgstore implements it on the catalog.
type Store interface {
	Create(ctx context.Context, a Account, passwordHash string) (Account, error) // ErrEmailTaken
	ByEmail(ctx context.Context, email string) (Account, string, error)          // ErrInvalidCredentials when absent, after the same read
	Role(ctx context.Context, id int64) (string, error)                          // "" when absent
	VerifyEmail(ctx context.Context, id int64) (Account, error)                  // ErrNoAccount
	Email(ctx context.Context, id int64) (string, error)
}

// Service holds the account rules.
type Service struct {
	store Store
	cost  Argon2
	// dummyHash is verified when the email is unknown, so a login does the
	// same work (one read, one verification of this cost) whether or not
	// the account exists.
	dummyHash string
}

// NewService returns a service hashing with cost.
func NewService(store Store, cost Argon2) (*Service, error) {
	if cost.Threads == 0 {
		cost.Threads = 1
	}
	dummy, err := cost.hashPassword("not a real password")
	if err != nil {
		return nil, err
	}
	return &Service{store: store, cost: cost, dummyHash: dummy}, nil
}

// SignUp validates and registers a new fan account.
func (s *Service) SignUp(ctx context.Context, email, password, name string) (Account, error) {
	email = strings.TrimSpace(email)
	name = strings.TrimSpace(name)
	if err := validateEmail(email); err != nil {
		return Account{}, err
	}
	if n := utf8.RuneCountInString(name); n < 1 || n > 100 || !isText(name) {
		return Account{}, reject.New(ErrInvalidInput, "/name", "Invalid account data: name must be 1 to 100 characters of text.")
	}
	if !text.OneLine(name) {
		// The name goes into mail headers (a transfer's subject) and the
		// organizer's console.
		return Account{}, reject.New(ErrInvalidInput, "/name", fmt.Sprintf("Invalid account data: name %q has a line break or control character; write it on one line.", name))
	}
	if err := checkPassword(password, email); err != nil {
		return Account{}, err
	}
	hash, err := s.cost.hashPassword(password)
	if err != nil {
		return Account{}, fmt.Errorf("hash password: %w", err)
	}
	return s.store.Create(ctx, Account{Email: email, Name: name, Role: RoleFan}, hash)
}

// LogIn returns the account whose email and password match.
func (s *Service) LogIn(ctx context.Context, email, password string) (Account, error) {
	email = strings.TrimSpace(email)
	a, hash, err := Account{}, "", ErrInvalidCredentials
	if isText(email) && len(email) <= 254 {
		a, hash, err = s.store.ByEmail(ctx, email)
	}
	known := err == nil
	if errors.Is(err, ErrInvalidCredentials) {
		hash = s.dummyHash // the same verification as for a known email
	} else if err != nil {
		return Account{}, err
	}
	ok, err := verifyPassword(password, hash)
	if err != nil {
		return Account{}, fmt.Errorf("verify password of account %d: %w", a.ID, err)
	}
	if !ok || !known {
		return Account{}, ErrInvalidCredentials
	}
	return a, nil
}

// VerifyEmail records that an account's owner opened the verification
// link mailed to it (see EmailLink).
func (s *Service) VerifyEmail(ctx context.Context, id int64) (Account, error) {
	return s.store.VerifyEmail(ctx, id)
}

// Email returns an account's address (to mail it a new verification
// link).
func (s *Service) Email(ctx context.Context, id int64) (string, error) {
	return s.store.Email(ctx, id)
}

// isText tells whether s can be stored as PostgreSQL text: UTF-8, no NUL.
func isText(s string) bool { return utf8.ValidString(s) && !strings.ContainsRune(s, 0) }

// Role returns an account's current role ("" when there is no such
// account). Sessions carry the role they were issued with; routes that
// depend on it read it here, so a role change applies at once.
func (s *Service) Role(ctx context.Context, id int64) (string, error) {
	return s.store.Role(ctx, id)
}

func validateEmail(email string) error {
	if len(email) > 254 || !isText(email) {
		return reject.New(ErrInvalidInput, "/email", "Invalid account data: email is too long.")
	}
	if strings.ContainsFunc(email, func(r rune) bool { return unicode.Is(unicode.Cf, r) || unicode.IsControl(r) }) {
		// mail.ParseAddress takes them, and the address would look like another.
		return reject.New(ErrInvalidInput, "/email", fmt.Sprintf("Invalid account data: %q has an invisible character; type the address again.", email))
	}
	if strings.ContainsFunc(email, unicode.IsSpace) {
		return reject.New(ErrInvalidInput, "/email", fmt.Sprintf("Invalid account data: %q has a space in it; an email address has none.", email))
	}
	addr, err := mail.ParseAddress(email)
	if err != nil || addr.Address != email || !strings.Contains(email[strings.LastIndex(email, "@")+1:], ".") {
		return reject.New(ErrInvalidInput, "/email", fmt.Sprintf("Invalid account data: %q is not an email address.", email))
	}
	// Look-alikes: the Kelvin sign or a fullwidth letter reads (and, for
	// the catalog's lower(), matches) as another address.
	if plain := norm.NFKC.String(email); plain != email {
		return reject.New(ErrInvalidInput, "/email", fmt.Sprintf("Invalid account data: %q has characters that only look like letters (%s); type it as %q.",
			email, lookAlikes(email), plain))
	}
	for _, word := range strings.FieldsFunc(email, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsMark(r) }) {
		if mixedScripts(word) {
			return reject.New(ErrInvalidInput, "/email", fmt.Sprintf("Invalid account data: %q mixes letters of different alphabets in %q; type the address again.", email, word))
		}
	}
	return nil
}

// lookAlikes names the code points NFKC changes, as "U+212A, U+FF54".
func lookAlikes(s string) string {
	var names []string
	for _, r := range s {
		if name := fmt.Sprintf("%U", r); !norm.NFKC.IsNormalString(string(r)) && !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	return strings.Join(names, ", ")
}

// confusable are the alphabets whose letters look alike (Cyrillic "а",
// Greek "ο" and Latin "a", "o").
var confusable = []*unicode.RangeTable{unicode.Latin, unicode.Cyrillic, unicode.Greek}

// mixedScripts tells whether a word has letters of two confusable alphabets.
func mixedScripts(word string) bool {
	seen := -1
	for _, r := range word {
		for i, script := range confusable {
			if unicode.Is(script, r) {
				if seen >= 0 && seen != i {
					return true
				}
				seen = i
			}
		}
	}
	return false
}

// common holds a few passwords that pass the length rule yet are guessed first.
var common = map[string]bool{
	"password123": true, "1234567890": true, "qwertyuiop": true, "0123456789": true,
	"password1234": true, "iloveyou123": true, "senha12345": true, "abcdefghij": true,
}

// checkPassword follows NIST SP 800-63B: length over composition rules,
// judged on the password as it is hashed (NFKC), so fullwidth letters do
// not make a common password rare.
func checkPassword(password, email string) error {
	password = string(passwordBytes(password))
	n := utf8.RuneCountInString(password)
	switch {
	case n < 10:
		return reject.New(ErrWeakPassword, "/password", "Password too weak: use at least 10 characters.")
	case n > 128:
		return reject.New(ErrWeakPassword, "/password", "Password too weak: use at most 128 characters.")
	case common[strings.ToLower(password)]:
		return reject.New(ErrWeakPassword, "/password", "Password too weak: this password is too common.")
	case strings.EqualFold(password, email) || strings.EqualFold(password, strings.Split(email, "@")[0]):
		return reject.New(ErrWeakPassword, "/password", "Password too weak: do not use your email as password.")
	}
	return nil
}
