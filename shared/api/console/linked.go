package console

import (
	"context"
	"net/http"
	"slices"
	"strings"

	"github.com/catraca/catraca/shared/api/web"
	"github.com/catraca/catraca/shared/fairness"
	"github.com/catraca/catraca/shared/order"
	"github.com/catraca/catraca/shared/problem"
	"github.com/catraca/catraca/shared/token"
)

// Linked accounts (docs/fairness.md): the organizer's console of the
// clusters of linked accounts among the buyers of their events and of the
// accounts flagged by velocity, with its block, unblock and void actions.
// The device cookie that links accounts is set by the session group; the
// session check of blocks and flags is web.Auth's.

// linkedMember is an account in the console's view.
type linkedMember struct {
	ID       int64           `json:"id"`
	Email    string          `json:"email"`
	Name     string          `json:"name"`
	Blocked  *fairness.Block `json:"blocked,omitempty"`
	Velocity *fairness.Flag  `json:"velocity,omitempty"`
	Orders   []paidOrders    `json:"orders"`
}

// paidOrders are an account's paid orders of one of the organizer's events.
type paidOrders struct {
	EventID int64   `json:"event_id"`
	Tickets int     `json:"tickets"`
	Orders  []int64 `json:"order_ids"`
}

// clusterEvent is what a cluster holds of one event, against its limit.
type clusterEvent struct {
	EventID int64  `json:"event_id"`
	Name    string `json:"name"`
	Tickets int    `json:"tickets"`
	Limit   int    `json:"limit"`
	Over    bool   `json:"over_limit"`
}

type cluster struct {
	ID        int64             `json:"id"`
	OverLimit bool              `json:"over_limit"`
	Members   []linkedMember    `json:"members"`
	Events    []clusterEvent    `json:"events"`
	Evidence  fairness.Evidence `json:"evidence"`
}

type linkedView struct {
	Clusters []cluster      `json:"clusters"`
	Flagged  []linkedMember `json:"flagged"`
	Audit    []auditLine    `json:"audit"`
}

// auditLine is an audit entry with who took it and whom it concerned,
// by email.
type auditLine struct {
	fairness.Entry
	ActorEmail   string `json:"actor_email"`
	AccountEmail string `json:"account_email"`
}

// linkedAccounts serves GET /api/organizer/linked-accounts: the clusters
// of linked accounts among the buyers of the caller's events (over the
// limit first), the accounts flagged by velocity, with the evidence, and
// the audit log of what was done about them.
func (s *Handlers) linkedAccounts(w http.ResponseWriter, r *http.Request) error {
	sess, err := s.organizerSession(r)
	if err != nil {
		return err
	}
	return s.answerLinked(w, r, sess)
}

func (s *Handlers) linkedView(ctx context.Context, organizerID int64) (linkedView, error) {
	v := linkedView{Clusters: []cluster{}, Flagged: []linkedMember{}, Audit: []auditLine{}}
	if s.Fairness == nil {
		return v, nil
	}
	events, err := s.Organizer.EventIDs(ctx, organizerID)
	if err != nil || len(events) == 0 {
		return v, err
	}
	bought := map[int64][]paidOrders{} // account → its paid orders per event
	rows, err := s.Organizer.EventBuyers(ctx, events)
	if err != nil {
		return v, err
	}
	for _, b := range rows {
		bought[b.Account] = append(bought[b.Account], paidOrders{EventID: b.EventID, Tickets: b.Tickets, Orders: b.Orders})
	}
	buyers := slicesKeys(bought)
	clusters, err := s.Fairness.Clusters(ctx, buyers)
	if err != nil {
		return v, err
	}
	everyone := slices.Clone(buyers)
	for _, ms := range clusters {
		everyone = append(everyone, ms...)
	}
	slices.Sort(everyone)
	everyone = slices.Compact(everyone)
	people, err := s.Organizer.Buyers(ctx, everyone)
	if err != nil {
		return v, err
	}
	blocks, err := s.Fairness.Blocks(ctx, everyone)
	if err != nil {
		return v, err
	}
	flags, err := s.Fairness.Flags(ctx, everyone)
	if err != nil {
		return v, err
	}
	memberOf := func(id int64) linkedMember {
		m := linkedMember{ID: id, Email: people[id].Email, Name: people[id].Name, Orders: bought[id]}
		if m.Orders == nil {
			m.Orders = []paidOrders{}
		}
		if b, ok := blocks[id]; ok {
			m.Blocked = &b
		}
		if f, ok := flags[id]; ok {
			m.Velocity = &f
		}
		return m
	}
	inCluster := map[int64]bool{}
	for id, ms := range clusters {
		c := cluster{ID: id, Events: []clusterEvent{}}
		held := map[int64]int{}
		for _, a := range ms {
			inCluster[a] = true
			c.Members = append(c.Members, memberOf(a))
			for _, p := range bought[a] {
				held[p.EventID] += p.Tickets
			}
		}
		for _, eventID := range slicesKeys(held) {
			e, err := s.EventCache.Get(ctx, eventID)
			if err != nil {
				return v, err
			}
			ce := clusterEvent{EventID: eventID, Name: e.Name, Tickets: held[eventID], Limit: e.MaxPerAccount, Over: held[eventID] > e.MaxPerAccount}
			c.OverLimit = c.OverLimit || ce.Over
			c.Events = append(c.Events, ce)
		}
		if c.Evidence, err = s.Fairness.Evidence(ctx, ms); err != nil {
			return v, err
		}
		v.Clusters = append(v.Clusters, c)
	}
	slices.SortFunc(v.Clusters, func(a, b cluster) int {
		if a.OverLimit != b.OverLimit {
			if a.OverLimit {
				return -1
			}
			return 1
		}
		return int(a.ID - b.ID)
	})
	for _, id := range buyers {
		if _, flagged := flags[id]; flagged && !inCluster[id] {
			v.Flagged = append(v.Flagged, memberOf(id))
		}
	}
	log, err := s.Fairness.Audit(ctx, organizerID, everyone, 100)
	if err != nil {
		return v, err
	}
	var ids []int64
	for _, e := range log {
		ids = append(ids, e.Actor, e.Account)
	}
	if people, err = s.Organizer.Buyers(ctx, ids); err != nil {
		return v, err
	}
	for _, e := range log {
		v.Audit = append(v.Audit, auditLine{Entry: e, ActorEmail: people[e.Actor].Email, AccountEmail: people[e.Account].Email})
	}
	return v, nil
}

