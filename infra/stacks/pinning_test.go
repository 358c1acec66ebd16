package stacks

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// proxiesAlarmOnPinnedSessions checks that every database's RDS Proxy has
// an alarm on DatabaseConnectionsCurrentlySessionPinned that pages: any
// connection pinned for PinnedMinutes minutes in a row (the migrate
// function's own pin lasts seconds).
func proxiesAlarmOnPinnedSessions(t *testing.T, all map[string]template) {
	proxies := map[string]bool{}
	each(all, "AWS::RDS::DBProxy", func(_, id string, _ resource) { proxies[id] = true })
	require.Len(t, proxies, 1+testShards)
	alarmed := map[string]bool{}
	each(all, "AWS::CloudWatch::Alarm", func(_, id string, r resource) {
		p := r.Properties
		if p["MetricName"] != "DatabaseConnectionsCurrentlySessionPinned" {
			return
		}
		require.Equal(t, "AWS/RDS", p["Namespace"], id)
		require.Equal(t, "Maximum", p["Statistic"], id)
		require.EqualValues(t, 1, p["Threshold"], id)
		require.EqualValues(t, PinnedMinutes, p["EvaluationPeriods"], id)
		require.Equal(t, "GreaterThanOrEqualToThreshold", p["ComparisonOperator"], id)
		require.NotEmpty(t, p["AlarmActions"], "%s notifies the alarm topic", id)
		dims := p["Dimensions"].([]any)
		require.Len(t, dims, 1, id)
		dim := dims[0].(map[string]any)
		require.Equal(t, "ProxyName", dim["Name"], id)
		proxy := importedProxy(t, proxies, dim["Value"])
		require.True(t, proxies[proxy], "%s watches proxy %v", id, dim["Value"])
		alarmed[proxy] = true
	})
	require.Len(t, alarmed, len(proxies), "one alarm per proxy")
}

// importedProxy resolves the ProxyName an ops stack alarm imports from the
// data stack to the proxy's logical id: CDK names the export of a Ref
// "<stack>:ExportsOutputRef<logical id><hash>".
func importedProxy(t *testing.T, proxies map[string]bool, v any) string {
	imp, ok := v.(map[string]any)["Fn::ImportValue"].(string)
	require.True(t, ok, "ProxyName is imported from the data stack: %v", v)
	for id := range proxies {
		if strings.Contains(imp, ":ExportsOutputRef"+id) {
			return id
		}
	}
	t.Fatalf("%s imports no proxy's name", imp)
	return ""
}
