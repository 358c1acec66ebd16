package config

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

// secretRef is a placeholder for a value kept in a secret store:
// {{secret:<id>}} for a plain secret, {{secret:<id>#<json key>}} for one
// field of a JSON secret. The CDK app writes these into Lambda environment
// variables so no secret value appears in a template or in the console.
var secretRef = regexp.MustCompile(`\{\{secret:([^#}]+)(?:#([^}]+))?\}\}`)

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
// secret). fetch is called once per secret id (one Secrets Manager call per
// secret at cold start).
func ResolveSecrets(ctx context.Context, environ []string, fetch func(ctx context.Context, id string) (string, error)) (map[string]string, error) {
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

// resolver replaces placeholders, reading each secret once.
type resolver struct {
	fetch func(ctx context.Context, id string) (string, error)
	cache map[string]string
}

func (res resolver) replace(ctx context.Context, value string) (string, error) {
	var firstErr error
	resolved := secretRef.ReplaceAllStringFunc(value, func(ref string) string {
		m := secretRef.FindStringSubmatch(ref)
		raw, ok := res.cache[m[1]]
		if !ok {
			var err error
			if raw, err = res.fetch(ctx, m[1]); err != nil {
				firstErr = fmt.Errorf("read secret %s: %w", m[1], err)
				return ""
			}
			res.cache[m[1]] = raw
		}
		if m[2] == "" {
			return raw
		}
		var fields map[string]any
		if err := json.Unmarshal([]byte(raw), &fields); err != nil {
			firstErr = fmt.Errorf("secret %s is not JSON", m[1])
			return ""
		}
		v, ok := fields[m[2]]
		if !ok {
			firstErr = fmt.Errorf("secret %s has no field %q", m[1], m[2])
			return ""
		}
		return fmt.Sprint(v)
	})
	return resolved, firstErr
}
