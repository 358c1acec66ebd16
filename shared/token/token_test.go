package token

import (
	"encoding/base64"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/shared/config"
)

func key(id string, b byte) config.Key {
	return config.Key{ID: id, Secret: []byte(strings.Repeat(string(rune('a'+b)), 32))}
}

func TestAdmissionTokens(t *testing.T) {
	t.Parallel()
	s, err := NewSigner(AudienceAdmission, []config.Key{key("k2", 2), key("k1", 1)})
	require.NoError(t, err)
	raw, _, err := s.Issue(Claims{Account: 7, Event: 42, Turn: 3}, time.Minute)
	require.NoError(t, err)
	c, err := s.Verify(raw)
	require.NoError(t, err)
	require.EqualValues(t, 7, c.Account)
	require.EqualValues(t, 42, c.Event)
	require.EqualValues(t, 3, c.Turn, "the waiting-room turn the token belongs to")
	require.NotEmpty(t, c.ID, "every token has a jti")

	t.Run("old key still verifies during rotation", func(t *testing.T) {
		old, _ := NewSigner(AudienceAdmission, []config.Key{key("k1", 1)})
		raw, _, err := old.Issue(Claims{Account: 7, Event: 42}, time.Minute)
		require.NoError(t, err)
		_, err = s.Verify(raw)
		require.NoError(t, err)
	})
	t.Run("forged signature", func(t *testing.T) {
		forger, _ := NewSigner(AudienceAdmission, []config.Key{key("k2", 9)})
		raw, _, _ := forger.Issue(Claims{Account: 7, Event: 42}, time.Minute)
		_, err := s.Verify(raw)
		require.ErrorIs(t, err, ErrInvalid)
	})
	t.Run("tampered claims", func(t *testing.T) {
		parts := strings.Split(raw, ".")
		body, _ := base64.RawURLEncoding.DecodeString(parts[1])
		var m map[string]any
		require.NoError(t, json.Unmarshal(body, &m))
		m["evt"] = 43
		body, _ = json.Marshal(m)
		parts[1] = base64.RawURLEncoding.EncodeToString(body)
		_, err := s.Verify(strings.Join(parts, "."))
		require.ErrorIs(t, err, ErrInvalid)
	})
	t.Run("expired", func(t *testing.T) {
		past := *s
		past.now = func() time.Time { return time.Now().Add(-time.Hour) }
		raw, _, _ := past.Issue(Claims{Account: 7, Event: 42}, time.Minute)
		_, err := s.Verify(raw)
		require.ErrorIs(t, err, ErrInvalid)
	})
	t.Run("alg none", func(t *testing.T) {
		tok := jwt.NewWithClaims(jwt.SigningMethodNone, jwt.MapClaims{"sub": "7", "evt": 42, "aud": AudienceAdmission,
			"exp": time.Now().Add(time.Minute).Unix()})
		tok.Header["kid"] = "k2"
		raw, err := tok.SignedString(jwt.UnsafeAllowNoneSignatureType)
		require.NoError(t, err)
		_, err = s.Verify(raw)
		require.ErrorIs(t, err, ErrInvalid)
	})
	t.Run("unknown kid", func(t *testing.T) {
		other, _ := NewSigner(AudienceAdmission, []config.Key{key("k9", 2)})
		raw, _, _ := other.Issue(Claims{Account: 7, Event: 42}, time.Minute)
		_, err := s.Verify(raw)
		require.ErrorIs(t, err, ErrInvalid)
	})
	t.Run("session token is not an admission token", func(t *testing.T) {
		sess, _ := NewSigner(AudienceSession, []config.Key{key("k2", 2)})
		raw, _, _ := sess.Issue(Claims{Account: 7, Event: 42}, time.Minute)
		_, err := s.Verify(raw)
		require.ErrorIs(t, err, ErrInvalid)
	})
}

