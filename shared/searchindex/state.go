package searchindex

import (
	"container/heap"
	"sort"
	"strings"
	"sync"
)

// state is one loaded index: every event of the catalog (drafts too, so
// the vocabulary is the catalog's), with posting lists kept in the order
// search returns events, start time then id.
type state struct {
	docs  []doc
	slots map[int64]int32 // event id → index in docs
	// words are every lexeme ever seen (never removed, like the catalog's
	// search_words); ids finds one by text, sorted lists them in text order.
	words  []word
	ids    map[string]uint32
	sorted []uint32
	// trigramWords lists the known words (no digits) holding each trigram.
	trigramWords map[string][]uint32
	strs         map[string]uint32 // interned folded cities and categories
	cities       map[string]uint32 // city as stored → its folded id in strs
	fold         folder
	// corrections caches correct's answers ("" = none).
	cmu         sync.Mutex
	corrections map[string]string
}

type doc struct {
	id                   int64
	starts               int64 // unix microseconds, the catalog's precision
	saleStarts, saleEnds int64
	updated              int64
	listed, onSale       bool // not a draft; on sale (its status)
	opening              bool // scheduled or on sale: its sale may still open
	city, category       uint32
	lex                  []uint32 // word ids; nameFlag marks weight A
}

// nameFlag marks a lexeme a doc has in its name or category (weight A).
const nameFlag = 1 << 31

type word struct {
	text     string
	digit    bool
	trigrams int     // how many distinct trigrams text has
	name     []int32 // docs with the word in name or category, in order
	all      []int32 // docs with the word anywhere, in order
}

func newState(f folder) *state {
	return &state{fold: f, slots: map[int64]int32{}, ids: map[string]uint32{}, trigramWords: map[string][]uint32{},
		strs: map[string]uint32{}, cities: map[string]uint32{}, corrections: map[string]string{}}
}

// before orders docs as search returns them.
func (s *state) before(a, b int32) bool {
	da, db := &s.docs[a], &s.docs[b]
	return da.starts < db.starts || da.starts == db.starts && da.id < db.id
}

// wordID returns the id of lexeme text, adding it (kept in text order
// unless bulk, when the caller sorts once at the end).
func (s *state) wordID(text string, bulk bool) uint32 {
	if id, ok := s.ids[text]; ok {
		return id
	}
	id := uint32(len(s.words))
	w := word{text: text, digit: hasDigit(text)}
	if !w.digit {
		grams := trigrams(text)
		w.trigrams = len(grams)
		for _, g := range grams {
			s.trigramWords[g] = append(s.trigramWords[g], id)
		}
		clear(s.corrections) // a new word can be a better correction
	}
	s.words = append(s.words, w)
	s.ids[text] = id
	if bulk {
		s.sorted = append(s.sorted, id)
	} else {
		i := s.lowerBound(text)
		s.sorted = append(s.sorted, 0)
		copy(s.sorted[i+1:], s.sorted[i:])
		s.sorted[i] = id
	}
	return id
}

func (s *state) sortWords() {
	sort.Slice(s.sorted, func(i, j int) bool { return s.words[s.sorted[i]].text < s.words[s.sorted[j]].text })
}

func (s *state) intern(v string) uint32 {
	if id, ok := s.strs[v]; ok {
		return id
	}
	id := uint32(len(s.strs))
	s.strs[v] = id
	return id
}

// city folds a city name once per distinct name; the filter folds what
// was typed the same way.
func (s *state) city(stored string) uint32 {
	if id, ok := s.cities[stored]; ok {
		return id
	}
	id := s.intern("city:" + s.fold.fold(stored))
	s.cities[stored] = id
	return id
}

// row is one event as the catalog stores it for search.
type row struct {
	id                           int64
	starts, saleStarts, saleEnds int64
	updated                      int64
	listed, onSale, opening      bool
	city, category               string
	name, other                  []string // lexemes with weight A; the rest
}

