package web

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"
	"sync"
)

// ETag quotes an entity tag.
func ETag(s string) string { return `"` + s + `"` }

// gzipMemo keeps the compressed form of recent payloads by ETag, so a
// snapshot is compressed once per interval, not once per request. It is
// emptied when it grows past gzipMemoSize (snapshots change every second).
type gzipMemo struct {
	mu sync.Mutex
	m  map[string][]byte
}

const gzipMemoSize = 256

func (g *gzipMemo) gzipped(etag string, b []byte) []byte {
	g.mu.Lock()
	defer g.mu.Unlock()
	if gz, ok := g.m[etag]; ok {
		return gz
	}
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	zw.Write(b)
	zw.Close()
	if g.m == nil || len(g.m) >= gzipMemoSize {
		g.m = map[string][]byte{}
	}
	g.m[etag] = buf.Bytes()
	return buf.Bytes()
}

// Cached writes cacheable JSON payloads, keeping their compressed forms.
// Each handler group has its own: an ETag names a payload only within one
// group's data.
type Cached struct{ gzip gzipMemo }

// Write sends a JSON payload with caching headers, answering
// If-None-Match with 304 and compressing for clients that accept gzip.
func (s *Cached) Write(w http.ResponseWriter, r *http.Request, b []byte, etag, cacheControl string) {
	h := w.Header()
	h.Set("Cache-Control", cacheControl)
	h.Set("ETag", etag)
	h.Set("Vary", "Accept-Encoding")
	if match := r.Header.Get("If-None-Match"); match != "" && strings.Contains(match, etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h.Set("Content-Type", "application/json")
	if strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
		h.Set("Content-Encoding", "gzip")
		w.Write(s.gzip.gzipped(etag, b))
		return
	}
	w.Write(b)
}

// Hash names a payload for its ETag.
func Hash(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}
