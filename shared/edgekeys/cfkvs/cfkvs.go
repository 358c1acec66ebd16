// Package cfkvs keeps a CloudFront KeyValueStore in sync through its API
// (the admit function calls it every minute).
package cfkvs

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudfrontkeyvaluestore"
	"github.com/aws/aws-sdk-go-v2/service/cloudfrontkeyvaluestore/types"

	"github.com/catraca/catraca/shared/edgekeys"
)

// batch bounds one UpdateKeys call.
const batch = 50

// API is the part of the KeyValueStore client Store uses.
type API interface {
	DescribeKeyValueStore(context.Context, *cloudfrontkeyvaluestore.DescribeKeyValueStoreInput, ...func(*cloudfrontkeyvaluestore.Options)) (*cloudfrontkeyvaluestore.DescribeKeyValueStoreOutput, error)
	ListKeys(context.Context, *cloudfrontkeyvaluestore.ListKeysInput, ...func(*cloudfrontkeyvaluestore.Options)) (*cloudfrontkeyvaluestore.ListKeysOutput, error)
	UpdateKeys(context.Context, *cloudfrontkeyvaluestore.UpdateKeysInput, ...func(*cloudfrontkeyvaluestore.Options)) (*cloudfrontkeyvaluestore.UpdateKeysOutput, error)
}

// Store is one KeyValueStore by ARN.
type Store struct {
	API API
	ARN string
}

// Sync implements edgekeys.Store: it lists the store, then puts and deletes
// the difference in batches, each conditional on the store's ETag.
func (s Store) Sync(ctx context.Context, want map[string]string) error {
	desc, err := s.API.DescribeKeyValueStore(ctx, &cloudfrontkeyvaluestore.DescribeKeyValueStoreInput{KvsARN: &s.ARN})
	if err != nil {
		return fmt.Errorf("describe key value store: %w", err)
	}
	have := map[string]string{}
	for p := cloudfrontkeyvaluestore.NewListKeysPaginator(s.API, &cloudfrontkeyvaluestore.ListKeysInput{KvsARN: &s.ARN, MaxResults: aws.Int32(50)}); p.HasMorePages(); {
		page, err := p.NextPage(ctx)
		if err != nil {
			return fmt.Errorf("list keys: %w", err)
		}
		for _, it := range page.Items {
			have[aws.ToString(it.Key)] = aws.ToString(it.Value)
		}
	}
	puts, deletes := edgekeys.Diff(have, want)
	etag := desc.ETag
	for len(puts)+len(deletes) > 0 {
		in := &cloudfrontkeyvaluestore.UpdateKeysInput{KvsARN: &s.ARN, IfMatch: etag}
		for len(puts) > 0 && len(in.Puts)+len(in.Deletes) < batch {
			in.Puts = append(in.Puts, types.PutKeyRequestListItem{Key: aws.String(puts[0]), Value: aws.String(want[puts[0]])})
			puts = puts[1:]
		}
		for len(deletes) > 0 && len(in.Puts)+len(in.Deletes) < batch {
			in.Deletes = append(in.Deletes, types.DeleteKeyRequestListItem{Key: aws.String(deletes[0])})
			deletes = deletes[1:]
		}
		out, err := s.API.UpdateKeys(ctx, in)
		if err != nil {
			return fmt.Errorf("update keys: %w", err)
		}
		etag = out.ETag
	}
	return nil
}
