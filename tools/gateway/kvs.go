package gateway

import (
	"context"
	"errors"
	"maps"
	"sync"
)

// ErrNoKey is what the KeyValueStore's get() rejects with for a missing key.
var ErrNoKey = errors.New("key not found")

// KVS stands in for the CloudFront KeyValueStore the function reads; it is
// an edgekeys.Store, kept by the same code as the real one.
type KVS struct {
	mu sync.RWMutex
	m  map[string]string
}

// NewKVS returns a store holding entries.
func NewKVS(entries map[string]string) *KVS {
	return &KVS{m: maps.Clone(entries)}
}

// Get returns a value or ErrNoKey.
func (s *KVS) Get(key string) (string, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	v, ok := s.m[key]
	if !ok {
		return "", ErrNoKey
	}
	return v, nil
}

// Sync replaces the contents.
func (s *KVS) Sync(_ context.Context, want map[string]string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m = maps.Clone(want)
	return nil
}