// librarySigned signs claims with the JWT library, the way tokens were
// issued before Issue wrote them by hand.
func librarySigned(t *testing.T, k config.Key, claims jwt.Claims) string {
	t.Helper()
	tok := jwt.NewWithClaims(jwt.SigningMethodHS256, claims)
	tok.Header["kid"] = k.ID
	raw, err := tok.SignedString(k.Secret)
	require.NoError(t, err)
	return raw
}

// TestHandWrittenTokensAreTheLibrarysTokens: Issue's tokens read the same
// through the JWT library (the edge and any other verifier see ordinary
// HS256 JWTs), and the library's tokens read the same through Verify, by
// hand or, for forms the hand-written reader does not take, by the library.
func TestHandWrittenTokensAreTheLibrarysTokens(t *testing.T) {
	t.Parallel()
	k := key("k1", 1)
	s, err := NewSigner(AudienceQueue, []config.Key{k})
	require.NoError(t, err)
	for _, c := range []Claims{
		{Account: 7},
		{Account: 7, Role: "organizer", ID: "given"},
		{Account: 1 << 40, Event: 42, Place: 123456, Turn: 9, Since: 1700000000},
		{Account: 7, Role: "fan", Since: 1700000000, Email: EmailVerified, Device: "0123456789abcdef"},
		{Account: 7, Role: `odd "role" <&> \ é`, ID: "ü\n"},
	} {
		raw, exp, err := s.Issue(c, time.Hour)
		require.NoError(t, err)
		byLib, err := s.verifyJWT(raw)
		require.NoError(t, err)
		mine, err := s.Verify(raw)
		require.NoError(t, err)
		require.Equal(t, byLib, mine)
		if _, _, byHand := s.verifyCompact(raw); plain(c.Role) && plain(c.ID) {
			require.True(t, byHand, "Issue's tokens are read without encoding/json")
		}
		require.Equal(t, exp.Unix(), mine.Expires.Unix())
		if c.ID == "" {
			mine.ID = ""
		}
		mine.Expires = time.Time{}
		require.Equal(t, c, mine)
	}
	exp := time.Now().Add(time.Hour).Unix()
	for name, claims := range map[string]jwt.MapClaims{
		"the library's form":  {"sub": "7", "evt": 42, "plc": 5, "aud": []string{AudienceQueue}, "exp": exp, "iat": exp - 60, "jti": "x"},
		"aud as a string":     {"sub": "7", "aud": AudienceQueue, "exp": exp},
		"exp with a fraction": {"sub": "7", "aud": AudienceQueue, "exp": float64(exp) + 0.5},
		"escaped text":        {"sub": "7", "role": "a\"b", "aud": AudienceQueue, "exp": exp},
		"an unknown claim":    {"sub": "7", "aud": AudienceQueue, "exp": exp, "extra": map[string]any{"n": 1}},
		"an issuer":           {"sub": "7", "iss": "catraca", "aud": AudienceQueue, "exp": exp, "nbf": exp - 3600},
	} {
		raw := librarySigned(t, k, claims)
		byLib, err := s.verifyJWT(raw)
		require.NoError(t, err, name)
		got, err := s.Verify(raw)
		require.NoError(t, err, name)
		require.Equal(t, byLib, got, name)
	}
}

