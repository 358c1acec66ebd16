package sale

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/catraca/catraca/shared/api/web"
)

// BenchmarkDecodeHold decodes the hot path's bodies: holds of each shape.
func BenchmarkDecodeHold(b *testing.B) {
	for name, body := range map[string]string{
		"seats": `{"seats":[101001,101002,101003,101004]}`,
		"pool":  `{"pool":"FLOOR","quantity":2}`,
		"best":  `{"best":{"quantity":2,"section":"101"}}`,
	} {
		b.Run(name, func(b *testing.B) {
			r, _ := http.NewRequest(http.MethodPost, "/api/events/1/holds", nil)
			r.Header.Set("Content-Type", "application/json")
			b.ReportAllocs()
			for b.Loop() {
				r.Body = io.NopCloser(strings.NewReader(body))
				var h holdRequest
				if err := web.Decode(r, &h); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
