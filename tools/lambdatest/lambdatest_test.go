package lambdatest

import (
	"net"
	"testing"

	"github.com/stretchr/testify/require"
)

// A port chosen free and taken before the emulator binds it (another test
// process, another program) costs a retry, not a failed test: the emulator
// exits with "address already in use" and Start picks new ports.
func TestStartRetriesWhenAPortIsTaken(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer taken.Close()
	calls := 0
	pickPort = func(t testing.TB) int {
		calls++
		if calls == 2 { // the runtime API port of the first attempt
			return taken.Addr().(*net.TCPAddr).Port
		}
		return freePort(t)
	}
	t.Cleanup(func() { pickPort = freePort })

	f := Start(t, "/bin/true", nil)
	require.NotEmpty(t, f.url)
	require.Equal(t, 4, calls, "one retry with two new ports")
}
