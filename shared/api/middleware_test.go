package api

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/shared/api/web"
	"github.com/catraca/catraca/shared/config"
	"github.com/catraca/catraca/shared/metrics"
)

// TestValidRequestIDIsTheRegexp: the hand-written check keeps exactly the
// X-Request-Id values ^[A-Za-z0-9._-]{1,64}$ keeps.
func TestValidRequestIDIsTheRegexp(t *testing.T) {
	t.Parallel()
	re := regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)
	ids := []string{"", "a", "Z", "0", ".", "_", "-", "abc-DEF_012.x", strings.Repeat("a", 64), strings.Repeat("a", 65),
		"a b", "a\n", "\na", "a/b", "a:b", "é", "a\x00", "a+b", "a~b", "[a]", "`", "@", "{", "\x7f"}
	for c := range 256 {
		ids = append(ids, string([]byte{byte(c)}), "x"+string([]byte{byte(c)})+"y")
	}
	for _, id := range ids {
		require.Equal(t, re.MatchString(id), validRequestID(id), "%q", id)
	}
}

// TestObserve: the middleware keeps a valid request id and replaces
// another, logs one line per request with the metrics the handler added,
// and caps bodies (an empty one passes untouched).
func TestObserve(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&logs, nil))
	s := &router{log: log, http: config.HTTP{MaxBodyBytes: 4}, mux: web.NewMux(log, translate)}
	h := s.observe(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		metrics.Add(r.Context(), metrics.Holds, 2)
		body, err := io.ReadAll(r.Body)
		if err != nil {
			w.WriteHeader(http.StatusRequestEntityTooLarge)
			return
		}
		w.Write(body)
	}))
	for _, c := range []struct {
		id, body    string
		keep        bool
		status, n   int
		emptyReader bool
	}{
		{id: "caller-1.x_Y", keep: true, status: http.StatusOK},
		{id: "bad id", status: http.StatusOK, emptyReader: true},
		{id: "", body: "abcd", status: http.StatusOK, n: 4},
		{id: strings.Repeat("a", 65), body: "abcde", status: http.StatusRequestEntityTooLarge},
	} {
		logs.Reset()
		var body io.Reader
		if c.body != "" || c.emptyReader {
			body = strings.NewReader(c.body)
		}
		r := httptest.NewRequest(http.MethodPost, "/api/events/7/queue", body)
		if c.id != "" {
			r.Header.Set("X-Request-Id", c.id)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		got := w.Header().Get("X-Request-Id")
		if c.keep {
			require.Equal(t, c.id, got)
		} else {
			require.Regexp(t, `^[0-9a-f]{16}$`, got)
		}
		require.Equal(t, []string{got}, w.Header().Values("X-Request-Id"))
		require.Equal(t, c.status, w.Code)
		var line map[string]any
		require.NoError(t, json.Unmarshal(logs.Bytes(), &line), logs.String())
		require.Equal(t, "http", line["msg"])
		require.Equal(t, got, line["request_id"])
		require.Equal(t, "POST", line["method"])
		require.Equal(t, "/api/events/7/queue", line["path"])
		require.Equal(t, float64(c.status), line["status"])
		require.Equal(t, float64(c.n), line["bytes"])
		require.Equal(t, 2.0, line[metrics.Holds])
		require.Contains(t, line, "_aws")
	}
}
