package api

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/catraca/catraca/shared/fairness"
	"github.com/catraca/catraca/shared/problem"
	"github.com/catraca/catraca/shared/risk"
	"github.com/catraca/catraca/shared/shardstore"
	"github.com/catraca/catraca/shared/token"
)

// Linked accounts (docs/fairness.md): the device cookie, the session
// check of blocks and velocity flags, and the organizer's console of
// clusters, with its block, unblock and void actions.

// The device identifier (risk.DeviceCookie) is a random id the API sets at
// sign-up and log-in when the browser has none, read back at the next.
// Nothing is read from the browser to make it (no fingerprinting).

// deviceCookieAge is as long as browsers keep a cookie (400 days).
const deviceCookieAge = 400 * 24 * time.Hour

// seeDevice records the device an account signs up or logs in from,
// and refuses a blocked account. It returns the device cookie to set
// (after the session's): the browser's, or a new one if it had none (or
// one we did not make).
func (s *Server) seeDevice(r *http.Request, account int64) (*http.Cookie, error) {
	if s.fair == nil {
		return nil, nil
	}
	device := ""
	if c, err := r.Cookie(risk.DeviceCookie); err == nil && fairness.ValidDeviceID(c.Value) {
		device = c.Value
	} else {
		device = fairness.NewDeviceID()
	}
	cookie := &http.Cookie{
		Name: risk.DeviceCookie, Value: device, Path: "/", MaxAge: int(deviceCookieAge.Seconds()),
		HttpOnly: true, Secure: isHTTPS(r), SameSite: http.SameSiteLaxMode,
	}
	blocked, err := s.fair.SeenDevice(r.Context(), account, device)
	if err != nil {
		return nil, err
	}
	if blocked {
		// Restores the copy sessions read if Redis lost it.
		if err := s.fair.Reblock(r.Context(), account); err != nil {
			s.log.Warn("block not copied to redis", "account", account, "err", err)
		}
		return nil, errBlocked
	}
	return cookie, nil
}

var errBlocked = problem.New(http.StatusForbidden, "account-blocked",
	"This account is blocked: an event organizer found it linked to other accounts buying more tickets than one fan may. "+
		"If this is a mistake, write to the organizer of your event; they can unblock it.")

// checkedSession is session, also telling whether the account is over
// the velocity threshold. The revocation, the block and the flag are in
// the account's Redis slot: one MGET, as many round trips as the EXISTS
// it replaced. When Redis is down it is skipped (fail open, like the
// admission gate), so buying goes on through a Redis outage.
func (s *Server) checkedSession(r *http.Request) (token.Claims, bool, error) {
	c, err := s.signedSession(r)
	if err != nil {
		return c, false, err
	}
	vals, err := s.redis.MGet(r.Context(), s.revokedKey(c), fairness.BlockedKey(s.cfg.RedisPrefix, c.Account),
		fairness.FlagKey(s.cfg.RedisPrefix, c.Account)).Result()
	switch {
	case err != nil:
		s.log.Warn("session revocation check skipped", "err", err)
		return c, false, nil
	case vals[0] != nil:
		return token.Claims{}, false, errSessionExpired
	case vals[1] != nil:
		return token.Claims{}, false, errBlocked
	}
	return c, s.fair != nil && s.fair.Flagged(vals[2]), nil
}

// unflaggedSession is session for holds: an account over the velocity
// threshold may not take a new hold until its window has passed.
func (s *Server) unflaggedSession(r *http.Request) (token.Claims, error) {
	c, flagged, err := s.checkedSession(r)
	if err == nil && flagged {
		p := problem.New(http.StatusTooManyRequests, "purchase-velocity",
			fmt.Sprintf("This account, its card or its device bought tickets more often than a fan does within %s, across events, "+
				"so new holds are paused for now. If this is a mistake, write to the organizer of your event.", humanWindow(s.fair.Window())))
		return token.Claims{}, p.RetryIn(time.Hour)
	}
	return c, err
}

func humanWindow(d time.Duration) string {
	if d >= 48*time.Hour && d%(24*time.Hour) == 0 {
		return fmt.Sprintf("%d days", d/(24*time.Hour))
	}
	return d.String()
}

func (s *Server) fairnessRoutes() {
	s.route("GET /api/organizer/linked-accounts", s.linkedAccounts)
	s.route("POST /api/organizer/linked-accounts/{id}/block", s.blockAccount)
	s.route("POST /api/organizer/linked-accounts/{id}/unblock", s.unblockAccount)
	s.route("POST /api/organizer/linked-orders/{id}/void", s.voidOrder)
}

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
func (s *Server) linkedAccounts(w http.ResponseWriter, r *http.Request) error {
	sess, err := s.organizerSession(r)
	if err != nil {
		return err
	}
	v, err := s.linkedView(r.Context(), sess.Account)
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, v)
	return nil
}

