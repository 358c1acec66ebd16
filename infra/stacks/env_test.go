package stacks

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/shared/config"
)

// functionOf names the function of a Lambda's logical id (title + hash).
func functionOf(logicalID string) (string, bool) {
	for _, name := range Functions {
		if rest, ok := strings.CutPrefix(logicalID, title(name)); ok && regexp.MustCompile(`^[0-9A-F]{8}$`).MatchString(rest) {
			return name, true
		}
	}
	return "", false
}

// reads tells whether function name's configuration reads variable v.
func reads(name, v string) bool {
	return slices.ContainsFunc(config.Vars(config.Functions[name]), func(x config.Var) bool { return x.Name == v })
}

// variables are the environment variables of each function in all.
func variables(t *testing.T, all map[string]template) map[string]map[string]any {
	out := map[string]map[string]any{}
	each(all, "AWS::Lambda::Function", func(_, id string, r resource) {
		if name, ok := functionOf(id); ok {
			out[name] = r.Properties["Environment"].(map[string]any)["Variables"].(map[string]any)
		}
	})
	require.Len(t, out, len(Functions))
	return out
}

// environmentsFit: deployed values replace references; 100 characters
// bounds the ARNs, hosts and URLs they resolve to. The shard DSNs are in
// the topology secret, so the size does not grow with the shards.
func environmentsFit(t *testing.T, all map[string]template) {
	const resolved = 100
	for name, vars := range variables(t, all) {
		size := 0
		for k, v := range vars {
			size += len(k) + envLen(v, resolved)
		}
		t.Logf("%s: about %d bytes of environment with %d shards", name, size, testShards)
		require.Less(t, size, 4096*3/4, "%s: well under 4 KB", name)
	}
	each(all, "AWS::SecretsManager::Secret", func(_, id string, r resource) {
		if strings.HasPrefix(id, "Topology") {
			size := envLen(r.Properties["SecretString"], resolved)
			t.Logf("topology secret: about %d bytes", size)
			require.Less(t, size, 65536/2, "well under Secrets Manager's 64 KB")
		}
	})
}

