package gateway

import (
	"encoding/base64"
	"errors"
	"maps"
	"strconv"
	"strings"
	"sync"

	"github.com/catraca/catraca/shared/config"
)

// ErrNoKey is what the KeyValueStore's get() rejects with for a missing key.
var ErrNoKey = errors.New("key not found")

// KVS stands in for the CloudFront KeyValueStore the function reads. Keys:
// "s:<kid>" and "a:<kid>" hold base64 session and admission signing keys,
// "room:<event id>" marks an event whose waiting room is on.
type KVS struct {
	mu sync.RWMutex
	m  map[string]string
}

// NewKVS returns a store with the signing keys in place.
func NewKVS(session, admission []config.Key) *KVS {
	return &KVS{m: KeyEntries(session, admission)}
}

// KeyEntries are the store entries for the signing keys (also what the CDK
// app seeds the real store with).
func KeyEntries(session, admission []config.Key) map[string]string {
	m := map[string]string{}
	for _, k := range session {
		m["s:"+k.ID] = base64.StdEncoding.EncodeToString(k.Secret)
	}
	for _, k := range admission {
		m["a:"+k.ID] = base64.StdEncoding.EncodeToString(k.Secret)
	}
	return m
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

// SetGated replaces the set of events whose waiting room is on.
func (s *KVS) SetGated(events []int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	maps.DeleteFunc(s.m, func(k, _ string) bool { return strings.HasPrefix(k, "room:") })
	for _, id := range events {
		s.m["room:"+strconv.FormatInt(id, 10)] = "1"
	}
}
