package searchindex

import (
	"errors"
	"strings"
)

var errTSVector = errors.New("malformed tsvector text")

// lexemes splits the text form of a tsvector ('word':1A,4 'other':2B)
// into the lexemes with weight A somewhere and the others. Quotes and
// backslashes inside a lexeme come doubled.
func lexemes(vec string) (name, other []string, err error) {
	for i := 0; i < len(vec); {
		if vec[i] == ' ' {
			i++
			continue
		}
		if vec[i] != '\'' {
			return nil, nil, errTSVector
		}
		var b strings.Builder
		i++
		for {
			if i >= len(vec) {
				return nil, nil, errTSVector
			}
			c := vec[i]
			if (c == '\'' || c == '\\') && i+1 < len(vec) && vec[i+1] == c {
				b.WriteByte(c)
				i += 2
				continue
			}
			if c == '\'' {
				i++
				break
			}
			b.WriteByte(c)
			i++
		}
		weighted := false
		if i < len(vec) && vec[i] == ':' {
			end := strings.IndexByte(vec[i:], ' ')
			if end < 0 {
				end = len(vec) - i
			}
			weighted = strings.IndexByte(vec[i:i+end], 'A') >= 0
			i += end
		}
		if weighted {
			name = append(name, b.String())
		} else {
			other = append(other, b.String())
		}
	}
	return name, other, nil
}
