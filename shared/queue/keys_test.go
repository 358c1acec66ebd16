package queue

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// scripts are every Lua script of the waiting room, by Go name.
var scripts = map[string]script{
	"join": joinScript.script, "status": statusScript.script, "freeze": freezeScript, "drawChunk": drawChunkScript,
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
	known := []State{StateClosed, StateNotYet, StatePrequeue, StateWaiting, StateAdmitted, StateExpired, StateSoldOut, StateNone, StatePresale}
	seen := map[State]bool{}
	for _, s := range []script{joinScript.script, statusScript.script} {
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

// TestFanCallsSendWhatScriptRunWould: the join and status calls' prebuilt
// commands are EVALSHA, digest, key count, the script's keys, then its
// arguments, for any event and account; and a script Redis has not cached
// (a new deployment's, or after a failover) is loaded by the call.
func TestFanCallsSendWhatScriptRunWould(t *testing.T) {
	r := New(nil, "p:")
	for _, s := range []fanScript{joinScript, statusScript} {
		for _, event := range []int64{7, 8, 7} {
			for _, account := range []int64{42, 1 << 40} {
				want := []any{"evalsha", s.lua.Hash(), len(s.keys(r.keys(event), account))}
				for _, k := range s.keys(r.keys(event), account) {
					want = append(want, k)
				}
				require.Equal(t, append(want, account, int64(5)), r.fanArgs(s, event, account, account, int64(5)))
			}
		}
	}
	f := newRoom(t, 9, Settings{})
	fresh := newFanScript(joinKind, "return {'waiting', ARGV[1], pace}\n-- "+time.Now().String())
	for range 2 {
		v, err := f.room.runFan(context.Background(), fresh, 9, 42, 42).Slice()
		require.NoError(t, err)
		require.Equal(t, []any{"waiting", "42", f.room.keys(9).pace(42)}, v)
	}
}
