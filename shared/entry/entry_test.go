package entry_test

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/shared/config"
	"github.com/catraca/catraca/shared/entry"
	"github.com/catraca/catraca/shared/shardstore"
)

func TestCheckInAnswers(t *testing.T) {
	w := newWorld(t)
	tickets := w.sell(t, w.event, w.fan, 2)
	code := w.codeOf(t, w.fan, tickets[0])

	r := w.scan(t, w.event, "North 1", "s1", code)
	require.Equal(t, entry.Admitted, r.Outcome, r.Message)
	require.Equal(t, "Fabio Fan", r.Name)
	require.Contains(t, r.Seat, "seat")
	require.Equal(t, entry.Admitted, w.scan(t, w.event, "North 1", "s1", code).Outcome, "a retried scan gets the same answer")
	r = w.scan(t, w.event, "South 2", "s2", code)
	require.Equal(t, entry.AlreadyUsed, r.Outcome)
	require.Equal(t, "North 1", r.FirstGate)
	require.Contains(t, r.Message, "gate North 1")

	code2 := w.codeOf(t, w.fan, tickets[1])
	atOther, err := w.svc.Staff(w.ctx, w.other, w.org)
	require.NoError(t, err)
	wrong, err := w.svc.Check(w.ctx, atOther, entry.Scan{Gate: "North 1", ID: "s3", Code: code2})
	require.NoError(t, err)
	require.Equal(t, entry.WrongEvent, wrong.Outcome)
	// The other event may be another organizer's: its door learns
	// nothing about the holder.
	require.Empty(t, wrong.Name)
	require.Empty(t, wrong.Seat)

	// A screenshot: the code of now, shown a minute later.
	w.now = w.now.Add(time.Minute)
	r = w.scan(t, w.event, "North 1", "s4", code2)
	require.Equal(t, entry.Expired, r.Outcome)
	// A phone clock a minute ahead.
	w.now = w.now.Add(-2 * time.Minute)
	require.Equal(t, entry.NotValidYet, w.scan(t, w.event, "North 1", "s5", code2).Outcome)
	w.now = w.now.Add(time.Minute)

	// Doors not open yet.
	doors := w.now.Add(time.Hour)
	_, err = w.svc.SetSettings(w.ctx, w.event, w.org, entry.Settings{DoorsOpenAt: &doors, TransfersAllowed: true, MaxTransfers: 1})
	require.NoError(t, err)
	r = w.scan(t, w.event, "North 1", "s6", code2)
	require.Equal(t, entry.NotValidYet, r.Outcome)
	require.Contains(t, r.Message, "doors open")
	_, err = w.svc.SetSettings(w.ctx, w.event, w.staff, entry.Settings{})
	require.ErrorIs(t, err, entry.ErrNotOwner, "door staff cannot change the rules")

	// Forged: a valid code with its signature changed, and garbage.
	forged := code2[:len(code2)-4] + "AAAA"
	if forged == code2 {
		forged = code2[:len(code2)-4] + "BBBB"
	}
	require.Equal(t, entry.Invalid, w.scan(t, w.event, "North 1", "s7", forged).Outcome)
	require.Equal(t, entry.Invalid, w.scan(t, w.event, "North 1", "s8", "https://example.com").Outcome)

	// A printed code is refused unless the event allows them.
	_, err = w.svc.SetSettings(w.ctx, w.event, w.org, entry.Settings{StaticCodes: true})
	require.NoError(t, err)
	mine, err := w.svc.Page(w.ctx, w.fan, "", entry.MaxPage)
	require.NoError(t, err)
	tk, err := w.svc.Ticket(w.ctx, w.fan, mine.Tickets[1].ID)
	require.NoError(t, err)
	static := tk.Static
	require.NotEmpty(t, static)
	_, err = w.svc.SetSettings(w.ctx, w.event, w.org, entry.Settings{})
	require.NoError(t, err)
	require.Equal(t, entry.Invalid, w.scan(t, w.event, "North 1", "s9", static).Outcome)
	_, err = w.svc.SetSettings(w.ctx, w.event, w.org, entry.Settings{StaticCodes: true})
	require.NoError(t, err)
	require.Equal(t, entry.Admitted, w.scan(t, w.event, "North 1", "s10", static).Outcome)

	// Refunded: void.
	refunded := w.sell(t, w.event, w.fan, 1)[0]
	code3 := w.codeOf(t, w.fan, refunded)
	_, err = w.pool.Exec(w.ctx, `UPDATE orders SET status = 'refunded' WHERE id = (SELECT order_id FROM tickets WHERE id = $1)`, refunded)
	require.NoError(t, err)
	r = w.scan(t, w.event, "North 1", "s11", code3)
	require.Equal(t, entry.Void, r.Outcome)
	require.Contains(t, r.Message, "refunded")

	_, err = w.svc.Check(w.ctx, w.door(t, w.event), entry.Scan{ID: "s12", Code: code3})
	require.ErrorIs(t, err, entry.ErrBadGate)
	st, err := w.svc.Stats(w.ctx, w.event)
	require.NoError(t, err)
	require.Equal(t, int64(2), st.CheckedIn)
	require.Equal(t, int64(2), st.Expected, "the refunded ticket is not expected")

	d, err := w.svc.Staff(w.ctx, w.event, w.staff)
	require.NoError(t, err)
	require.False(t, d.Organizer)
	d, err = w.svc.Staff(w.ctx, w.event, w.org)
	require.NoError(t, err)
	require.True(t, d.Organizer)
	_, err = w.svc.Staff(w.ctx, w.event, w.fan)
	require.ErrorIs(t, err, entry.ErrNotStaff)
	_, err = w.svc.Staff(w.ctx, w.other, w.staff)
	require.ErrorIs(t, err, entry.ErrNotStaff, "granted per event")
	_, err = w.svc.Staff(w.ctx, 1<<40, w.staff)
	require.ErrorIs(t, err, entry.ErrNotStaff, "an event that does not exist, alike")
}

