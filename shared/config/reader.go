package config

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// reader reads variables, collecting every problem and every name read.
type reader struct {
	lookup func(string) (string, bool)
	errs   []error
	vars   []Var
}

func (r *reader) err() error {
	if len(r.errs) == 0 {
		return nil
	}
	return fmt.Errorf("config: %w", errors.Join(r.errs...))
}

func (r *reader) get(name string, required bool) string {
	r.vars = append(r.vars, Var{Name: name, Required: required})
	v, _ := r.lookup(name)
	return v
}

func (r *reader) str(name, def string) string {
	if v := r.get(name, false); v != "" {
		return v
	}
	return def
}

func (r *reader) required(name string) string {
	v := r.get(name, true)
	if v == "" {
		r.errs = append(r.errs, fmt.Errorf("%s is required", name))
	}
	return v
}

func (r *reader) integer(name string, def int) int {
	v := r.get(name, false)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		r.errs = append(r.errs, fmt.Errorf("%s=%q: want a non-negative integer", name, v))
	}
	return n
}

func (r *reader) boolean(name string, def bool) bool {
	v := r.get(name, false)
	if v == "" {
		return def
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		r.errs = append(r.errs, fmt.Errorf("%s=%q: want true or false", name, v))
	}
	return b
}

func (r *reader) duration(name string, def time.Duration) time.Duration {
	v := r.get(name, false)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		r.errs = append(r.errs, fmt.Errorf("%s=%q: want a positive duration like 90s", name, v))
	}
	return d
}

// idMap parses "1=dsn,2=dsn".
func (r *reader) idMap(name string, required bool) map[int]string {
	out := map[int]string{}
	v := r.get(name, required)
	if v == "" {
		if required {
			r.errs = append(r.errs, fmt.Errorf("%s is required (e.g. 1=postgres://…,2=postgres://…)", name))
		}
		return out
	}
	for _, part := range strings.Split(v, ",") {
		idText, dsn, ok := strings.Cut(strings.TrimSpace(part), "=")
		id, err := strconv.Atoi(idText)
		if !ok || err != nil || id <= 0 || dsn == "" {
			r.errs = append(r.errs, fmt.Errorf("%s: entry %q is not <positive id>=<dsn>", name, part))
			continue
		}
		out[id] = dsn
	}
	return out
}

// keys parses "kid:base64secret,kid:base64secret"; the first one signs.
func (r *reader) keys(name string) []Key {
	v := r.get(name, true)
	if v == "" {
		r.errs = append(r.errs, fmt.Errorf("%s is required (kid:base64-secret[,kid:base64-secret])", name))
		return nil
	}
	var keys []Key
	for _, part := range strings.Split(v, ",") {
		kid, b64, ok := strings.Cut(strings.TrimSpace(part), ":")
		secret, err := base64.StdEncoding.DecodeString(b64)
		if !ok || kid == "" || err != nil {
			r.errs = append(r.errs, fmt.Errorf("%s: an entry is not kid:base64-secret", name))
			continue
		}
		if len(secret) < 32 {
			r.errs = append(r.errs, fmt.Errorf("%s: key %q is shorter than 32 bytes", name, kid))
			continue
		}
		keys = append(keys, Key{ID: kid, Secret: secret})
	}
	return keys
}
