package entry_test

import (
	"encoding/base32"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/shared/account/pgstore"
	"github.com/catraca/catraca/shared/entry"
	"github.com/catraca/catraca/shared/event"
	"github.com/catraca/catraca/tools/apptest"
)

// Attacks on the door by people who hold a door, a ticket or once held
// the organizer role.

// TestDemotedOrganizersLoseTheDoor: an organizer demoted to fan keeps the
// events they created, but none of the door's rights over them: entry
// rules, door staff, scanning and the scan bundle (every holder's name)
// were theirs for as long as they had created the event.
func TestDemotedOrganizersLoseTheDoor(t *testing.T) {
	w := newWorld(t)
	w.sell(t, w.event, w.fan, 1)
	require.NoError(t, pgstore.New(w.app.Catalog).SetRole(w.ctx, w.org, "fan"))

	_, err := w.svc.Staff(w.ctx, w.event, w.org)
	require.ErrorIs(t, err, entry.ErrNotStaff, "the door: scans, sync, counts and the scan bundle")
	_, err = w.svc.SetSettings(w.ctx, w.event, w.org, entry.Settings{TransfersAllowed: true, MaxTransfers: 1})
	require.ErrorIs(t, err, entry.ErrNotOwner)
	_, _, err = w.svc.Grant(w.ctx, w.event, w.org, "fan@example.com")
	require.ErrorIs(t, err, entry.ErrNotOwner)
	_, err = w.svc.DoorStaff(w.ctx, w.event, w.org)
	require.ErrorIs(t, err, entry.ErrNotOwner)
	require.ErrorIs(t, w.svc.Revoke(w.ctx, w.event, w.org, 1), entry.ErrNotOwner)
	_, err = w.svc.Staff(w.ctx, w.event, w.staff)
	require.NoError(t, err, "the staff they granted keep working: the grant is the event's")

	require.NoError(t, pgstore.New(w.app.Catalog).SetRole(w.ctx, w.org, "organizer"))
	d, err := w.svc.Staff(w.ctx, w.event, w.org)
	require.NoError(t, err, "promoted again, at the next request too")
	require.True(t, d.Organizer)
}

// TestForgedCodesAllGetOneAnswer: a door worker forging codes (any ticket
// id, any generation, a made-up signature) learned which ticket ids exist
// on the whole platform, which were transferred (generation behind) and
// how far (generation ahead): the answers differed. Every code whose
// signature does not verify now gets the same bytes, whatever the ticket.
func TestForgedCodesAllGetOneAnswer(t *testing.T) {
	w := newWorld(t)
	_, _, err := w.svc.Grant(w.ctx, w.other, w.org, "door@example.com")
	require.NoError(t, err)
	friend := w.account(t, "friend@example.com", "Frida Friend")
	mine := w.sell(t, w.event, w.fan, 3)
	other := w.sell(t, w.other, w.fan, 1)[0]
	transferred := mine[1]
	require.NoError(t, w.svc.Transfer(w.ctx, transferred, w.fan, "friend@example.com"))
	require.Equal(t, entry.Admitted, w.scan(t, w.event, "North", "used", w.codeOf(t, w.fan, mine[2])).Outcome)
	refunded := w.sell(t, w.event, w.fan, 1)[0]
	w.codeOf(t, w.fan, refunded)
	_, err = w.pool.Exec(w.ctx, `UPDATE orders SET status = 'refunded' WHERE id = (SELECT order_id FROM tickets WHERE id = $1)`, refunded)
	require.NoError(t, err)
	w.codeOf(t, friend, transferred)
	w.codeOf(t, w.fan, other)
	unkeyed := w.sell(t, w.event, friend, 1)[0] // bought, never shown: no key yet

	sig := base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(make([]byte, 64))
	step := entry.StepAt(w.now)
	forge := func(ticket int64, gen int) string { return fmt.Sprintf("R1.%d.%d.%d.%s", ticket, gen, step, sig) }
	codes := map[string]string{
		"valid ticket":              forge(mine[0], 1),
		"generation ahead":          forge(mine[0], 2),
		"far ahead":                 forge(mine[0], 1000),
		"transferred, old gen":      forge(transferred, 1),
		"transferred, current gen":  forge(transferred, 2),
		"used":                      forge(mine[2], 1),
		"refunded":                  forge(refunded, 1),
		"other event":               forge(other, 1),
		"no key yet":                forge(unkeyed, 1),
		"unknown ticket":            forge(other+1000, 1),
		"unknown shard":             forge(1<<50, 1),
		"printed code of a ticket":  fmt.Sprintf("S1.%d.1.%s", mine[0], sig),
		"printed code of no ticket": fmt.Sprintf("S1.%d.1.%s", other+1000, sig),
	}
	for _, event := range []int64{w.event, w.other} {
		answers := map[string][]string{}
		for what, code := range codes {
			b, err := json.Marshal(w.scan(t, event, "North", "forged "+what, code))
			require.NoError(t, err)
			answers[string(b)] = append(answers[string(b)], what)
		}
		require.Len(t, answers, 1, "event %d: forged codes answered differently: %v", event, answers)
		for answer := range answers {
			require.Contains(t, answer, `"outcome":"invalid"`)
			require.NotContains(t, answer, "ticket_id")
		}
	}
}

