package problem

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// TestBuildersLeaveASharedProblemAlone: requests that add members, causes
// and waits to one package-level problem at once neither race nor change
// what the next request sends.
func TestBuildersLeaveASharedProblemAlone(t *testing.T) {
	shared := New(http.StatusUnauthorized, "unauthenticated", "Log in to continue.")
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			p := shared.With("attempt", i).Wrap(errors.New("cause")).RetryIn(time.Duration(i) * time.Second)
			if p.Extra["attempt"] != i || p.Cause == nil || p.RetryAfter != i+1 {
				t.Errorf("built problem %+v lost what was added", p)
			}
			Write(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/", nil), shared)
		})
	}
	wg.Wait()
	if shared.Extra != nil || shared.Cause != nil || shared.RetryAfter != 0 {
		t.Fatalf("the shared problem changed: %+v", shared)
	}
}