// TestTwoGateRace has many gates scan one ticket at the same instant.
// First the check-then-insert a straightforward implementation would do,
// on a table without the primary key: every gate admits. Then the real
// check-in: exactly one gate admits, every other one says already used.
func TestTwoGateRace(t *testing.T) {
	w := newWorld(t)
	const gates = 32

	t.Run("without the guard, every gate admits", func(t *testing.T) {
		_, err := w.pool.Exec(w.ctx, `CREATE TABLE naive_checkins (ticket_id BIGINT, gate TEXT)`)
		require.NoError(t, err)
		var read, wg sync.WaitGroup
		read.Add(gates)
		admitted := make(chan string, gates)
		for g := range gates {
			wg.Go(func() {
				var n int
				err := w.pool.QueryRow(w.ctx, `SELECT count(*) FROM naive_checkins WHERE ticket_id = 1`).Scan(&n)
				read.Done()
				read.Wait() // every gate has looked before any writes: the race window, made certain
				if err == nil && n == 0 {
					if _, err := w.pool.Exec(w.ctx, `INSERT INTO naive_checkins VALUES (1, $1)`, fmt.Sprint(g)); err == nil {
						admitted <- fmt.Sprint(g)
					}
				}
			})
		}
		wg.Wait()
		require.Len(t, admitted, gates, "the unguarded check-in admitted one ticket at every gate")
	})

	t.Run("with the guard, one gate admits", func(t *testing.T) {
		for round := range 5 {
			ticket := w.sell(t, w.event, w.fan, 1)[0]
			code := w.codeOf(t, w.fan, ticket)
			results := make([]entry.Result, gates)
			errs := make([]error, gates)
			start := make(chan struct{})
			var wg sync.WaitGroup
			door := w.door(t, w.event)
			for g := range gates {
				wg.Go(func() {
					<-start
					results[g], errs[g] = w.svc.Check(w.ctx, door, entry.Scan{
						Gate: fmt.Sprintf("gate %d", g), ID: fmt.Sprintf("r%d-g%d", round, g), Code: code})
				})
			}
			began := time.Now()
			close(start)
			wg.Wait()
			t.Logf("round %d: %d simultaneous scans answered in %v", round, gates, time.Since(began))
			admitted, used := 0, 0
			var winner string
			for g := range gates {
				require.NoError(t, errs[g])
				switch results[g].Outcome {
				case entry.Admitted:
					admitted++
					winner = fmt.Sprintf("gate %d", g)
				case entry.AlreadyUsed:
					used++
				}
			}
			require.Equal(t, 1, admitted, "round %d: one admission", round)
			require.Equal(t, gates-1, used, "round %d: every other gate says already used", round)
			for g := range gates {
				if results[g].Outcome == entry.AlreadyUsed {
					require.Equal(t, winner, results[g].FirstGate)
				}
			}
			var rows int
			require.NoError(t, w.pool.QueryRow(w.ctx, `SELECT count(*) FROM checkins WHERE ticket_id = $1`, ticket).Scan(&rows))
			require.Equal(t, 1, rows)
		}
	})
}

