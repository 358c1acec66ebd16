package config

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

var testKey = "k1:" + base64.StdEncoding.EncodeToString([]byte(strings.Repeat("x", 32)))

// TestSecretsHaveNoDefault: without its variable, no secret falls back to
// a value from the repository; the PSP API key included.
func TestSecretsHaveNoDefault(t *testing.T) {
	t.Parallel()
	env := map[string]string{
		"CATRACA_CATALOG_DSN": "postgres://catalog", "CATRACA_SHARD_DSNS": "1=postgres://shard",
		"CATRACA_SESSION_KEYS": testKey, "CATRACA_ADMISSION_KEYS": testKey, "CATRACA_TICKET_KEY": testKey,
		"CATRACA_PSP_WEBHOOK_SECRETS": testKey, "CATRACA_PSP_API_KEY": "sk_test_generated",
	}
	lookup := func(name string) (string, bool) { v, ok := env[name]; return v, ok }
	c, err := FromLookup[Config](lookup)
	require.NoError(t, err)
	require.Equal(t, "sk_test_generated", c.PSPAPIKey)
	for _, name := range []string{"CATRACA_PSP_API_KEY", "CATRACA_PSP_WEBHOOK_SECRETS", "CATRACA_SESSION_KEYS",
		"CATRACA_ADMISSION_KEYS", "CATRACA_TICKET_KEY"} {
		saved := env[name]
		delete(env, name)
		_, err := FromLookup[Config](lookup)
		require.ErrorContains(t, err, name+" is required")
		env[name] = saved
	}
}

// TestSearchMaxEventsIsRead: the search index's bound comes from the
// environment, 0 (the index's default) when unset.
func TestSearchMaxEventsIsRead(t *testing.T) {
	t.Parallel()
	env := map[string]string{"CATRACA_SEARCH_MAX_EVENTS": "1000"}
	lookup := func(name string) (string, bool) { v, ok := env[name]; return v, ok }
	c, err := FromLookup[Readers](lookup)
	require.NoError(t, err)
	require.Equal(t, 1000, c.SearchMaxEvents)
	delete(env, "CATRACA_SEARCH_MAX_EVENTS")
	c, err = FromLookup[Readers](lookup)
	require.NoError(t, err)
	require.Zero(t, c.SearchMaxEvents)
}

// TestEachFunctionNeedsOnlyItsOwn: a function starts with its required
// variables alone, and the secrets it has no use for are not among them
// (the sweeper cannot read the PSP key or sign sessions).
func TestEachFunctionNeedsOnlyItsOwn(t *testing.T) {
	t.Parallel()
	values := map[string]string{"CATRACA_CATALOG_DSN": "postgres://catalog", "CATRACA_SHARD_DSNS": "1=postgres://shard",
		"CATRACA_PSP_API_KEY": "sk_test"}
	required := map[string][]string{}
	for name, c := range Functions {
		env := map[string]string{}
		for _, v := range Vars(c) {
			if v.Required {
				required[name] = append(required[name], v.Name)
				env[v.Name] = values[v.Name]
				if env[v.Name] == "" {
					env[v.Name] = testKey
				}
			}
		}
		_, err := fromMap(c, env)
		require.NoError(t, err, name)
		for missing := range env {
			without := map[string]string{}
			for k, v := range env {
				if k != missing {
					without[k] = v
				}
			}
			_, err := fromMap(c, without)
			require.ErrorContains(t, err, missing, "%s requires %s", name, missing)
		}
	}
	require.Equal(t, []string{"CATRACA_CATALOG_DSN", "CATRACA_SHARD_DSNS"}, required["sweep"])
	require.Equal(t, []string{"CATRACA_CATALOG_DSN", "CATRACA_SHARD_DSNS"}, required["migrate"])
	require.Contains(t, required["pspwebhook"], "CATRACA_PSP_API_KEY", "pspwebhook confirms each event with the PSP (a read-only key in AWS)")
	require.NotContains(t, required["pspwebhook"], "CATRACA_SESSION_KEYS")
	require.NotContains(t, required["api"], "CATRACA_PSP_WEBHOOK_SECRETS")
	require.Contains(t, required["admit"], "CATRACA_SESSION_KEYS", "admit publishes the edge's keys")
}

// fromMap loads the configuration of c's type from env.
func fromMap(c any, env map[string]string) (any, error) {
	lookup := func(name string) (string, bool) { v, ok := env[name]; return v, ok }
	switch c.(type) {
	case API:
		return FromLookup[API](lookup)
	case Admit:
		return FromLookup[Admit](lookup)
	case Sweep:
		return FromLookup[Sweep](lookup)
	case PSPWebhook:
		return FromLookup[PSPWebhook](lookup)
	case PSPQueue:
		return FromLookup[PSPQueue](lookup)
	case Fulfil:
		return FromLookup[Fulfil](lookup)
	case Reconcile:
		return FromLookup[Reconcile](lookup)
	case Migrate:
		return FromLookup[Migrate](lookup)
	}
	panic("unknown configuration")
}

// TestReadmeListsEveryVariable: the README's configuration section names
// exactly the variables Config reads, and says which are required.
func TestReadmeListsEveryVariable(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	require.NoError(t, err)
	section := string(b)[strings.Index(string(b), "## Configuration"):]
	section = section[:strings.Index(section[3:], "\n## ")+3]
	required, _, _ := strings.Cut(section, "Optional")
	var want, wantRequired []string
	for _, v := range Vars(Config{}) {
		want = append(want, v.Name)
		if v.Required {
			wantRequired = append(wantRequired, v.Name)
		}
	}
	names := func(s string) []string {
		found := regexp.MustCompile(`CATRACA_[A-Z0-9_]+`).FindAllString(s, -1)
		slices.Sort(found)
		return slices.Compact(found)
	}
	slices.Sort(want)
	slices.Sort(wantRequired)
	require.Equal(t, want, names(section), "README.md ## Configuration")
	require.Equal(t, wantRequired, names(required), "README.md: the required ones, before \"Optional\"")
}
