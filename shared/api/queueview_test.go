package api

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/shared/queue"
)

// TestQueueViewJSON: the hand-written encoding of join and status answers
// is byte for byte what encoding/json writes.
func TestQueueViewJSON(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 12, 1, 14, 30, 5, 123456789, time.UTC)
	local := at.In(time.FixedZone("BRT", -3*3600)).Truncate(time.Second)
	for _, v := range []queueView{
		{State: queue.StateWaiting, Poll: pollHints(77, queue.StateWaiting)},
		{State: queue.StateWaiting, Position: 12345, Ahead: 12344, ETASeconds: 3600, Message: "You are in line.",
			Ticket: "a.b.c", Poll: pollHints(1<<40, queue.StateWaiting)},
		{State: queue.StatePrequeue, DrawAt: &at, Message: "At " + at.Format(time.RFC3339) + " <&> \"quoted\" \\ é \u2028 \x01",
			Poll: pollHints(3, queue.StatePrequeue)},
		{State: queue.StateAdmitted, Admission: "x.y.z", AdmissionExpires: &local, OpensAt: &at, Ahead: -1, Position: -2, ETASeconds: -3},
	} {
		want, err := json.Marshal(v)
		require.NoError(t, err)
		require.Equal(t, string(want)+"\n", string(v.appendJSON(nil)))
	}
}
