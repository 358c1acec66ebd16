package account

import (
	"fmt"
	"sync"
	"testing"

	"golang.org/x/crypto/argon2"
)

// RecordDerivations records the cost of every argon2id derivation until
// the test ends; the function it returns hands the records over and
// starts afresh.
func RecordDerivations(t testing.TB) func() []string {
	var mu sync.Mutex
	var got []string
	deriveKey = func(secret, salt []byte, time, memory uint32, threads uint8, keyLen uint32) []byte {
		mu.Lock()
		got = append(got, fmt.Sprintf("argon2id t=%d m=%d p=%d len=%d", time, memory, threads, keyLen))
		mu.Unlock()
		return argon2.IDKey(secret, salt, time, memory, threads, keyLen)
	}
	t.Cleanup(func() { deriveKey = argon2.IDKey })
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		out := got
		got = nil
		return out
	}
}
