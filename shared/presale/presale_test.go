package presale

import "testing"

// A code is read one way however it is typed (an outsider's lowercase
// code with dashes was taken, the same without dashes refused).
func TestNormalizeCode(t *testing.T) {
	for typed, want := range map[string]string{
		"ABCD-EFGH-JKMN":        "ABCD-EFGH-JKMN",
		"abcd-efgh-jkmn":        "ABCD-EFGH-JKMN",
		"abcdefghjkmn":          "ABCD-EFGH-JKMN",
		" abcd efgh\tjkmn ":     "ABCD-EFGH-JKMN",
		"ab cd - ef gh - jk mn": "ABCD-EFGH-JKMN",
		"abcd–efgh—jkmn":        "ABCD-EFGH-JKMN", // en and em dashes, as a mail client may type them
		"\uff19\uff25\uff2b\uff37-\uff39\uff14\uff36\uff14\uff0d\uff28\uff28\uff23\uff39": "9EKW-Y4V4-HHCY", // fullwidth, as the outsider sent it
		"0OI1-L234-5678":      "0011-1234-5678", // Crockford: O is 0, I and L are 1
		"":                    "",
		" - ":                 "",
		"ABCD-EFGH":           "ABCDEFGH",
		"ABCD-EFGH-JKMN-PQRS": "ABCDEFGHJKMNPQRS",
	} {
		if got := NormalizeCode(typed); got != want {
			t.Errorf("NormalizeCode(%q) = %q, want %q", typed, got, want)
		}
	}
	for range 100 {
		if c := newCode(); NormalizeCode(c) != c {
			t.Fatalf("a drawn code %q reads as %q", c, NormalizeCode(c))
		}
	}
}
