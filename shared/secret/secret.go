// Package secret keeps a secret's value current in a warm function: the
// value read at cold start is used for at most MaxAge, then read again,
// and read again at once when the party it authenticates against refuses
// it (a key rotated while the function stayed warm). Without it a rotated
// key reached functions only when Lambda happened to recycle them.
package secret

import (
	"context"
	"sync"
	"time"
)

// Read fetches a secret's current value from its store.
type Read func(ctx context.Context) (string, error)

// Value is one cached secret. The zero value is not usable; use New or Static.
type Value struct {
	read   Read // nil: a value that never changes (Static)
	maxAge time.Duration
	now    func() time.Time

	mu       sync.Mutex
	value    string
	readAt   time.Time
	forcedAt time.Time // the last Refresh that read the store
}

// MaxAge is how long a warm function uses a value before reading it
// again: a rotated secret reaches every instance within it.
const MaxAge = 5 * time.Minute

// minRefresh spaces forced re-reads: a key that is plainly wrong must not
// turn every refused call into a Secrets Manager call.
const minRefresh = 10 * time.Second

// Static is a value that is never re-read (the local stack's, a test's).
func Static(v string) *Value { return &Value{value: v, now: time.Now} }

// New returns a secret whose value is initial, read at cold start, and
// re-read with read once older than maxAge (MaxAge when 0).
func New(initial string, read Read, maxAge time.Duration, now func() time.Time) *Value {
	if maxAge <= 0 {
		maxAge = MaxAge
	}
	if now == nil {
		now = time.Now
	}
	return &Value{read: read, maxAge: maxAge, now: now, value: initial, readAt: now()}
}

// Get returns the value, read again first when older than its maximum
// age. A failed read keeps the old value (it may still be valid: the
// store being briefly unreachable must not stop payments) and is retried
// on the next Get.
func (s *Value) Get(ctx context.Context) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.read != nil && s.now().Sub(s.readAt) >= s.maxAge {
		if v, err := s.read(ctx); err == nil {
			s.value, s.readAt = v, s.now()
		}
	}
	return s.value
}

// Refresh is called when refused, the value a call used, was refused: it
// reads the value again and returns it with ok true when it differs from
// refused, so the caller retries once with it (and only then). Another
// call's refresh may have read it already; refreshes closer together than
// minRefresh do not read, so a wrong key costs no stream of store reads.
func (s *Value) Refresh(ctx context.Context, refused string) (current string, ok bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.value != refused {
		return s.value, true, nil
	}
	if s.read == nil || s.now().Sub(s.forcedAt) < minRefresh {
		return s.value, false, nil
	}
	s.forcedAt = s.now()
	v, err := s.read(ctx)
	if err != nil {
		return s.value, false, err
	}
	s.value, s.readAt = v, s.now()
	return v, v != refused, nil
}
