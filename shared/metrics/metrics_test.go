package metrics

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestEmbeddedMetricFormat checks the log line against the EMF shape
// CloudWatch extracts: _aws.Timestamp, one directive naming each metric,
// and each metric's value at the root.
func TestEmbeddedMetricFormat(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&buf, nil))
	ctx, set := With(context.Background())
	Add(ctx, Holds, 1)
	Add(ctx, Holds, 1)
	Add(ctx, HTTP5xx, 1)
	Add(context.Background(), Holds, 1) // outside a request: dropped
	log.LogAttrs(ctx, slog.LevelInfo, "http", set.Attrs()...)

	var line struct {
		Holds, HTTP5xx float64
		AWS            struct {
			Timestamp         int64
			CloudWatchMetrics []struct {
				Namespace  string
				Dimensions [][]string
				Metrics    []struct{ Name, Unit string }
			}
		} `json:"_aws"`
	}
	require.NoError(t, json.Unmarshal(buf.Bytes(), &line), buf.String())
	require.Equal(t, 2.0, line.Holds)
	require.Equal(t, 1.0, line.HTTP5xx)
	require.Positive(t, line.AWS.Timestamp)
	require.Len(t, line.AWS.CloudWatchMetrics, 1)
	d := line.AWS.CloudWatchMetrics[0]
	require.Equal(t, Namespace, d.Namespace)
	require.Equal(t, [][]string{{}}, d.Dimensions)
	require.Equal(t, []struct{ Name, Unit string }{{"HTTP5xx", "Count"}, {"Holds", "Count"}}, d.Metrics)

	_, empty := With(context.Background())
	require.Empty(t, empty.Attrs(), "no metrics, no _aws block")
}

// TestScope: a request's scope is its parent context in every other
// respect (values, cancellation, deadline) and collects into its own set.
func TestScope(t *testing.T) {
	t.Parallel()
	type other struct{}
	parent, cancel := context.WithCancel(context.WithValue(context.Background(), other{}, "kept"))
	var s Scope
	ctx, set := s.Start(parent)
	Add(ctx, Holds, 1)
	child, stop := context.WithCancel(context.WithValue(ctx, other{}, "child"))
	defer stop()
	Add(child, Holds, 1)
	require.Equal(t, "kept", ctx.Value(other{}))
	require.Equal(t, "child", child.Value(other{}))
	require.Len(t, set.Attrs(), 2) // Holds and _aws
	require.Equal(t, 2.0, set.Attrs()[0].Value.Float64())
	cancel()
	<-child.Done()
	require.ErrorIs(t, ctx.Err(), context.Canceled)
	_, fresh := With(context.Background())
	require.Empty(t, fresh.Attrs())
}