func slicesKeys[V any](m map[int64]V) []int64 {
	out := make([]int64, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// actionBody is why an organizer blocks, unblocks or voids: kept in the
// audit log.
type actionBody struct {
	Reason string `json:"reason"`
}

func readReason(r *http.Request) (string, error) {
	var body actionBody
	if err := web.Decode(r, &body); err != nil {
		return "", err
	}
	reason := strings.TrimSpace(body.Reason)
	if reason == "" || len(reason) > 500 {
		return "", problem.New(http.StatusBadRequest, "invalid-field",
			`Say why in "reason" (1 to 500 characters): it is kept in the audit log with your name.`)
	}
	return reason, nil
}

// linkedAccount reads the organizer, the {id} account and the reason of
// an action on it. The account must be in the organizer's view (a buyer
// of their events, or linked to one), else it is not found: an organizer
// acts only on their own buyers.
func (s *Handlers) linkedAccount(r *http.Request) (token.Claims, int64, string, any, error) {
	sess, id, err := s.organizerAndID(r)
	if err != nil {
		return sess, 0, "", nil, err
	}
	reason, err := readReason(r)
	if err != nil {
		return sess, 0, "", nil, err
	}
	if s.Fairness == nil {
		return sess, 0, "", nil, errNoLinkedAccount
	}
	v, err := s.linkedView(r.Context(), sess.Account)
	if err != nil {
		return sess, 0, "", nil, err
	}
	for _, c := range v.Clusters {
		for _, m := range c.Members {
			if m.ID == id {
				return sess, id, reason, map[string]any{"cluster": c.ID, "members": len(c.Members), "events": c.Events, "evidence": c.Evidence}, nil
			}
		}
	}
	for _, m := range v.Flagged {
		if m.ID == id {
			return sess, id, reason, map[string]any{"velocity": m.Velocity, "orders": m.Orders}, nil
		}
	}
	return sess, 0, "", nil, errNoLinkedAccount
}

var errNoLinkedAccount = problem.New(http.StatusNotFound, "not-found",
	"No such account among the linked or flagged buyers of your events.")

// blockAccount serves POST /api/organizer/linked-accounts/{id}/block.
func (s *Handlers) blockAccount(w http.ResponseWriter, r *http.Request) error {
	sess, id, reason, evidence, err := s.linkedAccount(r)
	if err != nil {
		return err
	}
	if err := s.Fairness.Block(r.Context(), sess.Account, id, reason, evidence); err != nil {
		return err
	}
	return s.answerLinked(w, r, sess)
}

// unblockAccount serves POST /api/organizer/linked-accounts/{id}/unblock:
// the appeal's answer.
func (s *Handlers) unblockAccount(w http.ResponseWriter, r *http.Request) error {
	sess, id, reason, _, err := s.linkedAccount(r)
	if err != nil {
		return err
	}
	if err := s.Fairness.Unblock(r.Context(), sess.Account, id, reason); err != nil {
		return err
	}
	return s.answerLinked(w, r, sess)
}

// voidOrder serves POST /api/organizer/linked-orders/{id}/void: the
// console's refund (the same path as POST /api/orders/{id}/refund),
// logged with the evidence against the buyer.
func (s *Handlers) voidOrder(w http.ResponseWriter, r *http.Request) error {
	sess, d, err := s.ownOrder(r)
	if err != nil {
		return err
	}
	reason, err := readReason(r)
	if err != nil {
		return err
	}
	if s.Fairness == nil {
		return errNoLinkedAccount
	}
	cid, members, err := s.Fairness.Cluster(r.Context(), d.BuyerID)
	if err != nil {
		return err
	}
	evidence, err := s.Fairness.Evidence(r.Context(), members)
	if err != nil {
		return err
	}
	// Once: a void racing another (or a refund) is refused, not answered
	// with the other's outcome, so it is audited once.
	if _, err := s.Orders.RefundTickets(r.Context(), d.ID, order.RefundAsk{By: sess.Account, Once: true}); err != nil {
		return refundError(err)
	}
	if err := s.Fairness.Voided(r.Context(), sess.Account, d.BuyerID, d.ID, reason,
		map[string]any{"cluster": cid, "members": len(members), "evidence": evidence, "tickets": len(d.Tickets)}); err != nil {
		return err
	}
	return s.answerLinked(w, r, sess)
}

func (s *Handlers) answerLinked(w http.ResponseWriter, r *http.Request, sess token.Claims) error {
	v, err := s.linkedView(r.Context(), sess.Account)
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	web.WriteJSON(w, http.StatusOK, v)
	return nil
}
