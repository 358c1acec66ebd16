package cfkvs

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudfrontkeyvaluestore"
	"github.com/aws/aws-sdk-go-v2/service/cloudfrontkeyvaluestore/types"
	"github.com/stretchr/testify/require"
)

// store behaves like the KeyValueStore API where Sync relies on it:
// pages of at most MaxResults, updates refused (412) unless If-Match is the
// current ETag, a new ETag after each update.
type store struct {
	m       map[string]string
	version int
	updates int
}

var errPrecondition = errors.New("ConflictException: pre-condition failed (412)")

func (s *store) etag() *string { return aws.String("E" + strconv.Itoa(s.version)) }

func (s *store) DescribeKeyValueStore(_ context.Context, in *cloudfrontkeyvaluestore.DescribeKeyValueStoreInput, _ ...func(*cloudfrontkeyvaluestore.Options)) (*cloudfrontkeyvaluestore.DescribeKeyValueStoreOutput, error) {
	return &cloudfrontkeyvaluestore.DescribeKeyValueStoreOutput{ETag: s.etag(), KvsARN: in.KvsARN, ItemCount: aws.Int32(int32(len(s.m)))}, nil
}

func (s *store) ListKeys(_ context.Context, in *cloudfrontkeyvaluestore.ListKeysInput, _ ...func(*cloudfrontkeyvaluestore.Options)) (*cloudfrontkeyvaluestore.ListKeysOutput, error) {
	keys := slices.Sorted(maps.Keys(s.m))
	start := 0
	if in.NextToken != nil {
		start, _ = strconv.Atoi(*in.NextToken)
	}
	end := min(len(keys), start+int(aws.ToInt32(in.MaxResults)))
	out := &cloudfrontkeyvaluestore.ListKeysOutput{}
	for _, k := range keys[start:end] {
		out.Items = append(out.Items, types.ListKeysResponseListItem{Key: aws.String(k), Value: aws.String(s.m[k])})
	}
	if end < len(keys) {
		out.NextToken = aws.String(strconv.Itoa(end))
	}
	return out, nil
}

func (s *store) UpdateKeys(_ context.Context, in *cloudfrontkeyvaluestore.UpdateKeysInput, _ ...func(*cloudfrontkeyvaluestore.Options)) (*cloudfrontkeyvaluestore.UpdateKeysOutput, error) {
	if aws.ToString(in.IfMatch) != *s.etag() {
		return nil, errPrecondition
	}
	for _, p := range in.Puts {
		s.m[*p.Key] = *p.Value
	}
	for _, d := range in.Deletes {
		delete(s.m, *d.Key)
	}
	s.version++
	s.updates++
	return &cloudfrontkeyvaluestore.UpdateKeysOutput{ETag: s.etag()}, nil
}

func TestSyncMakesTheStoreHoldExactlyWhatIsWanted(t *testing.T) {
	t.Parallel()
	fake := &store{m: map[string]string{"s:old": "x", "room:1": "1", "a:k1": "stale"}}
	want := map[string]string{"s:k1": "c2Vzc2lvbg==", "a:k1": "YWRt"}
	for i := range 120 { // more than one page and more than one batch
		want[fmt.Sprintf("room:%d", 100+i)] = "1"
	}
	s := Store{API: fake, ARN: "arn:aws:cloudfront::111111111111:key-value-store/test"}
	require.NoError(t, s.Sync(context.Background(), want))
	require.Equal(t, want, fake.m)
	require.Equal(t, 3, fake.updates, "124 changes in batches of 50")

	require.NoError(t, s.Sync(context.Background(), want))
	require.Equal(t, 3, fake.updates, "nothing to change, no update")
}
