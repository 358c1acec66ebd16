package config

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

// secretRef is a placeholder for a value kept in a store: {{secret:<id>}}
// for a plain secret, {{secret:<id>#<json key>}} for one field of a JSON
// secret, {{ssm:<name>}} for a parameter (a value known only once another
// stack exists, such as the distribution's URL). The CDK app writes these
// into Lambda environment variables so no secret value appears in a
// template or in the console.
var secretRef = regexp.MustCompile(`\{\{(secret|ssm):([^#}]+)(?:#([^}]+))?\}\}`)

// HasSecretRefs tells whether any CATRACA_* variable refers to a secret.
func HasSecretRefs(environ []string) bool {
	for _, kv := range environ {
		if strings.HasPrefix(kv, "CATRACA_") && secretRef.MatchString(kv) {
			return true
		}
	}
	return false
}

// ResolveSecrets returns the CATRACA_* variables of environ whose values
// held secret placeholders, with the placeholders replaced. A secret's value
// may hold placeholders itself, resolved in turn (one level: the shard
// topology, which names each cluster's password secret, is one such
// secret). fetch is called once per store ("secret" or "ssm") and id: one
// call per secret or parameter at cold start.
func ResolveSecrets(ctx context.Context, environ []string, fetch Fetch) (map[string]string, error) {
	res := resolver{fetch: fetch, cache: map[string]string{}}
	out := map[string]string{}
	for _, kv := range environ {
		name, value, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, "CATRACA_") || !secretRef.MatchString(value) {
			continue
		}
		for depth := 0; depth < 2 && secretRef.MatchString(value); depth++ {
			var err error
			if value, err = res.replace(ctx, value); err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
		}
		if secretRef.MatchString(value) {
			return nil, fmt.Errorf("%s: secrets refer to secrets more than one level deep", name)
		}
		out[name] = value
	}
	return out, nil
}

// Fetch reads one value from a store: "secret" (Secrets Manager) or "ssm"
// (Parameter Store).
type Fetch func(ctx context.Context, store, id string) (string, error)

// resolver replaces placeholders, reading each value once.
type resolver struct {
	fetch Fetch
	cache map[string]string
}

func (res resolver) replace(ctx context.Context, value string) (string, error) {
	var firstErr error
	resolved := secretRef.ReplaceAllStringFunc(value, func(ref string) string {
		m := secretRef.FindStringSubmatch(ref)
		store, id, field := m[1], m[2], m[3]
		raw, ok := res.cache[store+":"+id]
		if !ok {
			var err error
			if raw, err = res.fetch(ctx, store, id); err != nil {
				firstErr = fmt.Errorf("read %s %s: %w", store, id, err)
				return ""
			}
			res.cache[store+":"+id] = raw
		}
		if field == "" {
			return raw
		}
		var fields map[string]any
		if err := json.Unmarshal([]byte(raw), &fields); err != nil {
			firstErr = fmt.Errorf("%s %s is not JSON", store, id)
			return ""
		}
		v, ok := fields[field]
		if !ok {
			firstErr = fmt.Errorf("%s %s has no field %q", store, id, field)
			return ""
		}
		return fmt.Sprint(v)
	})
	return resolved, firstErr
}
