package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/tools/lambdatest"
	"github.com/catraca/catraca/tools/testenv"
)

// TestAdmitsWithItsOwnConfigurationUnderEmulator runs the built admission
// controller with only the variables infra/stacks gives it (no PSP key):
// it starts and ticks until its invocation's deadline is near.
func TestAdmitsWithItsOwnConfigurationUnderEmulator(t *testing.T) {
	t.Parallel()
	fn, env := lambdatest.StartFunction(t, "admit", testenv.Config(t, testenv.NewDatabases(t, 1)), func(env map[string]string) {
		env["AWS_LAMBDA_FUNCTION_TIMEOUT"] = "5" // the emulator's deadline: ticks for about 3 s
	})
	require.NotContains(t, env, "CATRACA_PSP_API_KEY")
	start := time.Now()
	var out any
	fn.Invoke(t, struct{}{}, &out)
	require.Nil(t, out)
	require.Less(t, time.Since(start), 30*time.Second, "it stops before its deadline, not after 57 s")
}
