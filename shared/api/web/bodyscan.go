package web

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/catraca/catraca/shared/problem"
	"github.com/catraca/catraca/shared/reject"
)

// checkBody walks a body encoding/json has accepted as one JSON value of
// dst's type and refuses what the decoder lets through silently: a key
// sent twice in one object (the last would win), text that is not UTF-8
// or has a lone UTF-16 surrogate (replaced by U+FFFD), a NUL (which
// PostgreSQL text cannot store), and a key that names a field of dst only
// when case is ignored (the decoder matches it; the documentation does
// not). One pass over the bytes, allocating only to report a refusal. It
// returns the top-level members when collect is set.
func checkBody(b []byte, dst reflect.Type, collect bool) (Members, error) {
	s := bodyScan{b: b, collect: collect}
	if e := s.value(dst, true); e != nil {
		return nil, e.problem()
	}
	return s.top, nil
}

// Members are a body's top-level object members as sent: the checks of
// memberChecker need to tell a member left out from one sent null.
type Members []member

type member struct {
	name []byte // as sent, escapes undone
	null bool
}

// Has tells whether the member name was sent.
func (m Members) Has(name string) bool {
	return slices.ContainsFunc(m, func(x member) bool { return string(x.name) == name })
}

// Null returns the first member sent as null.
func (m Members) Null() (name string, ok bool) {
	for _, x := range m {
		if x.null {
			return string(x.name), true
		}
	}
	return "", false
}

// bodyScan reads a JSON document known to be well formed.
type bodyScan struct {
	b       []byte
	i       int
	collect bool
	top     Members
}

// bodyFault is what checkBody refuses, with where: path is built (only
// for a refusal) while the walk unwinds, outermost first.
type bodyFault struct {
	kind string // duplicate, utf8, surrogate, nul, inexact
	key  string // the key, for duplicate and inexact
	name bool   // in a key of the object at path, not its value
	path []any  // object keys and array indexes
}

func (e *bodyFault) at(step any) *bodyFault {
	e.path = append([]any{step}, e.path...)
	return e
}

func (e *bodyFault) problem() error {
	pointer := reject.Pointer(e.path...)
	var p *problem.Error
	switch e.kind {
	case "duplicate":
		p = problem.New(http.StatusBadRequest, "duplicate-field",
			fmt.Sprintf("Field %q is sent twice in one object: send each field once.", fieldName(e.path)))
	case "inexact":
		return problem.New(http.StatusBadRequest, "unknown-field",
			fmt.Sprintf("Unknown field %q: field names are case-sensitive.", e.key))
	case "utf8":
		p = problem.New(http.StatusBadRequest, "invalid-text", "The body is not valid UTF-8: "+e.where()+
			" has bytes that are not UTF-8 text. Send the body encoded as UTF-8.")
	case "surrogate":
		p = problem.New(http.StatusBadRequest, "invalid-text", "The body is not valid Unicode text: "+e.where()+
			" has a \\u escape of half a UTF-16 surrogate pair, which is no character.")
	default:
		return problem.New(http.StatusBadRequest, "invalid-text", "Text fields must not contain NUL (\\u0000) characters.")
	}
	return p.With("errors", []reject.Reason{{Detail: p.Detail, Pointer: pointer}})
}

// fieldName is a path as the decoder's messages write it: keys joined by
// dots, array indexes left out.
func fieldName(path []any) string {
	var keys []string
	for _, p := range path {
		if k, ok := p.(string); ok {
			keys = append(keys, k)
		}
	}
	return strings.Join(keys, ".")
}

// where names the text at fault for a message.
func (e *bodyFault) where() string {
	field := fieldName(e.path)
	switch {
	case e.name && field != "":
		return "a field name in field " + strconv.Quote(field)
	case e.name:
		return "a field name"
	case field != "":
		return "field " + strconv.Quote(field)
	}
	return "the text"
}

func (s *bodyScan) space() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// value reads one value that decodes into t (nil: any, unchecked).
func (s *bodyScan) value(t reflect.Type, top bool) *bodyFault {
	s.space()
	switch s.b[s.i] {
	case '{':
		return s.object(t, top)
	case '[':
		return s.array(t)
	case '"':
		_, _, e := s.text()
		return e
	}
	for s.i < len(s.b) { // a number, true, false or null
		switch s.b[s.i] {
		case ',', ']', '}', ' ', '\t', '\n', '\r':
			return nil
		}
		s.i++
	}
	return nil
}

