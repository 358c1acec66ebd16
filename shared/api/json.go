package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/catraca/catraca/shared/problem"
)

// decode reads exactly one JSON object into dst, rejecting unknown fields,
// trailing data, a wrong content type and bodies over the size cap.
func decode(r *http.Request, dst any) error {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
			return problem.New(http.StatusUnsupportedMediaType, "unsupported-media-type",
				"Send the request body as application/json.")
		}
	}
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	err := dec.Decode(dst)
	if err == nil {
		if dec.Decode(&struct{}{}) != io.EOF {
			return problem.New(http.StatusBadRequest, "malformed-json", "The body must hold a single JSON object.")
		}
		return nil
	}
	var maxErr *http.MaxBytesError
	var syntaxErr *json.SyntaxError
	var typeErr *json.UnmarshalTypeError
	switch {
	case errors.As(err, &maxErr):
		return problem.New(http.StatusRequestEntityTooLarge, "body-too-large",
			fmt.Sprintf("The body is larger than %d bytes.", maxErr.Limit))
	case errors.Is(err, io.EOF):
		return problem.New(http.StatusBadRequest, "malformed-json", "The request body is empty; send a JSON object.")
	case errors.As(err, &syntaxErr), errors.Is(err, io.ErrUnexpectedEOF):
		return problem.New(http.StatusBadRequest, "malformed-json", "The body is not valid JSON.")
	case errors.As(err, &typeErr):
		return problem.New(http.StatusBadRequest, "invalid-field",
			fmt.Sprintf("Field %q must be of type %s.", typeErr.Field, typeErr.Type))
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return problem.New(http.StatusBadRequest, "unknown-field",
			"Unknown field "+strings.TrimPrefix(err.Error(), "json: unknown field ")+".")
	}
	return problem.New(http.StatusBadRequest, "malformed-json", "The body could not be read as JSON.").Wrap(err)
}

// writeJSON sends v with status. Caching headers are the caller's.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	if w.Header().Get("Cache-Control") == "" {
		w.Header().Set("Cache-Control", "no-store")
	}
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}
