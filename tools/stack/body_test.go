package stack

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestBodyDeadlineEndsWithTheBody: once the body is read whole, its
// deadline no longer applies (net/http lifts it as it starts its
// background read): a handler answering long after it keeps its request's
// context; a deadline left set would end that read and cancel it.
func TestBodyDeadlineEndsWithTheBody(t *testing.T) {
	t.Parallel()
	const d = 50 * time.Millisecond
	srv := httptest.NewServer(boundBody(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.ReadAll(r.Body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		select {
		case <-r.Context().Done():
			http.Error(w, "cancelled", http.StatusServiceUnavailable)
		case <-time.After(10 * d): // the answer comes well after the body's deadline
			w.Write([]byte("ok"))
		}
	}), d))
	defer srv.Close()
	res, err := http.Post(srv.URL, "application/json", strings.NewReader(`{"a":1}`))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("answered %d %s; want 200 ok", res.StatusCode, b)
	}
}
