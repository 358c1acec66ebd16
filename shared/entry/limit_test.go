package entry_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/shared/entry"
	"github.com/catraca/catraca/shared/inventory"
)

// TestTransfersInCountAgainstTheLimit: a ticket transferred in counts
// against the recipient's per-event limit as a purchase does, so accounts
// that each buy the limit cannot funnel it into one account: the transfer
// that would pass the limit is refused, saying why, and so is a hold once
// the tickets transferred in fill it. The senders' purchases still count
// against them.
func TestTransfersInCountAgainstTheLimit(t *testing.T) {
	w := newWorld(t)
	collector := w.account(t, "collector@example.com", "Carla Collector")
	w.sell(t, w.event, collector, 2)
	var sent []int64
	for i := range 5 {
		sender := w.account(t, fmt.Sprintf("bot%d@example.com", i), "Bot")
		ticket := w.sell(t, w.event, sender, 1)[0]
		w.codeOf(t, sender, ticket) // keys the ticket, as the sender's page does
		err := w.svc.Transfer(w.ctx, ticket, sender, "collector@example.com")
		if i < 4 {
			require.NoError(t, err, "transfer %d: 2 bought and %d transferred in of 6", i+1, i)
			sent = append(sent, ticket)
			continue
		}
		require.ErrorIs(t, err, entry.ErrNoTransfer, "the fifth would make 7 of 6")
		require.ErrorContains(t, err, "more than the 6 tickets one fan may have")
		_, err = w.svc.Ticket(w.ctx, sender, ticket)
		require.NoError(t, err, "a refused transfer leaves the ticket with its holder")
	}
	for _, ticket := range sent {
		w.codeOf(t, collector, ticket)
	}

	require.NoError(t, w.app.Organizer.SetStatus(w.ctx, w.event, "on_sale"))
	e, err := w.app.Events.Get(w.ctx, w.event)
	require.NoError(t, err)
	_, _, err = w.app.Inventory.Hold(w.ctx, e, inventory.Request{Account: collector, Key: "more", Seats: w.seats[len(w.seats)-1:]})
	require.ErrorIs(t, err, inventory.ErrAccountLimit, "6 of 6 with the tickets transferred in")
	require.ErrorContains(t, err, "you have 6 of 6")

	sender := w.account(t, "seller@example.com", "Sam Seller")
	ticket := w.sell(t, w.event, sender, 6)[0]
	w.codeOf(t, sender, ticket)
	friend := w.account(t, "friend@example.com", "Frida Friend")
	require.NoError(t, w.svc.Transfer(w.ctx, ticket, sender, "friend@example.com"))
	_, _, err = w.app.Inventory.Hold(w.ctx, e, inventory.Request{Account: sender, Key: "again", Seats: w.seats[len(w.seats)-1:]})
	require.ErrorIs(t, err, inventory.ErrAccountLimit, "a sender's purchases still count after the tickets leave")
	_, _, err = w.app.Inventory.Hold(w.ctx, e, inventory.Request{Account: friend, Key: "five", Seats: w.seats[len(w.seats)-5:]})
	require.NoError(t, err, "1 transferred in and 5 held make 6 of 6")
}

// TestConcurrentTransfersStayWithinTheLimit: transfers to one account and
// that account's own holds race; the recipient's limit lock serializes
// them, so it never ends up with more than the limit.
func TestConcurrentTransfersStayWithinTheLimit(t *testing.T) {
	w := newWorld(t)
	collector := w.account(t, "collector@example.com", "Carla Collector")
	require.NoError(t, w.app.Organizer.SetStatus(w.ctx, w.event, "on_sale"))
	e, err := w.app.Events.Get(w.ctx, w.event)
	require.NoError(t, err)
	const senders = 12
	type gift struct{ sender, ticket int64 }
	gifts := make([]gift, senders)
	for i := range gifts {
		gifts[i].sender = w.account(t, fmt.Sprintf("bot%d@example.com", i), "Bot")
		gifts[i].ticket = w.sell(t, w.event, gifts[i].sender, 1)[0]
		w.codeOf(t, gifts[i].sender, gifts[i].ticket)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	moved, held := 0, 0
	for i, g := range gifts {
		wg.Go(func() {
			if w.svc.Transfer(w.ctx, g.ticket, g.sender, "collector@example.com") == nil {
				mu.Lock()
				moved++
				mu.Unlock()
			}
		})
		wg.Go(func() {
			_, _, err := w.app.Inventory.Hold(w.ctx, e, inventory.Request{Account: collector, Key: fmt.Sprint("h", i), Seats: w.seats[len(w.seats)-1-i:][:1]})
			if err == nil {
				mu.Lock()
				held++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	require.Equal(t, e.MaxPerAccount, moved+held, "transferred in (%d) and held (%d) fill the limit exactly", moved, held)
}
