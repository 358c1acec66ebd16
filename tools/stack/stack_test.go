package stack_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/catraca/catraca/tools/stack"
	"github.com/catraca/catraca/tools/testenv"
)

// TestSlowBodiesAreCutOff: a client that sends its headers, then trickles
// the body, is answered (a problem naming the cause) and let go once the
// body timeout passes, instead of holding its connection for as long as it
// keeps trickling. The timeout is small here; the client would trickle for
// far longer than the test waits.
func TestSlowBodiesAreCutOff(t *testing.T) {
	t.Parallel()
	cfg := testenv.Config(t, testenv.NewDatabases(t, 1))
	st, err := stack.Start(context.Background(), cfg, stack.Options{Manual: true, BodyTimeout: 200 * time.Millisecond,
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	u, err := url.Parse(st.URL)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", u.Port()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	const size = 1 << 20 // at a byte per 10 ms, about three hours
	fmt.Fprintf(conn, "POST /api/session HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n{", u.Host, size)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				if _, err := conn.Write([]byte(" ")); err != nil {
					return
				}
			}
		}
	}()

	conn.SetReadDeadline(time.Now().Add(30 * time.Second)) // the test's bound, not the server's
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer while the body trickles: %v", err)
	}
	defer res.Body.Close()
	var p struct{ Type, Detail string }
	if err := json.NewDecoder(res.Body).Decode(&p); err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusBadRequest || p.Type != "https://catraca.dev/problems/body-timeout" {
		t.Fatalf("answered %d %+v; want 400 body-timeout", res.StatusCode, p)
	}
}
