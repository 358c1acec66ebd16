package psp_test

import (
	"context"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/shared/psp"
	"github.com/catraca/catraca/shared/secret"
	"github.com/catraca/catraca/tools/pspsim"
)

// TestStripeFollowsARotatedKey: the key is rotated at the PSP and in
// Secrets Manager while the function stays warm. The first call with the
// old key is refused (401); the adapter reads the secret again and
// retries once with the new key, so no payment fails for a rotation.
func TestStripeFollowsARotatedKey(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := httptest.NewServer(pspsim.New(pspsim.Config{APIKey: "sk_test_new"}))
	t.Cleanup(srv.Close)
	var reads atomic.Int32
	key := secret.New("sk_test_old", func(context.Context) (string, error) { // the store holds the new key
		reads.Add(1)
		return "sk_test_new", nil
	}, time.Hour, nil)
	s := psp.NewStripeKey(srv.URL, key)
	_, _, err := s.Events(ctx, time.Now().Add(-time.Hour), "")
	require.NoError(t, err, "the refused call is retried with the key read again")
	require.Equal(t, int32(1), reads.Load())
	_, _, err = s.Events(ctx, time.Now().Add(-time.Hour), "")
	require.NoError(t, err)
	require.Equal(t, int32(1), reads.Load(), "the new key is kept: no read per call")

	// A key that is wrong in the store too fails, after one read.
	wrong := psp.NewStripeKey(srv.URL, secret.New("sk_test_wrong", func(context.Context) (string, error) {
		reads.Add(1)
		return "sk_test_wrong", nil
	}, time.Hour, nil))
	_, _, err = wrong.Events(ctx, time.Now().Add(-time.Hour), "")
	require.ErrorIs(t, err, psp.ErrRejected)
	require.Equal(t, int32(2), reads.Load())
}

// TestPlaceholderKey: the deployment creates the PSP secrets with a
// generated value to be replaced by Stripe's; until then no Stripe call
// can succeed, and scheduled reconciliation skips instead of failing.
func TestPlaceholderKey(t *testing.T) {
	t.Parallel()
	require.True(t, psp.Placeholder("https://api.stripe.com", "Qx7uV9bW1mN3pL5kJ8hG2fD4sA6zX0cV9bN1mQ3wE5rT"))
	require.False(t, psp.Placeholder("https://api.stripe.com", "sk_live_abc"))
	require.False(t, psp.Placeholder("https://api.stripe.com", "rk_live_abc"))
	require.False(t, psp.Placeholder("", "sk_test_abc"))
	require.True(t, psp.Placeholder("", "Qx7uV9bW1mN3pL5kJ8hG2fD4sA6zX0cV9bN1mQ3wE5rT"), `"" is Stripe's own API`)
	require.False(t, psp.Placeholder("http://127.0.0.1:8090", "anything"), "the simulator takes any key it was given")
}

// TestWebhooksFollowARotatedSecret: the signing secret is rolled at
// Stripe and in Secrets Manager while pspwebhook stays warm; the first
// delivery signed with the new secret reads the list again and verifies.
func TestWebhooksFollowARotatedSecret(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	stored := "whsec_old"
	w := psp.NewWebhooks(secret.New("whsec_old", func(context.Context) (string, error) { return stored, nil }, time.Hour, nil))
	body := event("checkout.session.expired", `{"id":"cs_1","object":"checkout.session","status":"expired"}`)
	_, err := w.Parse(ctx, body, pspsim.Sign("whsec_old", time.Now(), body))
	require.NoError(t, err)
	stored = "whsec_new, whsec_old"
	_, err = w.Parse(ctx, body, pspsim.Sign("whsec_new", time.Now(), body))
	require.NoError(t, err, "verified with the list read again")
	_, err = w.Parse(ctx, body, pspsim.Sign("whsec_forged", time.Now(), body))
	require.ErrorIs(t, err, psp.ErrBadSignature)
}
