package web

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/catraca/catraca/shared/problem"
	"github.com/catraca/catraca/shared/reject"
)

// Itoa writes an id as it appears in URLs.
func Itoa(n int64) string { return strconv.FormatInt(n, 10) }

// Refused answers a domain's refusal in the domain's own words: the detail
// is its message as written, and the errors member lists each reason with
// the JSON pointer it concerns, for forms that show errors beside fields.
func Refused(err error, status int, code string) *problem.Error {
	var r *reject.Error
	if !errors.As(err, &r) {
		// A bare sentinel: the domain forgot its message; invent none.
		return problem.New(status, code, "This request cannot be accepted.").Wrap(err)
	}
	return problem.New(status, code, r.Detail()).With("errors", r.Reasons).Wrap(err)
}

// PathID parses a positive integer path value written canonically (no
// leading zeros or sign), so one resource has one URL, as at the edge.
func PathID(r *http.Request, name string) (int64, error) {
	id, err := strconv.ParseInt(r.PathValue(name), 10, 64)
	if err != nil || id <= 0 || strconv.FormatInt(id, 10) != r.PathValue(name) {
		return 0, problem.New(http.StatusNotFound, "not-found", "No such "+name+": "+strconv.Quote(r.PathValue(name))+".")
	}
	return id, nil
}

// QueryLimit reads parameter limit, between 1 and most (def when absent);
// unit names what is counted, for the message.
func QueryLimit(r *http.Request, def, most int, unit string) (int, error) {
	v := r.URL.Query().Get("limit")
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > most {
		return 0, problem.New(http.StatusBadRequest, "invalid-parameter",
			strings.TrimSpace("Parameter limit must be between 1 and "+strconv.Itoa(most)+" "+unit)+".")
	}
	return n, nil
}

// QueryTime parses an RFC 3339 (or YYYY-MM-DD) query parameter.
func QueryTime(r *http.Request, name string) (time.Time, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return time.Time{}, nil
	}
	for _, layout := range []string{time.RFC3339, time.DateOnly} {
		t, err := time.Parse(layout, v)
		if err != nil {
			continue
		}
		// The zero time means "no bound" to the filter: to=0001-01-01
		// would have listed every event instead of none.
		if t.Year() < 1970 {
			return time.Time{}, problem.New(http.StatusBadRequest, "invalid-parameter",
				"Parameter "+name+" must be a time from 1970 on; leave it out for no bound.")
		}
		return t, nil
	}
	return time.Time{}, problem.New(http.StatusBadRequest, "invalid-parameter",
		"Parameter "+name+" must be an RFC 3339 time or a YYYY-MM-DD date.")
}
