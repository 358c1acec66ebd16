package main

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/tools/lambdatest"
	"github.com/catraca/catraca/tools/testenv"
)

// TestSweepsWithItsOwnConfigurationUnderEmulator runs the built sweeper
// with only the variables infra/stacks gives it (no PSP or signing key):
// it starts and sweeps every shard.
func TestSweepsWithItsOwnConfigurationUnderEmulator(t *testing.T) {
	t.Parallel()
	fn, env := lambdatest.StartFunction(t, "sweep", testenv.Config(t, testenv.NewDatabases(t, 2)), nil)
	require.NotContains(t, env, "CATRACA_PSP_API_KEY")
	var swept map[string]int
	fn.Invoke(t, struct{}{}, &swept)
	require.Equal(t, map[string]int{"1": 0, "2": 0}, swept)
}
