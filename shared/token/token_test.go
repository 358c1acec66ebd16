package token

import (
	"encoding/base64"
	"encoding/json"
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
