package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/shared/config"
	"github.com/catraca/catraca/tools/localenv"
)

// TestEnvironmentGeneratesEverySecret: make dev's environment has every
// secret the configuration requires, generated into secrets.env (the PSP
// API key included, never the repository's old default) and kept across
// runs.
func TestEnvironmentGeneratesEverySecret(t *testing.T) {
	for name := range secretFormats {
		t.Setenv(name, "") // the caller's environment must not supply them
	}
	env := localenv.Env{Dir: t.TempDir(), PGPort: 1, RedisPort: 2}
	vars, err := environment(env, "127.0.0.1:8080")
	require.NoError(t, err)
	cfg, err := config.FromLookup[config.Config](func(k string) (string, bool) { v, ok := vars[k]; return v, ok })
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(cfg.PSPAPIKey, "sk_test_"), cfg.PSPAPIKey)
	require.NotEqual(t, "sk_test_catraca", cfg.PSPAPIKey)
	saved, err := os.ReadFile(filepath.Join(env.Dir, "secrets.env"))
	require.NoError(t, err)
	require.Contains(t, string(saved), "CATRACA_PSP_API_KEY="+cfg.PSPAPIKey+"\n")

	again, err := environment(env, "127.0.0.1:8080")
	require.NoError(t, err)
	require.Equal(t, vars["CATRACA_PSP_API_KEY"], again["CATRACA_PSP_API_KEY"], "kept across runs")
}
