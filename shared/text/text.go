// Package text holds the checks user-typed text passes at the boundary
// before it is stored and shown to others.
package text

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// OneLine tells whether s is valid UTF-8 without line breaks (control
// characters and the Unicode line and paragraph separators) or direction
// overrides: names, labels and codes are shown in
// lists, headings, mail subjects and CSV cells, where those would break
// the line or reverse the text around them.
func OneLine(s string) bool {
	return utf8.ValidString(s) && !strings.ContainsFunc(s, func(r rune) bool {
		return unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) || unicode.In(r, unicode.Zl, unicode.Zp)
	})
}

// Length is the number of characters (code points) in s: limits told in
// characters count these, not bytes ("ã" is two bytes, one character).
func Length(s string) int { return utf8.RuneCountInString(s) }

// Blank tells whether s shows nothing: it is empty or only spaces and
// invisible characters (a zero-width space or joiner, a byte-order mark,
// the Hangul and Braille blanks), so a name made of them is no name.
func Blank(s string) bool {
	return !strings.ContainsFunc(s, func(r rune) bool {
		return !unicode.IsSpace(r) && !unicode.Is(unicode.Cf, r) && !strings.ContainsRune(blanks, r)
	})
}

// blanks are letters and symbols that render as nothing.
const blanks = "\u115f\u1160\u2800\u3164\uffa0"
