// Package snapstore keeps the search index's snapshot: in an S3 object in
// production (s3://bucket/key), in a file locally (a directory path).
package snapstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/catraca/catraca/shared/searchindex"
)

// Open returns the store at location: "s3://bucket/key" or a directory.
func Open(ctx context.Context, location string) (searchindex.SnapshotStore, error) {
	if rest, ok := strings.CutPrefix(location, "s3://"); ok {
		bucket, key, ok := strings.Cut(rest, "/")
		if !ok || bucket == "" || key == "" {
			return nil, fmt.Errorf("snapstore: %q is not s3://bucket/key", location)
		}
		cfg, err := awsconfig.LoadDefaultConfig(ctx)
		if err != nil {
			return nil, fmt.Errorf("snapstore: aws config: %w", err)
		}
		return S3{Client: s3.NewFromConfig(cfg), Bucket: bucket, Key: key}, nil
	}
	return Dir(location), nil
}

// Dir keeps the snapshot in a file of a directory (the local stack's).
type Dir string

const file = "search-index.gob.gz"

func (d Dir) Load(context.Context) ([]byte, error) {
	b, err := os.ReadFile(filepath.Join(string(d), file))
	if errors.Is(err, os.ErrNotExist) {
		return nil, searchindex.ErrNoSnapshot
	}
	return b, err
}

// Save writes a new file and renames it over the old one: a reader never
// sees half a snapshot.
func (d Dir) Save(_ context.Context, b []byte) error {
	if err := os.MkdirAll(string(d), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(string(d), file+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), filepath.Join(string(d), file))
}

func (d Dir) Modified(context.Context) (time.Time, error) {
	fi, err := os.Stat(filepath.Join(string(d), file))
	if errors.Is(err, os.ErrNotExist) {
		return time.Time{}, searchindex.ErrNoSnapshot
	}
	if err != nil {
		return time.Time{}, err
	}
	return fi.ModTime(), nil
}

// S3API is the part of the S3 client the store uses.
type S3API interface {
	GetObject(context.Context, *s3.GetObjectInput, ...func(*s3.Options)) (*s3.GetObjectOutput, error)
	PutObject(context.Context, *s3.PutObjectInput, ...func(*s3.Options)) (*s3.PutObjectOutput, error)
	HeadObject(context.Context, *s3.HeadObjectInput, ...func(*s3.Options)) (*s3.HeadObjectOutput, error)
}

// S3 keeps the snapshot in one object. The functions may read (the API)
// or read and write (the builder) that key only, without s3:ListBucket:
// S3 then answers a missing key with 403, not 404, and both mean none.
type S3 struct {
	Client      S3API
	Bucket, Key string
}

func (s S3) Load(ctx context.Context) ([]byte, error) {
	out, err := s.Client.GetObject(ctx, &s3.GetObjectInput{Bucket: &s.Bucket, Key: &s.Key})
	if err != nil {
		return nil, absent(err)
	}
	defer out.Body.Close()
	return io.ReadAll(out.Body)
}

func (s S3) Save(ctx context.Context, b []byte) error {
	_, err := s.Client.PutObject(ctx, &s3.PutObjectInput{Bucket: &s.Bucket, Key: &s.Key, Body: bytes.NewReader(b),
		ContentType: aws.String("application/gzip")})
	return err
}

func (s S3) Modified(ctx context.Context) (time.Time, error) {
	out, err := s.Client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &s.Bucket, Key: &s.Key})
	if err != nil {
		return time.Time{}, absent(err)
	}
	return aws.ToTime(out.LastModified), nil
}

// absent maps S3's answers for a missing object to ErrNoSnapshot.
func absent(err error) error {
	var re *smithyhttp.ResponseError
	if errors.As(err, &re) && (re.HTTPStatusCode() == http.StatusNotFound || re.HTTPStatusCode() == http.StatusForbidden) {
		return fmt.Errorf("%w (%v)", searchindex.ErrNoSnapshot, err)
	}
	return err
}
