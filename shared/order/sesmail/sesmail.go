// Package sesmail sends confirmation emails with Amazon SES (v2 API).
package sesmail

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sesv2"
	"github.com/aws/aws-sdk-go-v2/service/sesv2/types"

	"github.com/catraca/catraca/shared/order"
)

// Mailer implements order.Mailer with SES.
type Mailer struct {
	Client *sesv2.Client
	From   string
}

// Send implements order.Mailer.
func (m Mailer) Send(ctx context.Context, mail order.Mail) error {
	_, err := m.Client.SendEmail(ctx, &sesv2.SendEmailInput{
		FromEmailAddress: aws.String(m.From),
		Destination:      &types.Destination{ToAddresses: []string{mail.To}},
		Content: &types.EmailContent{Simple: &types.Message{
			Subject: &types.Content{Data: aws.String(mail.Subject)},
			Body:    &types.Body{Text: &types.Content{Data: aws.String(mail.Body)}},
		}},
	})
	return err
}
