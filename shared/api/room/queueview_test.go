package room

import (
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/shared/api/web"
	"github.com/catraca/catraca/shared/queue"
)

// TestQueueViewJSON: the hand-written encoding of join and status answers
// is byte for byte what encoding/json writes.
func TestQueueViewJSON(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 12, 1, 14, 30, 5, 123456789, time.UTC)
	local := at.In(time.FixedZone("BRT", -3*3600)).Truncate(time.Second)
	ahead, minus := int64(12344), int64(-1)
	for _, v := range []queueView{
		{State: queue.StateWaiting, Poll: pollHints(pathsOf(77), queue.StateWaiting)},
		{State: queue.StateWaiting, Position: 12345, Ahead: &ahead, ETASeconds: 3600, Message: "You are in line.",
			Ticket: "a.b.c", Poll: pollHints(pathsOf(1<<40), queue.StateWaiting)},
		{State: queue.StatePrequeue, DrawAt: &at, Message: "At " + at.Format(time.RFC3339) + " <&> \"quoted\" \\ é \u2028 \x01",
			Poll: pollHints(pathsOf(3), queue.StatePrequeue)},
		{State: queue.StateAdmitted, Admission: "x.y.z", AdmissionExpires: &local, OpensAt: &at, Ahead: &minus, Position: -2, ETASeconds: -3},
	} {
		want, err := json.Marshal(v)
		require.NoError(t, err)
		require.Equal(t, string(want)+"\n", string(v.appendJSON(nil)))
	}
}

// TestTokenCookieIsNetHTTPs: the queue's hand-written Set-Cookie headers
// are byte for byte what http.SetCookie writes for the same cookie.
func TestTokenCookieIsNetHTTPs(t *testing.T) {
	t.Parallel()
	exp := time.Date(2026, 12, 2, 14, 30, 5, 0, time.FixedZone("BRT", -3*3600))
	for _, https := range []bool{false, true} {
		r := httptest.NewRequest(http.MethodPost, "/api/events/77/queue", nil)
		if https {
			r.Header.Set("X-Forwarded-Proto", "https")
		}
		got, want := httptest.NewRecorder(), httptest.NewRecorder()
		web.SetTokenCookie(got, r, queueTicketCookie(77), "eyJh.eyJz-_.c2ln", "/api/events/77", exp)
		http.SetCookie(want, &http.Cookie{Name: queueTicketCookie(77), Value: "eyJh.eyJz-_.c2ln", Path: "/api/events/77",
			Expires: exp, HttpOnly: true, Secure: https, SameSite: http.SameSiteLaxMode})
		require.Equal(t, want.Header()["Set-Cookie"], got.Header()["Set-Cookie"])
	}
}

// TestRoomPaths: the paths cut from one string are the ones the answers and
// the ticket cookie have always named.
func TestRoomPaths(t *testing.T) {
	t.Parallel()
	for _, id := range []int64{1, 77, 1 << 40, math.MaxInt64} {
		base := "/api/events/" + strconv.FormatInt(id, 10)
		require.Equal(t, roomPaths{event: base, status: base + "/queue", progress: base + "/queue/progress"}, pathsOf(id))
	}
}