// TestOfflineSync: two gates download the bundle, lose the network, and
// both admit the same ticket; at sync the first scan stays the admission
// and the other is a conflict the control room lists.
func TestOfflineSync(t *testing.T) {
	w := newWorld(t)
	tickets := w.sell(t, w.event, w.fan, 2)
	b, err := w.svc.Bundle(w.ctx, w.door(t, w.event))
	require.NoError(t, err)
	require.Len(t, b.Tickets, 2)
	require.Len(t, b.Tickets[0].Key, 32, "an Ed25519 public key: it verifies, it cannot sign")
	require.Equal(t, "Fabio Fan", b.Tickets[0].Name)

	code := w.codeOf(t, w.fan, tickets[0])
	other := w.codeOf(t, w.fan, tickets[1])
	first, second := w.now.Add(-10*time.Second), w.now.Add(-5*time.Second)
	// Gate B syncs first although gate A scanned first.
	res, err := w.svc.Sync(w.ctx, w.door(t, w.event), "B", []entry.Scan{{ID: "b1", Code: code, At: second}})
	require.NoError(t, err)
	require.Equal(t, entry.Admitted, res[0].Outcome)
	syncA := func() []entry.Result {
		res, err := w.svc.Sync(w.ctx, w.door(t, w.event), "A", []entry.Scan{{ID: "a1", Code: code, At: first}, {ID: "a2", Code: other, At: first}})
		require.NoError(t, err)
		return res
	}
	res = syncA()
	require.Equal(t, entry.Admitted, res[0].Outcome, res[0].Message)
	require.Equal(t, entry.Admitted, res[1].Outcome)
	require.Equal(t, entry.Admitted, syncA()[0].Outcome, "a repeated sync changes nothing")

	// B's scan, replayed, is the conflict now.
	res, err = w.svc.Sync(w.ctx, w.door(t, w.event), "B", []entry.Scan{{ID: "b1", Code: code, At: second}})
	require.NoError(t, err)
	require.Equal(t, entry.Conflict, res[0].Outcome)
	require.Equal(t, "A", res[0].FirstGate)

	st, err := w.svc.Stats(w.ctx, w.event)
	require.NoError(t, err)
	require.Equal(t, int64(2), st.CheckedIn)
	require.Len(t, st.Conflicts, 1)
	c := st.Conflicts[0]
	require.Equal(t, tickets[0], c.Ticket)
	require.Equal(t, "B", c.Gate)
	require.Equal(t, "A", c.FirstGate)
	require.True(t, c.FirstAt.Before(c.At))
	r := w.scan(t, w.event, "C", "c1", code)
	require.Equal(t, entry.AlreadyUsed, r.Outcome)
	require.Equal(t, "A", r.FirstGate)

	// A code scanned offline long ago is judged at its scan time, but a
	// screenshot is a screenshot then too.
	third := w.sell(t, w.event, w.fan, 1)[0]
	stale := w.codeOf(t, w.fan, third)
	res, err = w.svc.Sync(w.ctx, w.door(t, w.event), "A", []entry.Scan{{ID: "a3", Code: stale, At: w.now.Add(5 * time.Minute)}})
	require.NoError(t, err)
	require.Equal(t, entry.Admitted, res[0].Outcome, "a gate clock ahead of ours is taken as now")
}

