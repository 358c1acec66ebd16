package presale

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"slices"
)

// Commitment is the published promise of a seed: the lowercase hex of
// SHA-256(seed). Published when the registration opens, it ties the
// organizer to the seed before anyone knows who registered.
func Commitment(seed []byte) string {
	sum := sha256.Sum256(seed)
	return hex.EncodeToString(sum[:])
}

// Winners draws n winners among the registration ids, from the seed alone
// (docs/fairness.md, "The draw, step by step"):
//
//  1. ids are taken sorted bytewise, duplicates dropped;
//  2. each id's score is HMAC-SHA256(key = seed, message = the id's bytes);
//  3. ids are ordered by score (bytewise, ascending; equal scores, which
//     SHA-256 makes practically impossible, by id);
//  4. the first min(n, len(ids)) are the winners, in that order.
//
// Nobody can steer it without the seed, and the seed is fixed by its
// commitment before the ids are known. The order of ids given does not
// matter.
func Winners(seed []byte, ids []string, n int) []string {
	sorted := slices.Clone(ids)
	slices.Sort(sorted)
	sorted = slices.Compact(sorted)
	type scored struct {
		id    string
		score []byte
	}
	all := make([]scored, len(sorted))
	for i, id := range sorted {
		mac := hmac.New(sha256.New, seed)
		mac.Write([]byte(id))
		all[i] = scored{id, mac.Sum(nil)}
	}
	slices.SortStableFunc(all, func(a, b scored) int { return bytes.Compare(a.score, b.score) })
	n = max(0, min(n, len(all)))
	out := make([]string, n)
	for i := range out {
		out[i] = all[i].id
	}
	return out
}
