package secret

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestValueAge: a warm function re-reads its secret once the value is
// older than the maximum age, keeps the old one while the store fails,
// and spaces forced refreshes.
func TestValueAge(t *testing.T) {
	ctx := context.Background()
	now := time.Unix(0, 0)
	stored, fail, reads := "v1", false, 0
	v := New("v1", func(context.Context) (string, error) {
		reads++
		if fail {
			return "", errors.New("store unreachable")
		}
		return stored, nil
	}, time.Minute, func() time.Time { return now })
	stored = "v2"
	now = now.Add(59 * time.Second)
	require.Equal(t, "v1", v.Get(ctx), "younger than the maximum age: cached")
	now = now.Add(time.Second)
	require.Equal(t, "v2", v.Get(ctx), "as old as the maximum age: read again")
	require.Equal(t, 1, reads)

	fail = true
	now = now.Add(time.Minute)
	require.Equal(t, "v2", v.Get(ctx), "the store failing keeps the old value")
	_, changed, err := v.Refresh(ctx, "v2")
	require.Error(t, err)
	require.False(t, changed)
	fail, stored = false, "v3"
	_, changed, _ = v.Refresh(ctx, "v2")
	require.False(t, changed, "a second forced refresh within minRefresh does not read")
	now = now.Add(minRefresh)
	got, changed, err := v.Refresh(ctx, "v2")
	require.NoError(t, err)
	require.True(t, changed)
	require.Equal(t, "v3", got)
	got, changed, _ = v.Refresh(ctx, "v2")
	require.True(t, changed, "another call refreshed already: retry with its value")
	require.Equal(t, "v3", got)
}