// TestTransfer: the recipient's ticket gets a new key; the old holder's
// code is void at once; the organizer's limit holds.
func TestTransfer(t *testing.T) {
	w := newWorld(t)
	friend := w.account(t, "friend@example.com", "Frida Friend")
	w.account(t, "third@example.com", "Tito Third")
	ticket := w.sell(t, w.event, w.fan, 1)[0]
	old := w.codeOf(t, w.fan, ticket)

	var sent []entry.Sent
	ring, err := entry.NewRing(w.app.Config.TicketKey)
	require.NoError(t, err)
	w.svc = entry.New(w.app.Catalog, w.app.Shards, ring, entry.OnSent(func(_ context.Context, n entry.Sent) { sent = append(sent, n) }))
	w.svc.Now = func() time.Time { return w.now }
	require.ErrorIs(t, w.svc.Transfer(w.ctx, ticket, friend, "third@example.com"), entry.ErrNotFound, "only the holder can transfer")
	require.ErrorIs(t, w.svc.Transfer(w.ctx, ticket, friend, "nobody@example.com"), entry.ErrNotFound, "nor learn which emails have accounts")
	require.ErrorIs(t, w.svc.Transfer(w.ctx, ticket, w.fan, "nobody@example.com"), entry.ErrNoAccount)
	require.ErrorIs(t, w.svc.Transfer(w.ctx, ticket, w.fan, "FAN@example.com"), entry.ErrNoTransfer)

	require.NoError(t, w.svc.Transfer(w.ctx, ticket, w.fan, "Friend@Example.com"))
	require.Len(t, sent, 1, "the recipient is told once")
	require.Equal(t, "Frida Friend", sent[0].To.Name)
	require.Equal(t, "Fabio Fan", sent[0].From)
	require.Equal(t, 2, sent[0].Generation)
	require.Contains(t, sent[0].Seat, "seat")
	r := w.scan(t, w.event, "North 1", "t1", old)
	require.Equal(t, entry.Void, r.Outcome, r.Message)
	require.Contains(t, r.Message, "transferred")
	mine, err := w.svc.Page(w.ctx, w.fan, "", entry.MaxPage)
	require.NoError(t, err)
	require.Empty(t, mine.Tickets, "the ticket left the sender's page")
	_, err = w.svc.Ticket(w.ctx, w.fan, ticket)
	require.ErrorIs(t, err, entry.ErrNotFound, "and its codes are no longer the sender's")

	require.ErrorIs(t, w.svc.Transfer(w.ctx, ticket, friend, "third@example.com"), entry.ErrNoTransfer, "one transfer by default")
	_, err = w.svc.SetSettings(w.ctx, w.event, w.org, entry.Settings{TransfersAllowed: false, MaxTransfers: 5})
	require.NoError(t, err)
	require.ErrorContains(t, w.svc.Transfer(w.ctx, ticket, friend, "third@example.com"), "does not allow transfers")
	_, err = w.svc.SetSettings(w.ctx, w.event, w.org, entry.Settings{TransfersAllowed: true, MaxTransfers: 5})
	require.NoError(t, err)

	code := w.codeOf(t, friend, ticket)
	r = w.scan(t, w.event, "North 1", "t2", code)
	require.Equal(t, entry.Admitted, r.Outcome, r.Message)
	require.Equal(t, "Frida Friend", r.Name)
	require.ErrorContains(t, w.svc.Transfer(w.ctx, ticket, friend, "third@example.com"), "already used")
}

// TestKeyRotation: retiring a ring key voids the codes made under it; the
// holder's next look at the ticket page moves the ticket to the new key.
func TestKeyRotation(t *testing.T) {
	w := newWorld(t)
	ticket := w.sell(t, w.event, w.fan, 1)[0]
	old := w.codeOf(t, w.fan, ticket)
	ring, err := entry.NewRing([]config.Key{{ID: "next", Secret: []byte("a brand new ticket key for 2027")}})
	require.NoError(t, err)
	w.svc = entry.New(w.app.Catalog, w.app.Shards, ring)
	w.svc.Now = func() time.Time { return w.now }
	require.Equal(t, entry.Invalid, w.scan(t, w.event, "North 1", "k1", old).Outcome)
	fresh := w.codeOf(t, w.fan, ticket)
	require.NotEqual(t, old, fresh)
	require.Equal(t, entry.Admitted, w.scan(t, w.event, "North 1", "k2", fresh).Outcome)
}

// TestConflictsOfGatesSharingScanIDsAreAllListed: scan ids are each gate's
// own (1, 2, 3…), so two gates' losing offline scans can share an id, and
// so can one gate's scans of two tickets across devices. Each is its own
// conflict for the control room; only a replayed sync of the same scan is
// listed once.
func TestConflictsOfGatesSharingScanIDsAreAllListed(t *testing.T) {
	w := newWorld(t)
	tickets := w.sell(t, w.event, w.fan, 2)
	one, two := w.codeOf(t, w.fan, tickets[0]), w.codeOf(t, w.fan, tickets[1])
	first, later := w.now.Add(-10*time.Second), w.now.Add(-5*time.Second)
	sync := func(gate string, scans ...entry.Scan) {
		t.Helper()
		res, err := w.svc.Sync(w.ctx, w.door(t, w.event), gate, scans)
		require.NoError(t, err)
		for _, r := range res {
			require.Contains(t, []string{entry.Admitted, entry.Conflict}, r.Outcome, r.Message)
		}
	}
	sync("A", entry.Scan{ID: "1", Code: one, At: first}, entry.Scan{ID: "2", Code: two, At: first})
	sync("B", entry.Scan{ID: "1", Code: one, At: later})
	sync("C", entry.Scan{ID: "1", Code: one, At: later})
	sync("B", entry.Scan{ID: "1", Code: two, At: later})
	sync("B", entry.Scan{ID: "1", Code: one, At: later}) // a replay

	st, err := w.svc.Stats(w.ctx, w.event)
	require.NoError(t, err)
	require.Equal(t, int64(2), st.CheckedIn)
	var listed []string
	for _, c := range st.Conflicts {
		require.Equal(t, "A", c.FirstGate)
		listed = append(listed, c.Gate+":"+strconv.FormatInt(c.Ticket, 10))
	}
	require.ElementsMatch(t, []string{"B:" + strconv.FormatInt(tickets[0], 10), "C:" + strconv.FormatInt(tickets[0], 10),
		"B:" + strconv.FormatInt(tickets[1], 10)}, listed, "every losing scan is listed once")
}

