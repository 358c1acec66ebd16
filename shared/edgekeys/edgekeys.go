// Package edgekeys publishes what the edge function reads from the
// CloudFront KeyValueStore: the signing keys by kid ("s:<kid>", "a:<kid>",
// base64) and the events whose waiting room is on ("room:<id>"). The local
// gateway's store and the real one (cfkvs) are kept by the same code.
package edgekeys

import (
	"context"
	"encoding/base64"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/catraca/catraca/shared/config"
	"github.com/catraca/catraca/shared/event"
)

// Store is a key-value store the edge function reads.
type Store interface {
	// Sync makes the store hold exactly want.
	Sync(ctx context.Context, want map[string]string) error
}

// Entries are the store's wanted contents.
func Entries(session, admission []config.Key, gated []int64) map[string]string {
	m := map[string]string{}
	for _, k := range session {
		m["s:"+k.ID] = base64.StdEncoding.EncodeToString(k.Secret)
	}
	for _, k := range admission {
		m["a:"+k.ID] = base64.StdEncoding.EncodeToString(k.Secret)
	}
	for _, id := range gated {
		m["room:"+strconv.FormatInt(id, 10)] = "1"
	}
	return m
}

// Publish reads which events have their waiting room on now and syncs the
// store with them and the session and admission signing keys.
func Publish(ctx context.Context, events *event.Directory, store Store, session, admission []config.Key, now time.Time) error {
	evs, err := events.WaitingRoomEvents(ctx, now)
	if err != nil {
		return fmt.Errorf("gated events: %w", err)
	}
	var gated []int64
	for _, e := range evs {
		if e.WaitingRoom.Enabled {
			gated = append(gated, e.ID)
		}
	}
	return store.Sync(ctx, Entries(session, admission, gated))
}

// Diff says what turns have into want: keys to put (new or changed, in key
// order) and keys to delete.
func Diff(have, want map[string]string) (puts, deletes []string) {
	for _, k := range slices.Sorted(maps.Keys(want)) {
		if v, ok := have[k]; !ok || v != want[k] {
			puts = append(puts, k)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(have)) {
		if _, ok := want[k]; !ok {
			deletes = append(deletes, k)
		}
	}
	return puts, deletes
}
