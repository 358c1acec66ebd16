package web

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/catraca/catraca/shared/problem"
)

// DecodeOptional is Decode for a body a route lets the client leave out:
// an empty body is no body (sent false), whatever its headers say, so a
// client that always sends Content-Type is not refused for sending nothing.
func DecodeOptional(r *http.Request, dst any) (sent bool, err error) {
	if r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 {
		return false, nil
	}
	br := bufio.NewReader(r.Body)
	if _, err := br.Peek(1); errors.Is(err, io.EOF) {
		return false, nil
	}
	r.Body = struct {
		io.Reader
		io.Closer
	}{br, r.Body}
	return true, Decode(r, dst)
}

// Decode reads exactly one JSON object into dst, rejecting unknown fields,
// trailing data, what checkBody refuses (a key sent twice, text that is not
// UTF-8 or has a NUL), a missing or wrong content type
// (a cross-site form cannot send application/json without a preflight) and
// bodies over the size cap.
func Decode(r *http.Request, dst any) error {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/json" {
		return problem.New(http.StatusUnsupportedMediaType, "unsupported-media-type",
			"Send the request body as JSON with the header Content-Type: application/json.")
	}
	body, err := io.ReadAll(r.Body)
	if err == nil {
		err = unmarshal(body, dst)
	}
	if (err == nil && string(bytes.TrimSpace(body)) == "null") || (err != nil && isTypeError(err, "")) {
		// null would Decode as an empty object, and Go's message would name a Go type.
		return problem.New(http.StatusBadRequest, "malformed-json", "The body must be a JSON "+shapeOf(dst)+".")
	}
	if err == nil {
		c, ok := dst.(memberChecker)
		sent, err := checkBody(body, reflect.TypeOf(dst), ok)
		if err == nil && ok {
			err = c.CheckMembers(sent)
		}
		return err
	}
	var p *problem.Error
	var maxErr *http.MaxBytesError
	var syntaxErr *json.SyntaxError
	var typeErr *json.UnmarshalTypeError
	var timeErr *time.ParseError
	switch {
	case errors.As(err, &p):
		return p
	case errors.As(err, &maxErr):
		return problem.New(http.StatusRequestEntityTooLarge, "body-too-large",
			fmt.Sprintf("The body is larger than %d bytes.", maxErr.Limit))
	case errors.Is(err, os.ErrDeadlineExceeded):
		return problem.New(http.StatusBadRequest, "body-timeout",
			"The request body arrived too slowly and was cut off: send it again, all at once.")
	case errors.Is(err, io.EOF):
		return problem.New(http.StatusBadRequest, "malformed-json", "The request body is empty; send a JSON object.")
	case errors.As(err, &syntaxErr), errors.Is(err, io.ErrUnexpectedEOF):
		return problem.New(http.StatusBadRequest, "malformed-json", "The body is not valid JSON.")
	case errors.As(err, &typeErr):
		return problem.New(http.StatusBadRequest, "invalid-field",
			fmt.Sprintf("Field %q must be %s.", jsonPath(typeErr.Field), jsonKind(typeErr.Type)))
	case errors.As(err, &timeErr):
		return problem.New(http.StatusBadRequest, "invalid-field",
			strconv.Quote(timeErr.Value)+" is not a date-time: write it as RFC 3339, like 2031-01-02T20:00:00Z.")
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return problem.New(http.StatusBadRequest, "unknown-field",
			"Unknown field "+strings.TrimPrefix(err.Error(), "json: unknown field ")+".")
	}
	return problem.New(http.StatusBadRequest, "malformed-json", "The body could not be read as JSON.").Wrap(err)
}

// jsonFields adds t's JSON field names and types to fields; an embedded
// struct's fields count unless a shallower field has the name.
func jsonFields(t reflect.Type, fields map[string]reflect.Type) map[string]reflect.Type {
	var embedded []reflect.Type
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case name == "-":
		case f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct:
			embedded = append(embedded, f.Type)
		case f.IsExported():
			if name == "" {
				name = f.Name
			}
			fields[name] = f.Type
		}
	}
	for _, e := range embedded {
		for k, v := range jsonFields(e, map[string]reflect.Type{}) {
			if _, ok := fields[k]; !ok {
				fields[k] = v
			}
		}
	}
	return fields
}

// memberChecker is a body that checks its top-level Members as sent, which
// a Go struct cannot tell apart: left out, null or zero.
type memberChecker interface {
	CheckMembers(sent Members) error
}

// shapeOf names the JSON value dst takes: an object or an array.
func shapeOf(dst any) string {
	if t := reflect.TypeOf(dst); t.Kind() == reflect.Pointer && t.Elem().Kind() == reflect.Slice {
		return "array"
	}
	return "object"
}

