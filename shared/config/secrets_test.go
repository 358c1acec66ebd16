package config

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestResolveSecrets(t *testing.T) {
	t.Parallel()
	calls := map[string]int{}
	store := map[string]string{
		"arn:db":  `{"username":"catraca","password":"s3cret","port":5432}`,
		"arn:key": "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVoxMjM0NTY3",
	}
	params := map[string]string{"/catraca/public-url": "https://d111.cloudfront.net"}
	fetch := func(_ context.Context, kind, id string) (string, error) {
		calls[kind+":"+id]++
		v, ok := store[id]
		if kind == "ssm" {
			v, ok = params[id]
		}
		if !ok {
			return "", errors.New("ResourceNotFoundException")
		}
		return v, nil
	}
	env := []string{
		"CATRACA_CATALOG_DSN=postgres://{{secret:arn:db#username}}:{{secret:arn:db#password}}@proxy:{{secret:arn:db#port}}/catalog",
		"CATRACA_SESSION_KEYS=k1:{{secret:arn:key}}",
		"CATRACA_REDIS_TLS=true",
		"CATRACA_PUBLIC_URL={{ssm:/catraca/public-url}}",
		"OTHER={{secret:arn:db#password}}",
	}
	require.True(t, HasSecretRefs(env))
	got, err := ResolveSecrets(context.Background(), env, fetch)
	require.NoError(t, err)
	require.Equal(t, map[string]string{
		"CATRACA_CATALOG_DSN":  "postgres://catraca:s3cret@proxy:5432/catalog",
		"CATRACA_SESSION_KEYS": "k1:" + store["arn:key"],
		"CATRACA_PUBLIC_URL":   "https://d111.cloudfront.net",
	}, got)
	require.Equal(t, map[string]int{"secret:arn:db": 1, "secret:arn:key": 1, "ssm:/catraca/public-url": 1}, calls, "one read per secret or parameter")

	_, err = ResolveSecrets(context.Background(), []string{"CATRACA_X={{secret:arn:missing}}"}, fetch)
	require.ErrorContains(t, err, "CATRACA_X")
	_, err = ResolveSecrets(context.Background(), []string{"CATRACA_X={{ssm:/catraca/missing}}"}, fetch)
	require.ErrorContains(t, err, "read ssm /catraca/missing")
	_, err = ResolveSecrets(context.Background(), []string{"CATRACA_X={{secret:arn:db#nope}}"}, fetch)
	require.ErrorContains(t, err, `no field "nope"`)
	require.False(t, HasSecretRefs([]string{"CATRACA_REDIS_TLS=true"}))
}

// TestResolveSecretsInSecrets: the shard topology is a secret whose fields
// refer to each cluster's password; both levels resolve, a third does not.
func TestResolveSecretsInSecrets(t *testing.T) {
	t.Parallel()
	store := map[string]string{
		"arn:topology": `{"shards":"1=postgres://u:{{secret:arn:db1#password}}@p1/s1,2=postgres://u:{{secret:arn:db2#password}}@p2/s2"}`,
		"arn:db1":      `{"password":"one"}`,
		"arn:db2":      `{"password":"two"}`,
		"arn:loop":     `{{secret:arn:loop2}}`,
		"arn:loop2":    `{{secret:arn:loop}}`,
	}
	fetch := func(_ context.Context, _, id string) (string, error) { return store[id], nil }
	got, err := ResolveSecrets(context.Background(), []string{"CATRACA_SHARD_DSNS={{secret:arn:topology#shards}}"}, fetch)
	require.NoError(t, err)
	require.Equal(t, "1=postgres://u:one@p1/s1,2=postgres://u:two@p2/s2", got["CATRACA_SHARD_DSNS"])
	_, err = ResolveSecrets(context.Background(), []string{"CATRACA_X={{secret:arn:loop}}"}, fetch)
	require.ErrorContains(t, err, "more than one level")
}
