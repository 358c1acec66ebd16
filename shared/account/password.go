package account

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/crypto/argon2"
	"golang.org/x/text/unicode/norm"
)

// Argon2 holds the argon2id cost. Hashes record their own cost, so raising
// it later keeps old hashes verifiable.
type Argon2 struct {
	MemoryKiB uint32
	Time      uint32
	Threads   uint8
}

var errBadHash = errors.New("malformed password hash")

// deriveKey is argon2id; tests count its calls (the work of a log-in).
var deriveKey = argon2.IDKey

// hashPassword returns a PHC-format argon2id hash.
func (a Argon2) hashPassword(password string) (string, error) {
	return a.hash(passwordBytes(password))
}

// hash returns the PHC-format argon2id hash of secret.
func (a Argon2) hash(secret []byte) (string, error) {
	salt := make([]byte, 16)
	if _, err := rand.Read(salt); err != nil {
		return "", err
	}
	sum := deriveKey(secret, salt, a.Time, a.MemoryKiB, a.Threads, 32)
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, a.MemoryKiB, a.Time, a.Threads,
		base64.RawStdEncoding.EncodeToString(salt), base64.RawStdEncoding.EncodeToString(sum)), nil
}

// passwordBytes is what is hashed: the password in NFKC (NIST SP 800-63B),
// so one typed on a keyboard that composes accents (NFC "ã") matches one
// typed where they are combined (NFD "a" + U+0303).
func passwordBytes(password string) []byte { return []byte(norm.NFKC.String(password)) }

// verifyPassword checks password against a PHC argon2id hash in constant
// time. Accounts created before passwords were normalized hold a hash of
// the bytes as typed: a password that NFKC changes is also checked as is.
func verifyPassword(password, encoded string) (bool, error) {
	parts := strings.Split(encoded, "$")
	if len(parts) != 6 || parts[1] != "argon2id" {
		return false, errBadHash
	}
	var version int
	if _, err := fmt.Sscanf(parts[2], "v=%d", &version); err != nil || version != argon2.Version {
		return false, errBadHash
	}
	var mem, t uint32
	var p uint8
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &mem, &t, &p); err != nil {
		return false, errBadHash
	}
	salt, err := base64.RawStdEncoding.DecodeString(parts[4])
	if err != nil {
		return false, errBadHash
	}
	want, err := base64.RawStdEncoding.DecodeString(parts[5])
	if err != nil {
		return false, errBadHash
	}
	matches := func(secret []byte) bool {
		return subtle.ConstantTimeCompare(deriveKey(secret, salt, t, mem, p, uint32(len(want))), want) == 1
	}
	normal := passwordBytes(password)
	return matches(normal) || (string(normal) != password && matches([]byte(password))), nil
}
