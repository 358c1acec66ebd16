package rediskey

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestEvent(t *testing.T) {
	if got := Event("catraca:", 42); got != "catraca:{evt:42}:" {
		t.Fatalf("Event = %q", got)
	}
}

// TestTagIsBuiltOnlyHere fails when production code spells the hash tag
// itself, as three places once did.
func TestTagIsBuiltOnlyHere(t *testing.T) {
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") ||
			strings.HasPrefix(path, filepath.Join("..", "rediskey")) {
			return err
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(src), "\n") {
			if strings.Contains(line, `"{evt:`) {
				t.Errorf("%s:%d builds the event hash tag: use rediskey.Event", path, i+1)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