// TestCancelledEventsCloseTheDoorAtOnce: the catalog commits a cancel and
// the step that asks the refunds on the shard never runs (it failed, or
// the process died), and for the second event the status copy to the
// shard fails too. The door read the shard's refund count alone: the
// tickets kept admitting, kept their place in the scan bundle and could
// be transferred until the refund step ran.
func TestCancelledEventsCloseTheDoorAtOnce(t *testing.T) {
	w := newWorld(t)
	friend := w.account(t, "friend@example.com", "Frida Friend")
	_, _, err := w.svc.Grant(w.ctx, w.other, w.org, "door@example.com")
	require.NoError(t, err)
	for _, c := range []struct {
		name      string
		event     int64
		copyFails bool
	}{{"refund step not run", w.event, false}, {"status copy failed too", w.other, true}} {
		tickets := w.sell(t, c.event, w.fan, 3)
		codes := []string{w.codeOf(t, w.fan, tickets[0]), w.codeOf(t, w.fan, tickets[1])}
		letCopiesThrough := func() {}
		if c.copyFails {
			letCopiesThrough = apptest.RefuseWrites(t, w.pool, "event_status")
		}
		_, err := w.app.Organizer.ChangeStatus(w.ctx, w.org, c.event, nil, string(event.Cancelled))
		require.NoError(t, err, c.name)
		var asked, copied int
		require.NoError(t, w.pool.QueryRow(w.ctx, `SELECT (SELECT count(*) FROM cancel_refund_counts WHERE event_id = $1),
			(SELECT count(*) FROM event_status WHERE event_id = $1 AND status = 'cancelled')`, c.event).Scan(&asked, &copied))
		require.Zero(t, asked, "%s: the refunds were never asked", c.name)
		require.Equal(t, !c.copyFails, copied == 1, "%s: the shard's copy of the status", c.name)

		r := w.scan(t, c.event, "North", c.name, codes[0])
		require.Equal(t, entry.Void, r.Outcome, "%s: %s", c.name, r.Message)
		require.Contains(t, r.Message, "cancelled")
		res, err := w.svc.Sync(w.ctx, w.door(t, c.event), "Offline", []entry.Scan{{ID: c.name, Code: codes[1], At: w.now}})
		require.NoError(t, err)
		require.Equal(t, entry.Void, res[0].Outcome, "%s: %s", c.name, res[0].Message)
		b, err := w.svc.Bundle(w.ctx, w.door(t, c.event))
		require.NoError(t, err)
		require.Len(t, b.Tickets, 3)
		for _, bt := range b.Tickets {
			require.True(t, strings.Contains(bt.Void, "cancelled"), "%s: bundle ticket %d admits offline (void %q)", c.name, bt.ID, bt.Void)
		}
		err = w.svc.Transfer(w.ctx, tickets[2], w.fan, "friend@example.com")
		require.ErrorIs(t, err, entry.ErrNoTransfer, c.name)
		require.ErrorContains(t, err, "cancelled")
		_, err = w.svc.Ticket(w.ctx, friend, tickets[2])
		require.ErrorIs(t, err, entry.ErrNotFound, "%s: the ticket stayed the fan's", c.name)
		if !c.copyFails {
			tk, err := w.svc.Ticket(w.ctx, w.fan, tickets[2])
			require.NoError(t, err)
			require.Equal(t, entry.TicketVoid, tk.Status, "the ticket page, once the shard has the status copy")
			require.Empty(t, tk.Codes)
		}
		letCopiesThrough() // not before: the outbox worker would deliver the copy
	}
}
