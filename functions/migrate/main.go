// Command migrate is the CloudFormation custom resource that applies the
// embedded goose migrations to one database on every deployment: the
// catalog, or one shard. It answers CloudFormation itself (cfn.LambdaWrap),
// so no provider function in another runtime is needed. Deleting the
// resource leaves the data alone.
package main

import (
	"context"
	"fmt"
	"strconv"

	"github.com/aws/aws-lambda-go/cfn"
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/catraca/catraca/shared/app"
	"github.com/catraca/catraca/shared/config"
	"github.com/catraca/catraca/shared/migrate"
)

func main() {
	// A configuration that does not load still gets an answer to
	// CloudFormation (FAILED, with the reason) instead of leaving the stack
	// waiting an hour for the custom resource's timeout.
	cfg, cfgErr := app.Load[config.Migrate](context.Background())
	lambda.Start(cfn.LambdaWrap(func(ctx context.Context, ev cfn.Event) (string, map[string]any, error) {
		kind, _ := ev.ResourceProperties["Kind"].(string)
		shardID, _ := ev.ResourceProperties["ShardId"].(string)
		id := "catraca-" + kind + shardID
		if ev.RequestType == cfn.RequestDelete {
			return ev.PhysicalResourceID, nil, nil
		}
		if cfgErr != nil {
			return id, nil, fmt.Errorf("configuration: %w", cfgErr)
		}
		var res migrate.Result
		var err error
		switch kind {
		case "catalog":
			res, err = migrate.Up(ctx, cfg.CatalogDSN, migrate.Catalog, 0)
		case "shard":
			shard, convErr := strconv.Atoi(shardID)
			dsn, ok := cfg.Shards[shard]
			if convErr != nil || !ok {
				return id, nil, fmt.Errorf("unknown shard %q", shardID)
			}
			res, err = migrate.Up(ctx, dsn, migrate.Shard, shard)
		default:
			return id, nil, fmt.Errorf("unknown database kind %q", kind)
		}
		if err != nil {
			return id, nil, fmt.Errorf("migrate %s: %w", id, err)
		}
		return id, map[string]any{"Version": res.Version, "Applied": res.Applied}, nil
	}))
}