// TestCancelledEventAdmitsNobody: a cancelled event's orders stay paid
// until the PSP refunds them (seconds through the outbox, or for good when
// the PSP refuses and the organizer has not asked again), and meanwhile
// its tickets admitted at the door and could be sent on.
func TestCancelledEventAdmitsNobody(t *testing.T) {
	w := newWorld(t)
	w.account(t, "friend@example.com", "Frida Friend")
	tickets := w.sell(t, w.event, w.fan, 2)
	code := w.codeOf(t, w.fan, tickets[0])
	st, err := w.app.Shards.Pool(1)
	require.NoError(t, err)
	_, err = shardstore.New(st).RequestEventRefunds(w.ctx, w.event, "event cancelled")
	require.NoError(t, err)

	r := w.scan(t, w.event, "North 1", "c1", code)
	require.Equal(t, entry.Void, r.Outcome, r.Message)
	require.Contains(t, r.Message, "cancelled")
	res, err := w.svc.Sync(w.ctx, w.door(t, w.event), "Offline 1", []entry.Scan{{ID: "c2", Code: code, At: w.now}})
	require.NoError(t, err)
	require.Equal(t, entry.Void, res[0].Outcome, "nor offline")
	mine, err := w.svc.Page(w.ctx, w.fan, "", entry.MaxPage)
	require.NoError(t, err)
	require.Len(t, mine.Tickets, 2)
	for _, tk := range mine.Tickets {
		require.Equal(t, entry.TicketVoid, tk.Status, "the ticket page shows no code")
		require.Empty(t, tk.Codes)
		tk, err := w.svc.Ticket(w.ctx, w.fan, tk.ID)
		require.NoError(t, err)
		require.Equal(t, entry.TicketVoid, tk.Status)
		require.Empty(t, tk.Codes, "nor when the fan opens it")
	}
	require.ErrorIs(t, w.svc.Transfer(w.ctx, tickets[1], w.fan, "friend@example.com"), entry.ErrNoTransfer)
	b, err := w.svc.Bundle(w.ctx, w.door(t, w.event))
	require.NoError(t, err)
	for _, bt := range b.Tickets {
		require.NotEmpty(t, bt.Void, "offline gates refuse it too")
	}
}

// TestRevokedStaffLoseTheDoors: the organizer's list shows each grant by
// email (a grant from before emails were kept by its account's), and a
// revocation closes the doors to that account at once, for the organizer
// only.
func TestRevokedStaffLoseTheDoors(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	_, err := w.pool.Exec(w.ctx, `UPDATE door_staff SET email = NULL WHERE account_id = $1`, w.staff)
	require.NoError(t, err)
	_, err = w.svc.DoorStaff(w.ctx, w.event, w.fan)
	require.ErrorIs(t, err, entry.ErrNotOwner)
	grants, err := w.svc.DoorStaff(w.ctx, w.event, w.org)
	require.NoError(t, err)
	require.Len(t, grants, 1)
	require.Equal(t, "door@example.com", grants[0].Email)

	require.ErrorIs(t, w.svc.Revoke(w.ctx, w.event, w.staff, grants[0].ID), entry.ErrNotOwner, "staff cannot revoke")
	require.ErrorIs(t, w.svc.Revoke(w.ctx, w.other, w.org, grants[0].ID), entry.ErrNoStaff, "a grant of another event")
	require.NoError(t, w.svc.Revoke(w.ctx, w.event, w.org, grants[0].ID))
	_, err = w.svc.Staff(w.ctx, w.event, w.staff)
	require.ErrorIs(t, err, entry.ErrNotStaff)
	require.ErrorIs(t, w.svc.Revoke(w.ctx, w.event, w.org, grants[0].ID), entry.ErrNoStaff)
	grants, err = w.svc.DoorStaff(w.ctx, w.event, w.org)
	require.NoError(t, err)
	require.Empty(t, grants)
}
