package pspsim

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/shared/psp"
)

func newSim(t *testing.T, key string) (*Sim, *httptest.Server) {
	t.Helper()
	s := New(Config{APIKey: key, Secret: []byte("webhook secret")})
	t.Cleanup(s.Close)
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return s, srv
}

// TestNoDefaultAPIKey: the repository's old default key opens nothing, and
// a simulator configured without a key refuses every call.
func TestNoDefaultAPIKey(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, key := range []string{"", "sk_test_0123456789abcdef"} {
		_, srv := newSim(t, key)
		for _, tried := range []string{"", "sk_test_catraca"} {
			_, err := psp.NewClient(srv.URL, tried).Events(ctx, time.Time{})
			require.ErrorIs(t, err, psp.ErrRejected, "key %q on a simulator keyed %q", tried, key)
		}
	}
	_, srv := newSim(t, "sk_test_0123456789abcdef")
	_, err := psp.NewClient(srv.URL, "sk_test_0123456789abcdef").Events(ctx, time.Time{})
	require.NoError(t, err)
}

// TestCancelRefundDisputeAndLedger: a canceled payment takes no card; a
// paid one cannot be canceled; refunds (ours or the dashboard's) and
// disputes give the money back once, and the ledger adds up.
func TestCancelRefundDisputeAndLedger(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, srv := newSim(t, "sk_test_k")
	c := psp.NewClient(srv.URL, "sk_test_k")
	create := func(order int64) psp.Payment {
		p, err := c.CreatePayment(ctx, psp.CreatePayment{Amount: 1000, Currency: "brl", OrderID: order, Reference: "r"}, "")
		require.NoError(t, err)
		return p
	}
	canceled := create(1)
	p, err := c.CancelPayment(ctx, canceled.ID, "c1")
	require.NoError(t, err)
	require.Equal(t, psp.StatusCanceled, p.Status)
	p, err = s.Pay(canceled.ID, CardSuccess)
	require.NoError(t, err)
	require.Equal(t, psp.StatusCanceled, p.Status)

	paid, refunded, disputed := create(2), create(3), create(4)
	for _, p := range []psp.Payment{paid, refunded, disputed} {
		_, err := s.Pay(p.ID, CardSuccess)
		require.NoError(t, err)
	}
	_, err = c.CancelPayment(ctx, paid.ID, "c2")
	require.ErrorIs(t, err, psp.ErrRejected, "a paid payment cannot be canceled")
	_, err = c.Refund(ctx, refunded.ID, 1000, "r1")
	require.NoError(t, err)
	_, err = s.RefundAtPSP(refunded.ID)
	require.Error(t, err, "refunded once")
	res, err := http.Post(srv.URL+"/_sim/payments/"+disputed.ID+"/dispute", "application/json", nil)
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
	_, err = c.Refund(ctx, disputed.ID, 1000, "r2")
	require.ErrorIs(t, err, psp.ErrRejected, "a disputed payment cannot be refunded")

	stray := s.Charge(psp.CreatePayment{Amount: 7, Currency: "JPY", OrderID: 5})
	require.Equal(t, psp.StatusSucceeded, stray.Status)

	l := s.Ledger()
	require.Len(t, l, 6)
	require.Equal(t, map[string]int64{"BRL": 1000, "JPY": 7}, l.Net())
	byOrder := l.NetByOrder()
	require.Equal(t, map[string]int64{"BRL": 1000}, byOrder[2])
	require.Equal(t, map[string]int64{"BRL": 0}, byOrder[3])
	require.Equal(t, map[string]int64{"BRL": 0}, byOrder[4])
	require.NotContains(t, byOrder, int64(1), "a canceled payment moved no money")
}
