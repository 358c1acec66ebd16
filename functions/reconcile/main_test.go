package main

import (
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/tools/lambdatest"
	"github.com/catraca/catraca/tools/pspsim"
	"github.com/catraca/catraca/tools/testenv"
)

// TestReconcilesWithItsOwnConfigurationUnderEmulator runs the built
// reconciler with only the variables infra/stacks gives it: it reads the
// PSP's recent events (none) with the API key it is given.
func TestReconcilesWithItsOwnConfigurationUnderEmulator(t *testing.T) {
	t.Parallel()
	cfg := testenv.Config(t, testenv.NewDatabases(t, 1))
	sim := pspsim.New(pspsim.Config{APIKey: cfg.PSPAPIKey, Secret: "whsec_s", PublicURL: "http://psp.invalid"})
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	cfg.PSPURL = srv.URL
	fn, env := lambdatest.StartFunction(t, "reconcile", cfg, nil)
	require.NotContains(t, env, "CATRACA_SESSION_KEYS")
	var applied int
	fn.Invoke(t, struct{}{}, &applied)
	require.Zero(t, applied)
}
