package challenge

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/tools/testenv"
)

// newTestPoW is a proof-of-work port on the test Redis whose clock the
// test moves.
func newTestPoW(t *testing.T, d Difficulty) (*PoW, *time.Time) {
	t.Helper()
	now := time.Now()
	p := NewPoW([][]byte{[]byte("k1-" + t.Name())}, testenv.RedisClient(t), "t"+strconv.FormatInt(now.UnixNano(), 36)+":", time.Minute, d)
	p.now = func() time.Time { return now }
	return p, &now
}

func requireRefused(t *testing.T, err error, reason string) {
	t.Helper()
	var no *Refused
	require.True(t, errors.As(err, &no), "want a refusal (%s), got %v", reason, err)
	require.Equal(t, reason, no.Reason, "%v", err)
}

func TestDifficultyRisesWithRisk(t *testing.T) {
	d := Difficulty{Threshold: 3, Base: 14, Step: 2, Max: 19}
	require.Equal(t, []int{14, 14, 16, 18, 19}, []int{d.Bits(2), d.Bits(3), d.Bits(4), d.Bits(5), d.Bits(9)})
}

func TestSolvedChallengePassesOnce(t *testing.T) {
	p, _ := newTestPoW(t, Difficulty{Threshold: 3, Base: 8, Step: 2, Max: 12})
	ctx := context.Background()
	s := Subject{Account: 7, Event: 42, Risk: 4}
	c, err := p.Issue(s)
	require.NoError(t, err)
	require.Equal(t, KindPoW, c.Kind)
	require.Equal(t, 10, c.Bits, "one point over the threshold: one step harder")
	nonce := Solve(c)
	require.GreaterOrEqual(t, ZeroBits(c.Token, nonce), 10)
	require.NoError(t, p.Verify(ctx, s, Answer{Token: c.Token, Solution: nonce}))
	requireRefused(t, p.Verify(ctx, s, Answer{Token: c.Token, Solution: nonce}), ReasonReplayed)
}

func TestExpiredChallengeIsRefused(t *testing.T) {
	p, now := newTestPoW(t, Difficulty{Threshold: 3, Base: 6, Max: 6})
	s := Subject{Account: 7, Event: 42, Risk: 3}
	c, err := p.Issue(s)
	require.NoError(t, err)
	nonce := Solve(c)
	*now = c.ExpiresAt
	requireRefused(t, p.Verify(context.Background(), s, Answer{Token: c.Token, Solution: nonce}), ReasonExpired)
}

func TestChallengeIsBoundToAccountAndEvent(t *testing.T) {
	p, _ := newTestPoW(t, Difficulty{Threshold: 3, Base: 6, Max: 6})
	c, err := p.Issue(Subject{Account: 7, Event: 42, Risk: 3})
	require.NoError(t, err)
	a := Answer{Token: c.Token, Solution: Solve(c)}
	requireRefused(t, p.Verify(context.Background(), Subject{Account: 8, Event: 42}, a), ReasonWrongSubject)
	requireRefused(t, p.Verify(context.Background(), Subject{Account: 7, Event: 43}, a), ReasonWrongSubject)
}

func TestTooEasySolutionIsRefused(t *testing.T) {
	p, _ := newTestPoW(t, Difficulty{Threshold: 3, Base: 16, Max: 16})
	s := Subject{Account: 7, Event: 42, Risk: 3}
	c, err := p.Issue(s)
	require.NoError(t, err)
	// A nonce that solves an easier puzzle over the same token.
	easy := Solve(Challenge{Token: c.Token, Bits: 4})
	if ZeroBits(c.Token, easy) >= 16 {
		t.Fatalf("nonce %s happens to solve 16 bits; pick another token", easy)
	}
	requireRefused(t, p.Verify(context.Background(), s, Answer{Token: c.Token, Solution: easy}), ReasonTooEasy)
	requireRefused(t, p.Verify(context.Background(), s, Answer{Token: c.Token, Solution: "12ab"}), ReasonInvalid)
}

func TestForgedChallengeIsRefused(t *testing.T) {
	p, _ := newTestPoW(t, Difficulty{Threshold: 3, Base: 16, Max: 16})
	other, _ := newTestPoW(t, Difficulty{Threshold: 3, Base: 1, Max: 1})
	other.keys = [][]byte{[]byte("someone else's key")}
	s := Subject{Account: 7, Event: 42, Risk: 3}
	c, err := other.Issue(s) // one bit: cheap, but not ours
	require.NoError(t, err)
	requireRefused(t, p.Verify(context.Background(), s, Answer{Token: c.Token, Solution: Solve(c)}), ReasonInvalid)
	requireRefused(t, p.Verify(context.Background(), s, Answer{Token: "x.y", Solution: "1"}), ReasonInvalid)
}

// BenchmarkSolve is the CPU's speed at the puzzle (what the simulator's
// farm pays per challenge), reported as hashes/s over puzzles of 16 bits.
func BenchmarkSolve(b *testing.B) {
	tries := 0.0
	for i := range b.N {
		n, _ := strconv.Atoi(Solve(Challenge{Token: "bench." + strconv.Itoa(i), Bits: 16}))
		tries += float64(n + 1)
	}
	b.ReportMetric(tries/b.Elapsed().Seconds(), "hashes/s")
}
