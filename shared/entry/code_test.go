package entry

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/shared/config"
)

func TestRotatingCodes(t *testing.T) {
	ring, err := NewRing([]config.Key{{ID: "k2", Secret: []byte("second secret, 32 bytes long...")}, {ID: "k1", Secret: []byte("first secret")}})
	require.NoError(t, err)
	k := TicketKey{Ticket: 4097, Generation: 1, KeyID: "k2"}
	now := time.Date(2026, 12, 1, 20, 0, 7, 0, time.UTC)
	code, err := ring.Rotating(k, StepAt(now))
	require.NoError(t, err)
	require.Regexp(t, `^R1\.4097\.1\.\d+\.[A-Z2-7]{103}$`, code)
	pub, ok := ring.Public(k)
	require.True(t, ok)

	sc, err := Parse(" " + strings.ToLower(code) + "\n")
	require.NoError(t, err, "hand-typed case and whitespace are forgiven")
	require.True(t, sc.Signed(pub))
	require.Equal(t, 0, sc.Timing(now))
	require.Equal(t, 0, sc.Timing(now.Add(Tolerance*Step)), "a code shown a little late still works")
	require.Equal(t, -1, sc.Timing(now.Add((Tolerance+1)*Step)), "a screenshot stops working")
	require.Equal(t, 1, sc.Timing(now.Add(-2*Step)), "a code from a clock far ahead is not valid yet")

	// Another step, another ticket, another generation or key: no match.
	for _, other := range []TicketKey{{4097, 2, "k2"}, {4098, 1, "k2"}, {4097, 1, "k1"}} {
		p, _ := ring.Public(other)
		require.False(t, sc.Signed(p), "%+v", other)
	}
	step := "." + strconv.FormatInt(sc.Step, 10) + "."
	tampered := strings.Replace(code, step, step[:len(step)-1]+"0.", 1)
	st, err := Parse(tampered)
	require.NoError(t, err)
	require.False(t, st.Signed(pub), "a code moved to another step")

	static, err := ring.Static(k)
	require.NoError(t, err)
	ss, err := Parse(static)
	require.NoError(t, err)
	require.True(t, ss.Static)
	require.True(t, ss.Signed(pub))
	require.Equal(t, 0, ss.Timing(now.Add(24*time.Hour)))

	for _, bad := range []string{"", "R1.1.1.1", "X1.1.1.1.AAAA", "R1.-4.1.1." + strings.Repeat("A", 103), "R1.4.1.1.AAAA", "S1.4.0." + strings.Repeat("A", 103)} {
		_, err := Parse(bad)
		require.ErrorIs(t, err, ErrMalformed, bad)
	}
	_, ok = ring.Public(TicketKey{Ticket: 1, Generation: 1, KeyID: "retired"})
	require.False(t, ok)
}