// isTypeError tells whether err is a JSON value of the wrong type at field.
func isTypeError(err error, field string) bool {
	var typeErr *json.UnmarshalTypeError
	return errors.As(err, &typeErr) && typeErr.Field == field
}

// jsonPath is a decoding error's field path as the client wrote it: Go
// puts the names of embedded structs in it (our JSON names are lower case).
func jsonPath(field string) string {
	parts := strings.Split(field, ".")
	return strings.Join(slices.DeleteFunc(parts, func(p string) bool { return p != "" && unicode.IsUpper(rune(p[0])) }), ".")
}

// jsonKind names what a Go type takes in JSON, for a person.
func jsonKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Bool:
		return "true or false"
	case reflect.String:
		return "a string"
	case reflect.Slice, reflect.Array:
		return "an array"
	}
	return "an object"
}

// unmarshal decodes one JSON value, strictly, from b.
func unmarshal(b []byte, dst any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return err
	}
	if dec.Decode(&struct{}{}) != io.EOF {
		return errTrailing
	}
	return nil
}

var errTrailing = problem.New(http.StatusBadRequest, "malformed-json", "The body must hold a single JSON object.")

// ValidText tells whether a request string can be stored and searched:
// UTF-8 with no NUL.
func ValidText(s string) bool { return utf8.ValidString(s) && !strings.ContainsRune(s, 0) }

// ValidQuery reads the query string strictly, once: handlers read it with
// URL.Query(), which drops a pair it cannot Decode (?limit=%zz read as the
// default page, ?q=% searched for everything) and reads a parameter sent
// twice first-wins (?city=Rio&city=Recife listed Rio's events). Each is a
// 400 naming the parameter.
func ValidQuery(r *http.Request) error {
	seen := map[string]bool{}
	for pair := range strings.SplitSeq(r.URL.RawQuery, "&") {
		if pair == "" {
			continue
		}
		rawKey, rawValue, _ := strings.Cut(pair, "=")
		k, err := url.QueryUnescape(rawKey)
		if err != nil || strings.Contains(rawKey, ";") {
			return BadParameter(strconv.Quote(rawKey) + " is not a well-formed parameter name: percent-encode %, & and ; in names and values (% as %25).")
		}
		v, err := url.QueryUnescape(rawValue)
		switch {
		case err != nil || strings.Contains(rawValue, ";"):
			return BadParameter("Query parameter " + strconv.Quote(k) + " has a malformed value (" + strconv.Quote(rawValue) +
				"): percent-encode %, & and ; inside values (% as %25).")
		case !ValidText(k) || !ValidText(v):
			return BadParameter("Query parameter " + strconv.Quote(k) + " must be UTF-8 text without NUL characters.")
		case seen[k]:
			return BadParameter("Query parameter " + strconv.Quote(k) + " is sent twice: send each parameter once.")
		}
		seen[k] = true
	}
	return nil
}

func BadParameter(detail string) error {
	return problem.New(http.StatusBadRequest, "invalid-parameter", detail)
}

// WriteJSON sends v with status. Caching headers are the caller's.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	var b bytes.Buffer
	json.NewEncoder(&b).Encode(v)
	WriteJSONBytes(w, status, b.Bytes())
}

// WriteJSONBytes sends an encoded JSON body with status, no-store unless
// the caller set its caching headers.
func WriteJSONBytes(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	// h.Set of each, the two values in one allocation.
	if h.Get("Cache-Control") == "" {
		v := []string{"application/json", "no-store"}
		h["Content-Type"], h["Cache-Control"] = v[:1:1], v[1:]
	} else {
		h["Content-Type"] = []string{"application/json"}
	}
	w.WriteHeader(status)
	w.Write(body)
}

// AppendJSONString appends s as encoding/json writes a string: text that
// needs no escape as it is, anything else through encoding/json.
func AppendJSONString(b []byte, s string) []byte {
	for i := range len(s) {
		if c := s[i]; c < 0x20 || c >= 0x80 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			// A copy: s itself does not escape, nor what holds it (a
			// join's answer, on the stack).
			q, _ := json.Marshal(strings.Clone(s))
			return append(b, q...)
		}
	}
	return append(append(append(b, '"'), s...), '"')
}

// AppendJSONTime appends field and t as encoding/json writes a *time.Time,
// nothing when t is nil (omitempty).
func AppendJSONTime(b []byte, field string, t *time.Time) []byte {
	if t == nil {
		return b
	}
	b = append(append(b, field...), '"')
	return append(t.AppendFormat(b, time.RFC3339Nano), '"')
}
