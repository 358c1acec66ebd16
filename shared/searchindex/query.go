package searchindex

import (
	"sort"
	"strings"
	"unicode"
)

// folder folds text as the catalog's search_normalize does
// (lower(unaccent(...))): for the letters and marks of Latin, Greek and
// Cyrillic, by a table read from the catalog itself when the index loads
// (the unaccent rules are the database's, not Go's: "Ǣ" stays a letter
// there, "ħ" becomes "h"); elsewhere Go's lower case.
type folder map[rune]string

// foldRanges are the code points whose folding the index asks the catalog.
var foldRanges = [][2]rune{{0x80, 0x4ff}, {0x1e00, 0x1eff}}

func (f folder) fold(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch m, ok := f[r]; {
		case ok:
			b.WriteString(m)
		case r < 0x80:
			b.WriteRune(unicode.ToLower(r))
		case inFoldRanges(r):
			b.WriteRune(r) // the catalog leaves it as it is
		default:
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}

func inFoldRanges(r rune) bool {
	for _, rg := range foldRanges {
		if r >= rg[0] && r <= rg[1] {
			return true
		}
	}
	return false
}

// words splits folded text like search_query: on every run of characters
// that are neither letters nor digits.
func words(folded string) []string {
	return strings.FieldsFunc(folded, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

func hasDigit(w string) bool { return strings.ContainsAny(w, "0123456789") }

// term is one word of a parsed query: a lexeme, or every lexeme that
// starts with it.
type term struct {
	word   string
	prefix bool
}

// parse turns typed text into terms as search_query does (catalog
// migration 5): a word with a digit is kept (as a prefix when last); a
// known word is kept; the last word is a prefix when some known word
// starts with it; any other word becomes the most similar known word by
// trigrams (similarity ≥ 0.3). ok is false when nothing searchable was
// typed or a word can match nothing.
func (s *state) parse(text string) (terms []term, ok bool) {
	ws := words(s.fold.fold(text))
	for i, w := range ws {
		last := i == len(ws)-1
		switch {
		case hasDigit(w):
			terms = append(terms, term{word: w, prefix: last})
		case s.known(w):
			terms = append(terms, term{word: w})
		case last && s.knownPrefix(w):
			terms = append(terms, term{word: w, prefix: true})
		default:
			c, found := s.correct(w)
			if !found {
				return nil, false
			}
			terms = append(terms, term{word: c})
		}
	}
	return terms, len(terms) > 0
}

func (s *state) known(w string) bool {
	id, ok := s.ids[w]
	return ok && !s.words[id].digit
}

// knownPrefix tells whether some known word (no digits) starts with p.
func (s *state) knownPrefix(p string) bool {
	for i := s.lowerBound(p); i < len(s.sorted); i++ {
		wd := &s.words[s.sorted[i]]
		if !strings.HasPrefix(wd.text, p) {
			return false
		}
		if !wd.digit {
			return true
		}
	}
	return false
}

// withPrefix returns the ids of every lexeme starting with p.
func (s *state) withPrefix(p string) []uint32 {
	i := s.lowerBound(p)
	j := i
	for j < len(s.sorted) && strings.HasPrefix(s.words[s.sorted[j]].text, p) {
		j++
	}
	return s.sorted[i:j]
}

func (s *state) lowerBound(p string) int {
	return sort.Search(len(s.sorted), func(i int) bool { return s.words[s.sorted[i]].text >= p })
}

// correct returns the known word most similar to w, pg_trgm's similarity
// at least 0.3 (ties: the first in text order). Answers are cached per
// word until the vocabulary grows.
func (s *state) correct(w string) (string, bool) {
	s.cmu.Lock()
	c, ok := s.corrections[w]
	s.cmu.Unlock()
	if ok {
		return c, c != ""
	}
	grams := trigrams(w)
	common := map[uint32]int{}
	for _, g := range grams {
		for _, id := range s.trigramWords[g] {
			common[id]++
		}
	}
	best, bestSim := "", float32(0)
	for id, n := range common {
		wd := &s.words[id]
		sim := float32(n) / float32(len(grams)+wd.trigrams-n)
		if sim >= 0.3 && (sim > bestSim || sim == bestSim && wd.text < best) {
			best, bestSim = wd.text, sim
		}
	}
	s.cmu.Lock()
	if len(s.corrections) >= maxCorrections {
		clear(s.corrections)
	}
	s.corrections[w] = best
	s.cmu.Unlock()
	return best, best != ""
}

// maxCorrections bounds the cache of corrected words.
const maxCorrections = 10_000

// trigrams are pg_trgm's trigrams of w: each run of letters and digits,
// padded with two spaces before and one after, cut into every three
// consecutive characters, without repeats.
func trigrams(w string) []string {
	seen := map[string]bool{}
	var out []string
	for _, part := range words(w) {
		r := []rune("  " + part + " ")
		for i := 0; i+3 <= len(r); i++ {
			g := string(r[i : i+3])
			if !seen[g] {
				seen[g] = true
				out = append(out, g)
			}
		}
	}
	return out
}
