// Package reject carries the reasons a request was refused from the domain
// to the client unchanged. The domain writes each reason as a sentence for
// the person who sent the request, with where in the request it applies
// when it knows; the API copies them into the problem JSON, so no client
// message is ever cut out of err.Error().
package reject

import (
	"fmt"
	"strings"
)

// Reason is one thing wrong with a request.
type Reason struct {
	// Detail is a sentence for the client.
	Detail string `json:"detail"`
	// Pointer is an RFC 6901 JSON pointer to the value of the request body
	// the reason concerns; empty when it concerns the whole request.
	Pointer string `json:"pointer,omitempty"`
}

// Error is a request the domain refuses. errors.Is matches its Kind (the
// domain's sentinel), so callers still tell refusals apart.
type Error struct {
	Kind    error
	Reasons []Reason
	// Summary, when set, is the message instead of every reason's detail
	// (a refusal with many reasons names the first and counts the rest).
	Summary string
}

// New returns a refusal of kind for one reason; pointer may be empty.
func New(kind error, pointer, detail string) *Error {
	return &Error{Kind: kind, Reasons: []Reason{{Detail: detail, Pointer: pointer}}}
}

func (e *Error) Error() string { return e.Kind.Error() + ": " + e.Detail() }

func (e *Error) Unwrap() error { return e.Kind }

// Detail returns the summary, or every reason's detail as one message.
func (e *Error) Detail() string {
	if e.Summary != "" {
		return e.Summary
	}
	details := make([]string, len(e.Reasons))
	for i, r := range e.Reasons {
		details[i] = r.Detail
	}
	return strings.Join(details, " ")
}

// Pointer builds a JSON pointer from object keys (strings) and array
// indexes (ints), escaping keys as RFC 6901 says.
func Pointer(path ...any) string {
	var b strings.Builder
	for _, p := range path {
		b.WriteByte('/')
		if s, ok := p.(string); ok {
			b.WriteString(strings.NewReplacer("~", "~0", "/", "~1").Replace(s))
		} else {
			b.WriteString(fmt.Sprint(p))
		}
	}
	return b.String()
}
