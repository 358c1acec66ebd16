package web

import "net/http"

// StatusRecorder remembers the status for the access log.
type StatusRecorder struct {
	http.ResponseWriter
	Status int
	Bytes  int
}

func (s *StatusRecorder) WriteHeader(code int) {
	if s.Status == 0 {
		s.Status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *StatusRecorder) Write(b []byte) (int, error) {
	if s.Status == 0 {
		s.Status = http.StatusOK
	}
	n, err := s.ResponseWriter.Write(b)
	s.Bytes += n
	return n, err
}

// Flush lets SSE handlers flush through the recorder.
func (s *StatusRecorder) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (s *StatusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// CanFlush reports whether the writer under every wrapper can flush: the
// recorder always has a Flush method, a buffered Lambda's writer has none.
func CanFlush(w http.ResponseWriter) bool {
	for {
		u, ok := w.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			_, ok := w.(http.Flusher)
			return ok
		}
		w = u.Unwrap()
	}
}
