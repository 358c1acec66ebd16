package api_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/shared/venue"
	"github.com/catraca/catraca/tools/apptest"
	"github.com/catraca/catraca/tools/syncbuf"
)

// TestRequestLogCarriesMetrics: the hold's request log line is also the
// CloudWatch metric (Embedded Metric Format), a won hold counts in Holds
// and a lost race in HoldConflicts.
func TestRequestLogCarriesMetrics(t *testing.T) {
	t.Parallel()
	a := apptest.New(t, 1)
	var logs syncbuf.Buffer
	a.Logger = slog.New(slog.NewJSONHandler(&logs, nil))
	srv := serve(t, a)
	o := organizerFan(t, a, srv)
	venueID := importVenue(t, o, venue.Stadium("Metrics Arena", "Recife", 100, 5))
	eventID := createEvent(t, o, venueID, "Metrics Show", false)
	seat := seatIDs(t, a, venueID)[0]

	ana, bia := newFan(t, srv), newFan(t, srv)
	ana.signUp("ana-metrics@example.com")
	bia.signUp("bia-metrics@example.com")
	holds := "/api/events/" + itoa(eventID) + "/holds"
	require.Equal(t, http.StatusCreated, ana.do(http.MethodPost, holds, map[string]any{"seats": []int64{seat}}, "Idempotency-Key", "m1").Status)
	require.Equal(t, http.StatusConflict, bia.do(http.MethodPost, holds, map[string]any{"seats": []int64{seat}}, "Idempotency-Key", "m2").Status)

	var won, lost int
	sc := bufio.NewScanner(bytes.NewReader(logs.Bytes()))
	for sc.Scan() {
		var line map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &line))
		if line["msg"] != "http" || line["path"] != holds {
			continue
		}
		require.Contains(t, line, "_aws", "a hold's log line is a metric")
		if line["Holds"] == 1.0 {
			won++
		}
		if line["HoldConflicts"] == 1.0 {
			lost++
		}
	}
	require.Equal(t, 1, won)
	require.Equal(t, 1, lost)
}
