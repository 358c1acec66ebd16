package app

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSecretReadsAPlaceholderAgain: a variable that held a placeholder at
// cold start is read again from its store when refused; one that did not
// (the local stack) stays what it is.
func TestSecretReadsAPlaceholderAgain(t *testing.T) {
	stored := "sk_live_old"
	refs.Lock()
	refs.fetch = func(_ context.Context, store, id string) (string, error) {
		require.Equal(t, "secret", store)
		require.Equal(t, "arn:psp", id)
		return stored, nil
	}
	refs.placeholders["CATRACA_TEST_KEY"] = "{{secret:arn:psp}}"
	refs.Unlock()
	t.Cleanup(func() { refs.Lock(); delete(refs.placeholders, "CATRACA_TEST_KEY"); refs.Unlock() })

	key := Secret("CATRACA_TEST_KEY", "sk_live_old")
	ctx := context.Background()
	require.Equal(t, "sk_live_old", key.Get(ctx))
	stored = "sk_live_new" // rotated in Secrets Manager
	got, changed, err := key.Refresh(ctx, "sk_live_old")
	require.NoError(t, err)
	require.True(t, changed)
	require.Equal(t, "sk_live_new", got)
	require.Equal(t, "sk_live_new", key.Get(ctx))

	local := Secret("CATRACA_OTHER_KEY", "sk_test_local")
	_, changed, err = local.Refresh(ctx, "sk_test_local")
	require.NoError(t, err)
	require.False(t, changed)
}
