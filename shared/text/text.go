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
