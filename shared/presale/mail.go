package presale

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/catraca/catraca/shared/catalogstore"
	"github.com/catraca/catraca/shared/order"
)

// Mailing tells each drawn registration its outcome by mail: the winner
// its code, the others that they were not drawn and when the general
// sale's waiting room opens to them. It handles the catalog outbox's
// presale.mail messages, which the draw writes whoever runs it, in the
// fulfil function: the one that holds the mailer and may read addresses.
type Mailing struct {
	Mailer    order.Mailer
	PublicURL string
}

// Send mails the registration a presale.mail message names, unless it was
// mailed already; db is the message's transaction, so the mark commits
// with the message's processing and a redelivered message sends nothing.
func (m Mailing) Send(ctx context.Context, db catalogstore.DB, payload []byte) error {
	var msg catalogstore.PresaleMailMessage
	if err := json.Unmarshal(payload, &msg); err != nil {
		return err
	}
	r, err := catalogstore.PresaleMailOf(ctx, db, msg.Registration)
	if err != nil || r.Mailed {
		return err
	}
	site := strings.TrimSuffix(m.PublicURL, "/") + "/events/" + strconv.FormatInt(r.EventID, 10)
	mail := order.Mail{Key: "presale-" + r.ID, To: r.Email}
	if r.Won {
		mail.Subject = "Your presale code"
		mail.Body = "You were drawn for the presale of " + r.EventName + ". Your code is " + r.Code + ".\n\n" +
			"It works for your account only. Enter it on " + site + "/presale to join the presale's waiting room.\n"
	} else {
		mail.Subject = "Presale draw: not drawn this time"
		mail.Body = "Your registration for the presale of " + r.EventName + " was not drawn this time.\n\n" +
			"The general sale's waiting room opens to everyone at " + r.SaleEndsAt.UTC().Format(time.RFC3339) +
			": join it on " + site + "/queue\n"
	}
	if err := m.Mailer.Send(ctx, mail); err != nil {
		return err
	}
	return catalogstore.MarkPresaleMailed(ctx, db, r.ID)
}
