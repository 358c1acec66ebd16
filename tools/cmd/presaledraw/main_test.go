package main

import (
	"testing"

	"pgregory.net/rapid"

	"github.com/catraca/catraca/shared/presale"
)

// TestDrawIsReproducible: the command, written from the docs, and the
// server's draw pick the same winners in the same order for any seed, any
// ids in any order and any number of codes; the winners are distinct
// registered ids, as many as the codes allow.
func TestDrawIsReproducible(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		seed := rapid.SliceOfN(rapid.Byte(), 32, 32).Draw(t, "seed")
		ids := rapid.SliceOfDistinct(rapid.StringMatching(`r[0-9a-f]{1,20}`), rapid.ID).Draw(t, "ids")
		codes := rapid.IntRange(0, len(ids)+3).Draw(t, "codes")
		want := presale.Winners(seed, ids, codes)
		shuffled := rapid.Permutation(ids).Draw(t, "shuffled")
		got := winners(seed, shuffled, codes)
		if len(got) != min(codes, len(ids)) {
			t.Fatalf("%d winners of %d ids with %d codes", len(got), len(ids), codes)
		}
		if len(want) != len(got) {
			t.Fatalf("server %v, command %v", want, got)
		}
		registered := map[string]bool{}
		for _, id := range ids {
			registered[id] = true
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("server %v, command %v", want, got)
			}
			if !registered[got[i]] {
				t.Fatalf("winner %q is not registered", got[i])
			}
			delete(registered, got[i]) // distinct
		}
	})
}
