package stacks

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/shared/config"
)

// functionsLogInAsTheirRoles: no function but migrate may read a
// cluster's master secret (the IAM policies of their roles name none),
// every other function may rds-db:connect through every proxy as its own
// database role and as no other, and every proxy authenticates by IAM end
// to end, with no secret of its own.
func functionsLogInAsTheirRoles(t *testing.T, all map[string]template) {
	data, app := all["test-data"], all["test-app"]
	// The clusters' secrets by data-stack logical id: each secret and its
	// attachment to the cluster (cluster.Secret(), what grants name).
	masters := map[string]bool{}
	for id, r := range data.Resources {
		if r.Type == "AWS::SecretsManager::SecretTargetAttachment" {
			masters[id] = true
			refs(r.Properties["SecretId"], func(_, target string) { masters[target] = true })
		}
	}
	require.Len(t, masters, 2*(1+testShards), "a master secret per cluster")
	master := func(ref string) bool {
		for id := range masters {
			if ref == id || strings.Contains(ref, "ExportsOutputRef"+id) {
				return true
			}
		}
		return false
	}

	for _, name := range Functions {
		readsMaster, connects := 0, map[string]int{} // database user -> proxies
		for id, r := range app.Resources {
			if r.Type != "AWS::IAM::Policy" || !strings.HasPrefix(id, title(name)+"ServiceRole") {
				continue
			}
			for _, s := range r.Properties["PolicyDocument"].(map[string]any)["Statement"].([]any) {
				st := s.(map[string]any)
				actions, _ := json.Marshal(st["Action"])
				if strings.Contains(string(actions), "secretsmanager:GetSecretValue") {
					refs(st["Resource"], func(_, target string) {
						if master(target) {
							readsMaster++
						}
					})
				}
				if strings.Contains(string(actions), "rds-db:connect") {
					resources, ok := st["Resource"].([]any)
					if !ok {
						resources = []any{st["Resource"]}
					}
					for _, res := range resources {
						b, _ := json.Marshal(res)
						user := string(b)[strings.LastIndex(string(b), "/")+1:]
						connects[strings.Trim(user, `"]}`)]++
					}
				}
			}
		}
		if name == config.Owner {
			require.Equal(t, 1+testShards, readsMaster, "migrate reads every cluster's master secret")
			require.Empty(t, connects, "migrate logs in as the owner, not through the proxies")
			continue
		}
		require.Zero(t, readsMaster, "%s reads no master secret", name)
		require.Equal(t, map[string]int{config.DBRole(name): 1 + testShards}, connects,
			"%s logs in through every proxy as %s and no one else", name, config.DBRole(name))
	}

	n := each(all, "AWS::RDS::DBProxy", func(_, id string, r resource) {
		require.Equal(t, "IAM_AUTH", r.Properties["DefaultAuthScheme"], "%s: end-to-end IAM authentication", id)
		require.Nil(t, r.Properties["Auth"], "%s holds no secret", id)
	})
	require.Equal(t, 1+testShards, n)
}
