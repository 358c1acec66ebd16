package config

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSecretsHaveNoDefault: without its variable, no secret falls back to
// a value from the repository; the PSP API key included.
func TestSecretsHaveNoDefault(t *testing.T) {
	t.Parallel()
	key := "k1:" + base64.StdEncoding.EncodeToString([]byte(strings.Repeat("x", 32)))
	env := map[string]string{
		"CATRACA_CATALOG_DSN": "postgres://catalog", "CATRACA_SHARD_DSNS": "1=postgres://shard",
		"CATRACA_SESSION_KEYS": key, "CATRACA_ADMISSION_KEYS": key, "CATRACA_TICKET_KEY": key,
		"CATRACA_PSP_WEBHOOK_SECRETS": key, "CATRACA_PSP_API_KEY": "sk_test_generated",
	}
	lookup := func(name string) (string, bool) { v, ok := env[name]; return v, ok }
	c, err := FromLookup(lookup)
	require.NoError(t, err)
	require.Equal(t, "sk_test_generated", c.PSPAPIKey)
	for _, name := range []string{"CATRACA_PSP_API_KEY", "CATRACA_PSP_WEBHOOK_SECRETS", "CATRACA_SESSION_KEYS",
		"CATRACA_ADMISSION_KEYS", "CATRACA_TICKET_KEY"} {
		saved := env[name]
		delete(env, name)
		_, err := FromLookup(lookup)
		require.ErrorContains(t, err, name+" is required")
		env[name] = saved
	}
}
