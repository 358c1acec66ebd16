package queue

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// scripts are every Lua script of the waiting room, by Go name.
var scripts = map[string]script{
	"join": joinScript, "status": statusScript, "freeze": freezeScript, "drawChunk": drawChunkScript,
	"finishDraw": finishDrawScript, "tick": tickScript, "leave": leaveScript, "hold": holdScript, "lease": leaseScript,
}

var keyLine = regexp.MustCompile(`^local ([a-z]+) = KEYS\[(\d+)\]$`)

// TestScriptsNameTheirKeys: each script's source opens by naming every key
// Go sends, once, each key in the event's slot, and nothing else in it
// reads KEYS.
func TestScriptsNameTheirKeys(t *testing.T) {
	k := New(nil, "p:").keys(7)
	require.Equal(t, "p:{evt:7}:", k.tag)
	for name, s := range scripts {
		keys := s.keys(k, 42)
		lines := strings.Split(s.src, "\n")
		seen := map[string]bool{}
		for i, key := range keys {
			require.True(t, strings.HasPrefix(key, k.tag), "%s: %s is in the event's slot", name, key)
			got := keyLine.FindStringSubmatch(lines[i])
			require.NotNil(t, got, "%s line %d names KEYS[%d]: %q", name, i+1, i+1, lines[i])
			require.Equal(t, strconv.Itoa(i+1), got[2])
			require.True(t, strings.HasPrefix(key, k.tag+got[1]), "%s names %s %s", name, key, got[1])
			require.False(t, seen[got[1]], "%s names two keys %s", name, got[1])
			seen[got[1]] = true
		}
		require.NotContains(t, strings.Join(lines[len(keys):], "\n"), "KEYS[", "%s reads its keys by name", name)
	}
}

var returnedState = regexp.MustCompile(`return \{'(\w+)'`)

// TestScriptsReturnKnownStates: every state word the join and status
// scripts return is a State constant (or the bucket's slow), and every
// State is returned by one of them.
func TestScriptsReturnKnownStates(t *testing.T) {
	known := []State{StateClosed, StateNotYet, StatePrequeue, StateWaiting, StateAdmitted, StateExpired, StateSoldOut, StateNone}
	seen := map[State]bool{}
	for _, s := range []script{joinScript, statusScript} {
		for _, m := range returnedState.FindAllStringSubmatch(s.src, -1) {
			if m[1] == slow {
				continue
			}
			require.Contains(t, known, State(m[1]))
			seen[State(m[1])] = true
		}
	}
	for _, s := range known {
		require.True(t, seen[s], "no script returns %q", s)
	}
}
