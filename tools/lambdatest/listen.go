package lambdatest

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// listens reports whether process pid has a listening TCP socket on
// 127.0.0.1:port. A dial cannot tell: when the emulator lost a port to
// another program, that program answers the dial, and the emulator dies
// a moment later.
func listens(pid, port int) bool {
	inodes := map[string]bool{}
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		f, err := os.Open(table)
		if err != nil {
			continue
		}
		s := bufio.NewScanner(f)
		local := fmt.Sprintf(":%04X", port)
		for s.Scan() {
			// sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
			fields := strings.Fields(s.Text())
			if len(fields) > 9 && strings.HasSuffix(fields[1], local) && fields[3] == "0A" {
				inodes["socket:["+fields[9]+"]"] = true
			}
		}
		f.Close()
	}
	if len(inodes) == 0 {
		return false
	}
	fds, _ := filepath.Glob(fmt.Sprintf("/proc/%d/fd/*", pid))
	for _, fd := range fds {
		if target, err := os.Readlink(fd); err == nil && inodes[target] {
			return true
		}
	}
	return false
}