// put adds or replaces an event.
func (s *state) put(r row, bulk bool) {
	slot, ok := s.slots[r.id]
	if ok {
		s.unlink(slot)
	} else {
		slot = int32(len(s.docs))
		s.docs = append(s.docs, doc{})
		s.slots[r.id] = slot
	}
	d := doc{id: r.id, starts: r.starts, saleStarts: r.saleStarts, saleEnds: r.saleEnds, updated: r.updated,
		listed: r.listed, onSale: r.onSale, opening: r.opening, city: s.city(r.city), category: s.intern("cat:" + r.category)}
	d.lex = make([]uint32, 0, len(r.name)+len(r.other))
	for _, l := range r.name {
		d.lex = append(d.lex, s.wordID(l, bulk)|nameFlag)
	}
	for _, l := range r.other {
		d.lex = append(d.lex, s.wordID(l, bulk))
	}
	s.docs[slot] = d
	for _, l := range d.lex {
		w := &s.words[l&^nameFlag]
		w.all = s.insert(w.all, slot)
		if l&nameFlag != 0 {
			w.name = s.insert(w.name, slot)
		}
	}
}

// unlink takes a doc out of its posting lists (before its key changes).
func (s *state) unlink(slot int32) {
	for _, l := range s.docs[slot].lex {
		w := &s.words[l&^nameFlag]
		w.all = s.remove(w.all, slot)
		if l&nameFlag != 0 {
			w.name = s.remove(w.name, slot)
		}
	}
}

func (s *state) position(list []int32, slot int32) int {
	return sort.Search(len(list), func(i int) bool { return !s.before(list[i], slot) })
}

func (s *state) insert(list []int32, slot int32) []int32 {
	if len(list) == 0 || s.before(list[len(list)-1], slot) {
		return append(list, slot) // a load, or an event later than all
	}
	i := s.position(list, slot)
	if i < len(list) && list[i] == slot {
		return list
	}
	list = append(list, 0)
	copy(list[i+1:], list[i:])
	list[i] = slot
	return list
}

func (s *state) remove(list []int32, slot int32) []int32 {
	i := s.position(list, slot)
	if i < len(list) && list[i] == slot {
		return append(list[:i], list[i+1:]...)
	}
	return list
}

// has tells whether doc d holds term t (in its name or category only,
// when inName).
func (s *state) has(d *doc, t term, inName bool) bool {
	for _, l := range d.lex {
		if inName && l&nameFlag == 0 {
			continue
		}
		text := s.words[l&^nameFlag].text
		if text == t.word || t.prefix && strings.HasPrefix(text, t.word) {
			return true
		}
	}
	return false
}

// lists returns the posting lists of t (several for a prefix).
func (s *state) lists(t term, inName bool) [][]int32 {
	var ids []uint32
	if t.prefix {
		ids = s.withPrefix(t.word)
	} else if id, ok := s.ids[t.word]; ok {
		ids = []uint32{id}
	}
	out := make([][]int32, 0, len(ids))
	for _, id := range ids {
		l := s.words[id].all
		if inName {
			l = s.words[id].name
		}
		if len(l) > 0 {
			out = append(out, l)
		}
	}
	return out
}

// merged walks several posting lists as one, in search order, each doc
// once.
type merged struct {
	s     *state
	lists [][]int32
	last  int32
	began bool
}

func (m *merged) Len() int           { return len(m.lists) }
func (m *merged) Less(i, j int) bool { return m.s.before(m.lists[i][0], m.lists[j][0]) }
func (m *merged) Swap(i, j int)      { m.lists[i], m.lists[j] = m.lists[j], m.lists[i] }
func (m *merged) Push(x any)         { m.lists = append(m.lists, x.([]int32)) }
func (m *merged) Pop() any {
	l := m.lists[len(m.lists)-1]
	m.lists = m.lists[:len(m.lists)-1]
	return l
}

func (s *state) walk(lists [][]int32) *merged {
	m := &merged{s: s, lists: lists}
	heap.Init(m)
	return m
}

// next returns the next doc, false at the end.
func (m *merged) next() (int32, bool) {
	for len(m.lists) > 0 {
		slot := m.lists[0][0]
		if len(m.lists[0]) == 1 {
			heap.Pop(m)
		} else {
			m.lists[0] = m.lists[0][1:]
			heap.Fix(m, 0)
		}
		if m.began && slot == m.last {
			continue
		}
		m.began, m.last = true, slot
		return slot, true
	}
	return 0, false
}
