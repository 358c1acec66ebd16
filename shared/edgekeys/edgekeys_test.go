package edgekeys

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/shared/config"
)

func TestEntriesAndDiff(t *testing.T) {
	t.Parallel()
	want := Entries([]config.Key{{ID: "k2", Secret: []byte("session")}}, []config.Key{{ID: "k1", Secret: []byte("admission")}}, []int64{7, 9})
	require.Equal(t, map[string]string{"s:k2": "c2Vzc2lvbg==", "a:k1": "YWRtaXNzaW9u", "room:7": "1", "room:9": "1"}, want)

	have := map[string]string{"s:k1": "old", "a:k1": "changed", "room:7": "1", "room:3": "1"}
	puts, deletes := Diff(have, want)
	require.Equal(t, []string{"a:k1", "room:9", "s:k2"}, puts)
	require.Equal(t, []string{"room:3", "s:k1"}, deletes)

	puts, deletes = Diff(want, want)
	require.Empty(t, puts)
	require.Empty(t, deletes)
}
