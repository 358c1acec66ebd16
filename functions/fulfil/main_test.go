package main

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/tools/lambdatest"
	"github.com/catraca/catraca/tools/testenv"
)

// TestFulfilsWithItsOwnConfigurationUnderEmulator runs the built outbox
// drainer with only the variables infra/stacks gives it (no session or
// webhook key): it starts and drains the (empty) outboxes.
func TestFulfilsWithItsOwnConfigurationUnderEmulator(t *testing.T) {
	t.Parallel()
	fn, env := lambdatest.StartFunction(t, "fulfil", testenv.Config(t, testenv.NewDatabases(t, 1)), nil)
	require.NotContains(t, env, "CATRACA_SESSION_KEYS")
	var done int
	fn.Invoke(t, struct{}{}, &done)
	require.Zero(t, done)
}