func (s *Server) linkedView(ctx context.Context, organizerID int64) (linkedView, error) {
	v := linkedView{Clusters: []cluster{}, Flagged: []linkedMember{}, Audit: []auditLine{}}
	if s.fair == nil {
		return v, nil
	}
	events, err := s.organizer.EventIDs(ctx, organizerID)
	if err != nil || len(events) == 0 {
		return v, err
	}
	bought := map[int64][]paidOrders{} // account → its paid orders per event
	stores := shardstore.Open(s.shards)
	for _, id := range stores.IDs() {
		st, err := stores.Reader(id)
		if err != nil {
			return v, err
		}
		rows, err := st.EventBuyers(ctx, events)
		if err != nil {
			return v, err
		}
		for _, b := range rows {
			bought[b.Account] = append(bought[b.Account], paidOrders{EventID: b.EventID, Tickets: b.Tickets, Orders: b.Orders})
		}
	}
	buyers := slicesKeys(bought)
	clusters, err := s.fair.Clusters(ctx, buyers)
	if err != nil {
		return v, err
	}
	everyone := slices.Clone(buyers)
	for _, ms := range clusters {
		everyone = append(everyone, ms...)
	}
	slices.Sort(everyone)
	everyone = slices.Compact(everyone)
	people, err := s.organizer.Buyers(ctx, everyone)
	if err != nil {
		return v, err
	}
	blocks, err := s.fair.Blocks(ctx, everyone)
	if err != nil {
		return v, err
	}
	flags, err := s.fair.Flags(ctx, everyone)
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
			e, err := s.eventCache.Get(ctx, eventID)
			if err != nil {
				return v, err
			}
			ce := clusterEvent{EventID: eventID, Name: e.Name, Tickets: held[eventID], Limit: e.MaxPerAccount, Over: held[eventID] > e.MaxPerAccount}
			c.OverLimit = c.OverLimit || ce.Over
			c.Events = append(c.Events, ce)
		}
		if c.Evidence, err = s.fair.Evidence(ctx, ms); err != nil {
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
	log, err := s.fair.Audit(ctx, organizerID, everyone, 100)
	if err != nil {
		return v, err
	}
	var ids []int64
	for _, e := range log {
		ids = append(ids, e.Actor, e.Account)
	}
	if people, err = s.organizer.Buyers(ctx, ids); err != nil {
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
	if err := decode(r, &body); err != nil {
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
func (s *Server) linkedAccount(r *http.Request) (token.Claims, int64, string, any, error) {
	sess, id, err := s.organizerAndID(r)
	if err != nil {
		return sess, 0, "", nil, err
	}
	reason, err := readReason(r)
	if err != nil {
		return sess, 0, "", nil, err
	}
	if s.fair == nil {
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
func (s *Server) blockAccount(w http.ResponseWriter, r *http.Request) error {
	sess, id, reason, evidence, err := s.linkedAccount(r)
	if err != nil {
		return err
	}
	if err := s.fair.Block(r.Context(), sess.Account, id, reason, evidence); err != nil {
		return err
	}
	return s.answerLinked(w, r, sess)
}

// unblockAccount serves POST /api/organizer/linked-accounts/{id}/unblock:
// the appeal's answer.
func (s *Server) unblockAccount(w http.ResponseWriter, r *http.Request) error {
	sess, id, reason, _, err := s.linkedAccount(r)
	if err != nil {
		return err
	}
	if err := s.fair.Unblock(r.Context(), sess.Account, id, reason); err != nil {
		return err
	}
	return s.answerLinked(w, r, sess)
}

// voidOrder serves POST /api/organizer/linked-orders/{id}/void: the
// console's refund (the same path as POST /api/orders/{id}/refund),
// logged with the evidence against the buyer.
func (s *Server) voidOrder(w http.ResponseWriter, r *http.Request) error {
	sess, d, err := s.ownOrder(r)
	if err != nil {
		return err
	}
	reason, err := readReason(r)
	if err != nil {
		return err
	}
	if s.fair == nil {
		return errNoLinkedAccount
	}
	cid, members, err := s.fair.Cluster(r.Context(), d.BuyerID)
	if err != nil {
		return err
	}
	evidence, err := s.fair.Evidence(r.Context(), members)
	if err != nil {
		return err
	}
	if _, err := s.orders.Refund(r.Context(), d.ID, sess.Account); err != nil {
		return refundError(err)
	}
	if err := s.fair.Voided(r.Context(), sess.Account, d.BuyerID, d.ID, reason,
		map[string]any{"cluster": cid, "members": len(members), "evidence": evidence, "tickets": len(d.Tickets)}); err != nil {
		return err
	}
	return s.answerLinked(w, r, sess)
}

func (s *Server) answerLinked(w http.ResponseWriter, r *http.Request, sess token.Claims) error {
	v, err := s.linkedView(r.Context(), sess.Account)
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, v)
	return nil
}