// object reads an object; t's fields must be named exactly.
func (s *bodyScan) object(t reflect.Type, top bool) *bodyFault {
	info := shapeFor(t)
	var small [16][]byte
	keys := small[:0]
	var many map[string]bool
	s.i++ // {
	for {
		s.space()
		if s.b[s.i] == '}' {
			s.i++
			return nil
		}
		if s.b[s.i] == ',' {
			s.i++
			s.space()
		}
		raw, escaped, e := s.text()
		if e != nil {
			e.name = true
			return e
		}
		key := raw
		if escaped {
			var k string
			json.Unmarshal(s.b[s.i-len(raw)-2:s.i], &k)
			key = []byte(k)
		}
		if many == nil && len(keys) == len(small) {
			many = make(map[string]bool, 2*len(keys))
			for _, k := range keys {
				many[string(k)] = true
			}
		}
		if many != nil {
			if many[string(key)] {
				return (&bodyFault{kind: "duplicate", key: string(key)}).at(string(key))
			}
			many[string(key)] = true
		} else {
			if slices.ContainsFunc(keys, func(k []byte) bool { return string(k) == string(key) }) {
				return (&bodyFault{kind: "duplicate", key: string(key)}).at(string(key))
			}
			keys = append(keys, key)
		}
		var ft reflect.Type
		if info != nil {
			switch info.kind {
			case reflect.Struct:
				var ok bool
				if ft, ok = info.fields[string(key)]; !ok {
					return &bodyFault{kind: "inexact", key: string(key)}
				}
			case reflect.Map:
				ft = info.elem
			}
		}
		s.space()
		s.i++ // :
		s.space()
		if top && s.collect {
			s.top = append(s.top, member{name: key, null: s.b[s.i] == 'n'})
		}
		if e := s.value(ft, false); e != nil {
			return e.at(string(key))
		}
	}
}

// array reads an array of t's elements.
func (s *bodyScan) array(t reflect.Type) *bodyFault {
	var elem reflect.Type
	if info := shapeFor(t); info != nil && (info.kind == reflect.Slice || info.kind == reflect.Array) {
		elem = info.elem
	}
	s.i++ // [
	for n := 0; ; n++ {
		s.space()
		if s.b[s.i] == ']' {
			s.i++
			return nil
		}
		if s.b[s.i] == ',' {
			s.i++
		}
		if e := s.value(elem, false); e != nil {
			return e.at(n)
		}
	}
}

// text reads a string: its bytes between the quotes, and whether they
// hold escapes.
func (s *bodyScan) text() (raw []byte, escaped bool, e *bodyFault) {
	start := s.i + 1
	for i := start; ; {
		c := s.b[i]
		switch {
		case c == '"':
			s.i = i + 1
			return s.b[start:i], escaped, nil
		case c == '\\':
			escaped = true
			if s.b[i+1] != 'u' {
				i += 2
				continue
			}
			r := hex4(s.b[i+2 : i+6])
			i += 6
			switch {
			case r == 0:
				return nil, false, &bodyFault{kind: "nul"}
			case utf16.IsSurrogate(r):
				if r >= 0xdc00 || i+6 > len(s.b) || s.b[i] != '\\' || s.b[i+1] != 'u' {
					return nil, false, &bodyFault{kind: "surrogate"}
				}
				if low := hex4(s.b[i+2 : i+6]); low < 0xdc00 || low > 0xdfff {
					return nil, false, &bodyFault{kind: "surrogate"}
				}
				i += 6
			}
		case c < utf8.RuneSelf:
			i++
		default:
			r, size := utf8.DecodeRune(s.b[i:])
			if r == utf8.RuneError && size == 1 {
				return nil, false, &bodyFault{kind: "utf8"}
			}
			i += size
		}
	}
}

// hex4 reads the four hex digits of a \u escape.
func hex4(h []byte) rune {
	var r rune
	for _, c := range h {
		switch {
		case c <= '9':
			c -= '0'
		case c >= 'a':
			c -= 'a' - 10
		default:
			c -= 'A' - 10
		}
		r = r<<4 | rune(c)
	}
	return r
}

// shape is what checkBody needs of a Go type: how JSON decodes into it.
type shape struct {
	kind   reflect.Kind // Struct, Map, Slice or Array; others are not walked
	fields map[string]reflect.Type
	elem   reflect.Type
}

var shapes sync.Map // reflect.Type → *shape (nil: not walked)

// shapeFor is t's shape, nil for a type that decodes itself or holds any
// JSON (whose keys checkBody cannot check against fields).
func shapeFor(t reflect.Type) *shape {
	if t == nil {
		return nil
	}
	if v, ok := shapes.Load(t); ok {
		return v.(*shape)
	}
	var sh *shape
	u := t
	for u.Kind() == reflect.Pointer {
		u = u.Elem()
	}
	if !reflect.PointerTo(u).Implements(reflect.TypeFor[json.Unmarshaler]()) {
		switch u.Kind() {
		case reflect.Struct:
			sh = &shape{kind: reflect.Struct, fields: jsonFields(u, map[string]reflect.Type{})}
		case reflect.Map, reflect.Slice, reflect.Array:
			sh = &shape{kind: u.Kind(), elem: u.Elem()}
		}
	}
	shapes.Store(t, sh)
	return sh
}
