package inventory

import (
	"encoding/hex"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestFingerprintKeepsItsText: a retry is matched to its hold by the
// fingerprint stored with it, so the text hashed must not change between
// releases (a hold made before a deploy and retried after it would be
// refused as a reused key): the hashes of sha256sum over the documented text.
func TestFingerprintKeepsItsText(t *testing.T) {
	for want, r := range map[string]Request{
		"2fb6721d4bb4ea6ca0c043e1c89803e5e056986044c47564b6d82de32bea7fe8": {Seats: []int64{900, 3, 5}},  // e=77;seats=[3 5 900];pool=;q=0
		"8fdf048d45bada3618dd7280cc20ce7b7af195d3c05e37068a6d6dcb58924047": {Pool: "FLOOR", Quantity: 3}, // e=77;seats=[];pool=FLOOR;q=3
		"1d8ab33ce4b2d1e1d92d695ebd961d3e507cb11e0c1166d83a25a658b00c4ae2": {Best: &Best{Quantity: 2, Section: "A"}},
	} {
		require.Equal(t, want, hex.EncodeToString(r.fingerprint(77, slices.Sorted(slices.Values(r.Seats)))), "%+v", r)
	}
}