// TestVerifyRefusesWhatTheLibraryRefuses: tokens in the hand-read form
// (our header, a flat claims object) are refused for the same reasons.
func TestVerifyRefusesWhatTheLibraryRefuses(t *testing.T) {
	t.Parallel()
	k := key("k1", 1)
	s, err := NewSigner(AudienceQueue, []config.Key{k})
	require.NoError(t, err)
	now := time.Now().Unix()
	for name, claims := range map[string]jwt.MapClaims{
		"expired":              {"sub": "7", "aud": AudienceQueue, "exp": now - 1},
		"expiring now":         {"sub": "7", "aud": AudienceQueue, "exp": now},
		"no expiry":            {"sub": "7", "aud": AudienceQueue},
		"not valid yet":        {"sub": "7", "aud": AudienceQueue, "exp": now + 60, "nbf": now + 30},
		"no audience":          {"sub": "7", "exp": now + 60},
		"another audience":     {"sub": "7", "aud": []string{AudienceSession}, "exp": now + 60},
		"empty audience":       {"sub": "7", "aud": []string{}, "exp": now + 60},
		"no subject":           {"aud": AudienceQueue, "exp": now + 60},
		"subject not a number": {"sub": "x7", "aud": AudienceQueue, "exp": now + 60},
		"subject zero":         {"sub": "0", "aud": AudienceQueue, "exp": now + 60},
	} {
		raw := librarySigned(t, k, claims)
		_, err := s.Verify(raw)
		require.ErrorIs(t, err, ErrInvalid, name)
		_, err = s.verifyJWT(raw)
		require.ErrorIs(t, err, ErrInvalid, name)
	}
	// JSON the library refuses to read, however well signed.
	for name, payload := range map[string]string{
		"leading zeros":     `{"sub":"7","aud":"` + AudienceQueue + `","exp":0` + strconv.FormatInt(now+60, 10) + `}`,
		"control character": `{"sub":"7","role":"a` + "\x01" + `","aud":"` + AudienceQueue + `","exp":` + strconv.FormatInt(now+60, 10) + `}`,
		"trailing data":     `{"sub":"7","aud":"` + AudienceQueue + `","exp":` + strconv.FormatInt(now+60, 10) + `}x`,
	} {
		header := strings.Split(librarySigned(t, k, jwt.MapClaims{}), ".")[0]
		input := header + "." + base64.RawURLEncoding.EncodeToString([]byte(payload))
		sig, err := jwt.SigningMethodHS256.Sign(input, k.Secret)
		require.NoError(t, err)
		_, err = s.Verify(input + "." + base64.RawURLEncoding.EncodeToString(sig))
		require.ErrorIs(t, err, ErrInvalid, name)
	}
	raw, _, err := s.Issue(Claims{Account: 7}, time.Hour)
	require.NoError(t, err)
	for name, bad := range map[string]string{
		"signature of another key": librarySigned(t, key("k1", 2), jwt.MapClaims{"sub": "7", "aud": AudienceQueue, "exp": now + 60}),
		"signature cut":            raw[:len(raw)-1],
		"signature grown":          raw + "A",
		"a fourth part":            raw + ".x",
		"claims swapped":           strings.Join([]string{strings.Split(raw, ".")[0], strings.Split(librarySigned(t, k, jwt.MapClaims{"sub": "8"}), ".")[1], strings.Split(raw, ".")[2]}, "."),
	} {
		_, err := s.Verify(bad)
		require.ErrorIs(t, err, ErrInvalid, name)
	}
}

// TestVerifyIsCheap: a session is verified on every waiting-room join and
// status call, the requests millions of fans send; the JWT library's parse
// took 66 allocations (encoding/json and a fresh HMAC each time).
func TestVerifyIsCheap(t *testing.T) {
	s, err := NewSigner(AudienceSession, []config.Key{key("k1", 1)})
	require.NoError(t, err)
	raw, _, err := s.Issue(Claims{Account: 123456, Role: "fan"}, time.Hour)
	require.NoError(t, err)
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := s.Verify(raw); err != nil {
			t.Fatal(err)
		}
	})
	require.LessOrEqual(t, allocs, 2.0, "the strings the claims return only (role, jti): the subject is parsed where it lies")
}

// BenchmarkVerify times the check of a session token, once per waiting-room
// join and status call.
func BenchmarkVerify(b *testing.B) {
	s, _ := NewSigner(AudienceSession, []config.Key{key("k1", 1)})
	raw, _, _ := s.Issue(Claims{Account: 123456, Role: "fan"}, time.Hour)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Verify(raw); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkIssue times signing a queue ticket, once per join.
func BenchmarkIssue(b *testing.B) {
	s, _ := NewSigner(AudienceQueue, []config.Key{key("k1", 1)})
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := s.Issue(Claims{Account: 123456, Event: 77, Place: 4242}, 24*time.Hour); err != nil {
			b.Fatal(err)
		}
	}
}
