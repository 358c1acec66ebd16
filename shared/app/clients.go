package app

import (
	"context"
	"fmt"
	"log/slog"

	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/sesv2"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/redis/go-redis/v9"

	"github.com/catraca/catraca/shared/config"
	"github.com/catraca/catraca/shared/order"
	"github.com/catraca/catraca/shared/order/sesmail"
	"github.com/catraca/catraca/shared/order/sqsqueue"
	"github.com/catraca/catraca/shared/redisconn"
)

// OpenRedis returns a client of c's Redis (see redisconn.Open).
func OpenRedis(c config.Redis) redis.UniversalClient { return redisconn.Open(c) }

// NewMailer sends with SES from c.MailFrom, writes into c.Mailbox
// locally, or else only logs.
func NewMailer(ctx context.Context, c config.Mail, log *slog.Logger) (order.Mailer, error) {
	switch {
	case c.MailFrom != "":
		awsCfg, err := awsconfig.LoadDefaultConfig(ctx)
		if err != nil {
			return nil, fmt.Errorf("aws config: %w", err)
		}
		return sesmail.Mailer{Client: sesv2.NewFromConfig(awsCfg), From: c.MailFrom}, nil
	case c.Mailbox != "":
		return order.FolderMailer{Dir: c.Mailbox}, nil
	}
	return order.LogMailer{Log: log}, nil
}

// NewQueue is the SQS queue of c, or local when c names none.
func NewQueue(ctx context.Context, c config.Queue, local order.Queue) (order.Queue, error) {
	if c.PSPQueueURL == "" {
		return local, nil
	}
	awsCfg, err := awsconfig.LoadDefaultConfig(ctx)
	if err != nil {
		return nil, fmt.Errorf("aws config: %w", err)
	}
	return sqsqueue.Queue{Client: sqs.NewFromConfig(awsCfg), URL: c.PSPQueueURL}, nil
}
