// Package sqsqueue carries PSP calls on an SQS FIFO queue in AWS: one
// message group per order (order kept, different orders in parallel), and
// the payment id as deduplication id (a retried send is dropped). The
// consumer function's reserved concurrency and the shared rate limiter
// keep the PSP under its quota.
package sqsqueue

import (
	"context"
	"encoding/json"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/catraca/catraca/shared/order"
)

// Queue implements order.Queue on SQS.
type Queue struct {
	Client *sqs.Client
	URL    string
}

// Send implements order.Queue.
func (q Queue) Send(ctx context.Context, j order.Job) error {
	body, err := json.Marshal(j)
	if err != nil {
		return err
	}
	_, err = q.Client.SendMessage(ctx, &sqs.SendMessageInput{
		QueueUrl:               aws.String(q.URL),
		MessageBody:            aws.String(string(body)),
		MessageGroupId:         aws.String(strconv.FormatInt(j.OrderID, 10)),
		MessageDeduplicationId: aws.String(strconv.FormatInt(j.PaymentID, 10)),
	})
	return err
}
