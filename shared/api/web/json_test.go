package web

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/shared/problem"
	"github.com/catraca/catraca/shared/reject"
)

// checkBody finds a repeated key however many keys its object has and
// wherever it is; the same key in different objects is no repeat.
func TestCheckBodyFindsRepeatedKeys(t *testing.T) {
	var many strings.Builder
	for i := range 40 {
		fmt.Fprintf(&many, `"k%d":%d,`, i, i)
	}
	for body, want := range map[string]string{
		`{` + many.String() + `"k7":1}`:                     "/k7",
		`{` + many.String() + `"k\u0037":1}`:                "/k7",
		`[{"a":1},{"a":1,"b":[{"c":1,"c":2}]}]`:             "/1/b/0/c",
		`{"a":{"a":{"a":1}},"b":{"a":{"a":1,"b":2,"a":3}}}`: "/b/a/a",
		`{"a~/b":1,"a~/b":2}`:                               "/a~0~1b",
		`{"a":1,"b":{"a":2},"c":[{"a":3},{"a":4}]}`:         "",
		`{"":1,"\u0000x":2}`:                                "nul",
	} {
		_, err := checkBody([]byte(body), reflect.TypeFor[any](), false)
		if want == "" {
			require.NoError(t, err, body)
			continue
		}
		p := problem.From(err)
		if want == "nul" {
			require.Equal(t, "invalid-text", p.Code, body)
			continue
		}
		require.Equal(t, "duplicate-field", p.Code, body)
		require.Equal(t, want, p.Extra["errors"].([]reject.Reason)[0].Pointer, body)
	}
}

// checkBody refuses text encoding/json would replace with U+FFFD, in keys
// and values, and lets every character through, escaped or not.
func TestCheckBodyFindsTextThatIsNotUTF8(t *testing.T) {
	for body, want := range map[string]string{
		"{\"a\":\"x\xffy\"}":             "/a",
		"{\"a\":[\"ok\",\"\xc3\"]}":      "/a/1",
		"{\"k\xe3\":1}":                  "",
		`{"a":"\ud800"}`:                 "/a",
		`{"a":"\udc00\ud800"}`:           "/a",
		`{"a":"\ud800\u0041"}`:           "/a",
		`{"a":"\ud800\\udc00"}`:          "/a",
		`{"b":{"a":"x\uDBFF"}}`:          "/b/a",
		`{"a":"\ud83c\udfab ok \u00e3"}`: "ok",
		`{"a":"João 🎫 \"\\\/"}`:          "ok",
	} {
		_, err := checkBody([]byte(body), reflect.TypeFor[any](), false)
		if want == "ok" {
			require.NoError(t, err, body)
			continue
		}
		p := problem.From(err)
		require.Equal(t, "invalid-text", p.Code, body)
		require.Equal(t, want, p.Extra["errors"].([]reject.Reason)[0].Pointer, body)
	}
}

func TestTextFaultsNameWhere(t *testing.T) {
	for body, want := range map[string]string{
		"{\"k\xe3\":1}":         `The body is not valid UTF-8: a field name has bytes that are not UTF-8 text. Send the body encoded as UTF-8.`,
		"{\"b\":{\"k\xe3\":1}}": `The body is not valid UTF-8: a field name in field "b" has bytes that are not UTF-8 text. Send the body encoded as UTF-8.`,
		"[\"\xe3\"]":            `The body is not valid UTF-8: the text has bytes that are not UTF-8 text. Send the body encoded as UTF-8.`,
	} {
		_, err := checkBody([]byte(body), reflect.TypeFor[any](), false)
		require.Equal(t, want, problem.From(err).Detail, body)
	}
}