// functionsGetWhatTheyRead compares, for each function, the variables and
// secrets the template gives it with what its configuration reads
// (config.Vars of config.Functions: the code's own list): every variable
// set is one it reads, every one it requires is set, and its role reads
// exactly the secrets its variables refer to (through the topology secret,
// the clusters of the databases they name).
func functionsGetWhatTheyRead(t *testing.T, all map[string]template) {
	data := all["test-data"]
	topology := map[string][]string{} // field -> cluster secrets
	for id, r := range data.Resources {
		if r.Type == "AWS::SecretsManager::Secret" && strings.HasPrefix(id, "Topology") {
			for _, ref := range secretRefs(r.Properties["SecretString"]) {
				topology[ref.within] = append(topology[ref.within], ref.target)
			}
		}
	}
	// Only migrate's fields name secrets (the clusters' master ones): the
	// other functions log in by IAM (functionsLogInAsTheirRoles).
	require.Len(t, topology[TopologyOwnerShards], testShards)
	require.Len(t, topology[TopologyOwnerCatalog], 1)
	for _, field := range []string{TopologyCatalog, TopologyCatalogRead, TopologyShards, TopologyShardReads} {
		require.Empty(t, topology[field], "%s names no secret", field)
	}
	// identity names a secret alike in every stack: its data-stack logical
	// id when it is imported from there.
	identity := func(ref string) string {
		for id := range data.Resources {
			if strings.Contains(ref, "ExportsOutputRef"+id) {
				return id
			}
		}
		return ref
	}
	app := all["test-app"]
	for name, vars := range variables(t, all) {
		read := map[string]config.Var{}
		for _, v := range config.Vars(config.Functions[name]) {
			read[v.Name] = v
			if v.Required {
				require.Contains(t, vars, v.Name, "%s requires %s", name, v.Name)
			}
		}
		want := map[string]bool{}
		for k, v := range vars {
			require.Contains(t, read, k, "%s is given %s, which it does not read", name, k)
			for _, ref := range secretRefs(v) {
				want[identity(ref.target)] = true
				if strings.HasPrefix(identity(ref.target), "Topology") {
					require.Contains(t, []string{TopologyCatalog, TopologyCatalogRead, TopologyShards, TopologyShardReads,
						TopologyOwnerCatalog, TopologyOwnerShards}, ref.field, "%s: %s names a topology field", name, k)
					for _, nested := range topology[ref.field] {
						want[identity(nested)] = true
					}
				}
			}
		}
		got := map[string]bool{}
		for id, r := range app.Resources {
			if r.Type != "AWS::IAM::Policy" || !strings.HasPrefix(id, title(name)+"ServiceRole") {
				continue
			}
			for _, s := range r.Properties["PolicyDocument"].(map[string]any)["Statement"].([]any) {
				st := s.(map[string]any)
				if b, _ := json.Marshal(st["Action"]); strings.Contains(string(b), "secretsmanager:GetSecretValue") {
					refs(st["Resource"], func(_, target string) { got[identity(target)] = true })
				}
			}
		}
		require.Equal(t, sortedKeys(want), sortedKeys(got), "%s reads exactly the secrets its environment names", name)
	}
	vars := variables(t, all)
	require.NotContains(t, vars["sweep"], "CATRACA_PSP_API_KEY", "the sweeper cannot pay")
	require.NotContains(t, vars["sweep"], "CATRACA_SESSION_KEYS", "nor mint sessions")
	pspKey := func(name string) string {
		b, _ := json.Marshal(vars[name]["CATRACA_PSP_API_KEY"])
		return string(b)
	}
	require.Contains(t, pspKey("pspwebhook"), "PSPReadKey", "the webhook receiver reads payments with the restricted key")
	require.NotContains(t, pspKey("pspwebhook"), "PSPKey", "and never sees the secret key")
	for _, name := range []string{"api", "pspqueue", "fulfil", "reconcile"} {
		require.Contains(t, pspKey(name), "PSPKey", "%s moves money: the secret key", name)
	}
	require.NotContains(t, vars["api"], "CATRACA_PSP_WEBHOOK_SECRETS", "webhooks go to pspwebhook")
	for name, v := range vars {
		if _, ok := v["CATRACA_REDIS_ADDR"]; ok {
			require.Equal(t, "true", v["CATRACA_REDIS_CLUSTER"], "%s speaks cluster mode to ElastiCache Serverless", name)
		}
	}
	require.Equal(t, []string{"CATRACA_CATALOG_DSN", "CATRACA_DB_MAX_CONNS", "CATRACA_DB_PROXY", "CATRACA_SHARD_DSNS"},
		sortedKeys(vars["migrate"]))
}

// secretRef is one "{{secret:<target>#<field>}}" in a template value;
// within is the JSON field of the value it sits in, if any.
type secretRef struct{ target, field, within string }

// secretRefs lists the secret placeholders of a template string value
// (its Fn::Join: literal parts, then the reference after each "{{secret:").
func secretRefs(v any) []secretRef {
	parts := []any{v}
	if m, ok := v.(map[string]any); ok {
		if j, ok := m["Fn::Join"].([]any); ok {
			parts = j[1].([]any)
		}
	}
	var out []secretRef
	within, afterSecret := "", false
	for _, p := range parts {
		if s, ok := p.(string); ok {
			if m := regexp.MustCompile(`^#(\w+)\}\}`).FindStringSubmatch(s); m != nil && len(out) > 0 {
				out[len(out)-1].field = m[1]
			}
			if m := regexp.MustCompile(`"(\w+)":"[^"]*$`).FindStringSubmatch(s); m != nil {
				within = m[1]
			}
			afterSecret = strings.HasSuffix(s, "{{secret:")
			continue
		}
		if afterSecret {
			refs(p, func(_, target string) { out = append(out, secretRef{target: target, within: within}) })
		}
		afterSecret = false
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
