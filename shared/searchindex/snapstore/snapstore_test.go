package snapstore

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/shared/searchindex"
)

// fakeS3 is one bucket over S3's REST protocol (path-style), refusing
// like S3 does without s3:ListBucket: a missing key is 403.
type fakeS3 struct {
	mu      sync.Mutex
	objects map[string][]byte
	saved   time.Time
}

func (f *fakeS3) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	b, ok := f.objects[r.URL.Path]
	switch r.Method {
	case http.MethodPut:
		body, _ := io.ReadAll(r.Body)
		f.objects[r.URL.Path], f.saved = body, time.Now().UTC().Truncate(time.Second)
	case http.MethodGet, http.MethodHead:
		if !ok {
			w.Header().Set("Content-Type", "application/xml")
			w.WriteHeader(http.StatusForbidden)
			if r.Method == http.MethodGet {
				io.WriteString(w, `<Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>`)
			}
			return
		}
		w.Header().Set("Last-Modified", f.saved.Format(http.TimeFormat))
		if r.Method == http.MethodGet {
			w.Write(b)
		}
	}
}

func TestS3Store(t *testing.T) {
	ctx := context.Background()
	f := &fakeS3{objects: map[string][]byte{}}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	client := s3.NewFromConfig(aws.Config{Region: "eu-west-1", Credentials: credentials.NewStaticCredentialsProvider("AKID", "SECRET", ""),
		BaseEndpoint: aws.String(srv.URL)}, func(o *s3.Options) { o.UsePathStyle = true })
	store := S3{Client: client, Bucket: "snapshots", Key: "search/index.gob.gz"}

	_, err := store.Load(ctx)
	require.ErrorIs(t, err, searchindex.ErrNoSnapshot, "403 without ListBucket: none yet")
	_, err = store.Modified(ctx)
	require.ErrorIs(t, err, searchindex.ErrNoSnapshot)

	require.NoError(t, store.Save(ctx, []byte("snapshot")))
	require.Contains(t, f.objects, "/snapshots/search/index.gob.gz")
	b, err := store.Load(ctx)
	require.NoError(t, err)
	require.Equal(t, "snapshot", string(b))
	at, err := store.Modified(ctx)
	require.NoError(t, err)
	require.Equal(t, f.saved, at.UTC())
}
