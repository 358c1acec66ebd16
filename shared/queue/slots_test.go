package queue

import (
	"testing"

	"github.com/catraca/catraca/tools/testenv"
)

// TestScriptKeysShareASlot: every script's keys, and every MULTI's, are in
// one Redis Cluster slot for any event and account (CLUSTER KEYSLOT on the
// test cluster), so none fails with CROSSSLOT on ElastiCache Serverless.
func TestScriptKeysShareASlot(t *testing.T) {
	t.Parallel()
	for _, prefix := range []string{"", "catraca:", "t1a2b:"} {
		r := New(nil, prefix)
		for _, event := range []int64{1, 7, 1 << 40} {
			k := r.keys(event)
			for _, account := range []int64{0, 42, 1 << 40} {
				for name, s := range scripts {
					testenv.RequireOneSlot(t, name, s.keys(k, account)...)
				}
			}
			// trimScript runs beside the writes of RecordHold and
			// SetGauges in one pipeline; Publish and the ceiling's
			// adjustment are MULTIs.
			testenv.RequireOneSlot(t, "RecordHold", k.ts, k.health)
			testenv.RequireOneSlot(t, "Publish", k.cfg, k.st)
			testenv.RequireOneSlot(t, "adjust", k.health, k.active)
		}
	}
}
