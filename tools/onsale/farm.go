package onsale

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"time"

	"github.com/catraca/catraca/shared/config"
	"github.com/catraca/catraca/shared/order"
	"github.com/catraca/catraca/shared/risk"
	"github.com/catraca/catraca/shared/token"
	"github.com/catraca/catraca/tools/fan"
	"github.com/catraca/catraca/tools/pspsim"
)

// Farm is a scalper farm among the fans: Bots accounts on a few Cards and
// Devices (cookie jars: they send the same device cookie), joining first,
// buying the most one account may and transferring every ticket to one
// collector account. Ordinary fans have their own card and device, but a
// FamilyShare of them pays with the card of the fan before them (a family
// sharing a card: what a per-card or linked-account rule may refuse).
type Farm struct {
	Bots, Cards, Devices int
	FamilyShare          float64
	// Solve answers a challenged join, for bots and fans alike (at CPU
	// speed, in this process); fan.SolvePoW when nil.
	Solve fan.Solver `json:"-"`
}

// Defense is one anti-scalping rule of the configuration. The farm run
// plays the same on-sale with every defense off, then on as production
// configures it by default; a new rule is one more line in Defenses.
type Defense struct {
	Name string
	// Switch is how production turns it off; "" when it cannot be (the
	// rule is then on in both phases, and the report says so).
	Switch string
	Off    func(*config.Config) `json:"-"`
	// On sets production's default where the test configuration
	// (testenv.BaseConfig) leaves the rule off; nil when it is on there.
	On func(*config.Config) `json:"-"`
}

// Defenses are the rules the farm run turns off in its first phase.
var Defenses = []Defense{
	{"per-card limit", "CATRACA_CARD_LIMIT=false", func(c *config.Config) { c.NoCardLimit = true }, nil},
	{"transfers in count against the recipient's limit", "", nil, nil},
	{"linked accounts (cluster limit)", "CATRACA_CLUSTER_LIMIT=false", func(c *config.Config) { c.NoClusterLimit = true }, nil},
	{"velocity across events", "CATRACA_VELOCITY_MAX=0", func(c *config.Config) { c.VelocityMax = 0 },
		func(c *config.Config) {
			c.VelocityMax, c.VelocityWindow = productionDeclines.VelocityMax, productionDeclines.VelocityWindow
		}},
	{"challenge at the door of the line", "CATRACA_CHALLENGE=off", func(c *config.Config) { c.ChallengeMode = "off" },
		func(c *config.Config) { c.Challenge = config.DefaultChallenge() }},
}

// productionDeclines is the fairness part of production's configuration
// with nothing set: its defaults.
var productionDeclines, _ = config.FromLookup[config.Declines](func(string) (string, bool) { return "", false })

// DefensesOff turns off every defense that can be.
func DefensesOff(c *config.Config) {
	for _, d := range Defenses {
		if d.Off != nil {
			d.Off(c)
		}
	}
}

// DefensesOn turns on every defense as production does by default.
func DefensesOn(c *config.Config) {
	for _, d := range Defenses {
		if d.On != nil {
			d.On(c)
		}
	}
}

// FarmResult is where the tickets ended and what the defenses cost the
// ordinary fans, counted from the shard at the end of the run.
type FarmResult struct {
	Bots, Cards, Devices int
	// FamilyFans pay with a card another fan also pays with.
	FamilyFans int
	// Tickets held at the end (the holder after transfers), by whom.
	FarmTickets      int64 `json:"farm_tickets"` // bots + collector
	BotTickets       int64 `json:"bot_tickets"`
	CollectorTickets int64 `json:"collector_tickets"`
	FanTickets       int64 `json:"fan_tickets"`
	// Unsold is what the inventory still has: seats not sold and standing
	// places not in a paid order.
	Unsold    int64   `json:"unsold"`
	FarmShare float64 `json:"farm_share"` // FarmTickets ÷ the event's tickets
	// BotsBought: bots with a paid order; BotsCardLimited: bots whose
	// payment was refunded by the per-card limit.
	BotsBought, BotsCardLimited int
	Transfers, TransfersRefused int64
	BotsChallenged              int
	// Ordinary fans: challenged at the join, and refused by a defense (a
	// payment refunded over the card limit, a hold refused over a limit
	// one fan alone could not reach).
	FansChallenged int     `json:"fans_challenged"`
	ChallengedRate float64 `json:"fans_challenged_share"`
	FansRefused    int     `json:"fans_refused"`
	RefusedRate    float64 `json:"fans_refused_share"`
	// FanJoin is a fan's whole join (a challenge solved included); the
	// challenged fans' alone in FanJoinChallenged.
	FanJoin           Percentiles `json:"fan_join_ms"`
	FanJoinChallenged Percentiles `json:"fan_join_challenged_ms"`
}

// farmer is the farm's part of a run.
type farmer struct {
	collector      string // email
	collectorID    int64
	transfers, bad atomic.Int64
}

// newShoppers makes the fans (and the farm's bots first, who join at the
// first millisecond) with their cards and devices.
func (r *run) newShoppers(ctx context.Context) error {
	a := r.st.App
	f := r.o.Farm
	if f.Bots > 0 {
		if f.Cards < 1 || f.Devices < 1 {
			return fmt.Errorf("a farm needs at least one card and one device")
		}
		stamp := time.Now().UnixNano()
		prefix := fmt.Sprintf("farm-collector-%d", stamp)
		ids, err := createAccounts(ctx, a.Catalog, prefix, 1)
		if err != nil {
			return err
		}
		r.farm = &farmer{collector: prefix + "-1@catraca.dev", collectorID: ids[0]}
		bots, err := createAccounts(ctx, a.Catalog, fmt.Sprintf("farm-bot-%d", stamp), f.Bots)
		if err != nil {
			return err
		}
		devices := make([]*fan.Device, f.Devices)
		for i := range devices {
			devices[i] = fan.NewDevice()
		}
		for i, id := range bots {
			// Cards and devices far from the fans' numbers.
			s, err := r.newShopper(ctx, id, devices[i%f.Devices], pspsim.PersonCard(1_000_000_000+i%f.Cards))
			if err != nil {
				return err
			}
			s.bot = true
		}
	}
	ids, err := createAccounts(ctx, a.Catalog, fmt.Sprintf("sim-%d", time.Now().UnixNano()), r.o.Fans)
	if err != nil {
		return err
	}
	for i, id := range ids {
		card := pspsim.PersonCard(i)
		if i > 0 && rand.Float64() < f.FamilyShare {
			card = r.fans[len(r.fans)-1].card
		}
		if _, err := r.newShopper(ctx, id, fan.NewDevice(), card); err != nil {
			return err
		}
	}
	return nil
}

// newShopper signs a fan in on device as a log-in does: a session of a
// new account (created just now, its email not verified, issued with the
// device's cookie), the device cookie in the browser and
// the device recorded against the account (what links a farm's
// accounts); then adds it to the run.
func (r *run) newShopper(ctx context.Context, id int64, device *fan.Device, card string) (*shopper, error) {
	f := fan.OnDevice(r.st.URL, r.tr, device)
	f.Account = id
	raw, _, err := r.st.App.Sessions.Issue(token.Claims{Account: id, Role: "fan", Since: time.Now().Unix(),
		Email: token.EmailUnverified, Device: risk.DeviceDigest(device.ID)}, 2*time.Hour)
	if err != nil {
		return nil, err
	}
	if _, err := r.st.App.Fairness.SeenDevice(ctx, id, device.ID); err != nil {
		return nil, err
	}
	f.SetSession(raw)
	f.Observe = r.observe
	if f.Solve = r.o.Farm.Solve; f.Solve == nil {
		f.Solve = fan.SolvePoW
	}
	s := &shopper{Fan: f, card: card}
	r.fans = append(r.fans, s)
	return s, nil
}

// scalp is one admitted bot: no looking, the most tickets it may have
// held at once, paid at once with the farm's card, then every ticket sent
// to the collector.
func (r *run) scalp(ctx context.Context, s *shopper) (freed time.Time) {
	defer func() {
		if freed.IsZero() {
			s.Leave(ctx, r.event)
			freed = time.Now()
		}
	}()
	var h fan.Hold
	var err error
	for n := r.maxPerAccount; n > 0; n-- {
		if h, err = fan.Retry(ctx, func() (fan.Hold, error) { return s.HoldBest(ctx, r.event, n, "") }); err == nil {
			break
		}
		r.refusedAt(s, err)
	}
	if err != nil {
		return
	}
	o, freed := r.buy(ctx, s, h, s.card)
	for _, t := range o.Tickets {
		r.farm.transfers.Add(1)
		if _, err := fan.Retry(ctx, func() (struct{}, error) { return struct{}{}, s.Transfer(ctx, t.ID, r.farm.collector) }); err != nil {
			r.farm.bad.Add(1)
		}
	}
	return freed
}

// refusedAt notes a hold refused by a limit: an ordinary fan buys once and
// at most the limit, so only a rule linking it to others refuses it.
func (r *run) refusedAt(s *shopper, err error) {
	if e, ok := err.(*fan.Error); ok && e.Code == "ticket-limit" {
		s.refused = true
	}
}

// tally counts, once the run has settled, who holds the tickets.
func (r *run) tally(ctx context.Context) (*FarmResult, error) {
	f := r.o.Farm
	res := &FarmResult{Bots: f.Bots, Cards: f.Cards, Devices: f.Devices}
	db, err := r.st.App.Shards.ForEvent(ctx, r.event)
	if err != nil {
		return nil, err
	}
	role := map[int64]*shopper{}
	cards := map[string]int{}
	for _, s := range r.fans {
		role[s.Account] = s
		if !s.bot {
			cards[s.card]++
		}
	}
	// The holder is the last transfer's recipient, else the buyer.
	rows, err := db.Query(ctx, `SELECT coalesce(k.holder_id, o.user_id), count(*) FROM tickets t
		JOIN orders o ON o.id = t.order_id AND o.status = 'paid' LEFT JOIN ticket_keys k ON k.ticket_id = t.id
		WHERE t.event_id = $1 GROUP BY 1`, r.event)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var holder, n int64
		if err := rows.Scan(&holder, &n); err != nil {
			return nil, err
		}
		switch s := role[holder]; {
		case r.farm != nil && holder == r.farm.collectorID:
			res.CollectorTickets += n
		case s != nil && s.bot:
			res.BotTickets += n
		default:
			res.FanTickets += n
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	res.FarmTickets = res.BotTickets + res.CollectorTickets
	// Unsold, from the inventory: seats not sold, standing places left or
	// in a hold still open.
	if err := db.QueryRow(ctx, `SELECT
		(SELECT count(*) FROM event_seats WHERE event_id = $1 AND status <> 'sold')
		+ (SELECT coalesce(sum(s.remaining), 0) FROM ga_slots s JOIN ga_pools p ON p.id = s.pool_id WHERE p.event_id = $1)
		+ (SELECT coalesce(sum(cardinality(i.slots)), 0) FROM order_items i JOIN orders o ON o.id = i.order_id JOIN holds h ON h.id = o.hold_id
		   WHERE o.event_id = $1 AND i.pool_id IS NOT NULL AND h.status = 'active')`, r.event).Scan(&res.Unsold); err != nil {
		return nil, err
	}
	// Payments refunded over the per-card limit, and paid orders, by buyer.
	limited, bought := map[int64]bool{}, map[int64]bool{}
	rows, err = db.Query(ctx, `SELECT o.user_id, bool_or(p.failure = $2), bool_or(o.status = 'paid') FROM orders o
		LEFT JOIN payments p ON p.order_id = o.id WHERE o.event_id = $1 GROUP BY 1`, r.event, order.CardLimit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var l, b *bool
		if err := rows.Scan(&id, &l, &b); err != nil {
			return nil, err
		}
		limited[id], bought[id] = l != nil && *l, b != nil && *b
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	fans := 0
	for _, s := range r.fans {
		n, _ := s.Challenged()
		if s.bot {
			res.BotsChallenged += min(n, 1)
			res.BotsCardLimited += count(limited[s.Account])
			res.BotsBought += count(bought[s.Account])
			continue
		}
		fans++
		res.FansChallenged += min(n, 1)
		res.FansRefused += count(limited[s.Account] || s.refused)
		if cards[s.card] > 1 {
			res.FamilyFans++
		}
	}
	if r.farm != nil {
		res.Transfers, res.TransfersRefused = r.farm.transfers.Load(), r.farm.bad.Load()
	}
	res.FarmShare = float64(res.FarmTickets) / float64(r.rep.Tickets)
	if fans > 0 {
		res.ChallengedRate, res.RefusedRate = float64(res.FansChallenged)/float64(fans), float64(res.FansRefused)/float64(fans)
	}
	lat := r.lat.percentiles()
	res.FanJoin, res.FanJoinChallenged = lat[joinFan], lat[joinFanChallenged]
	return res, nil
}

func count(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Routes of a fan's whole join, as the fan waits for it.
const (
	joinFan           = "join (fan, whole)"
	joinFanChallenged = "join (fan challenged, whole)"
)

// Markdown renders the farm's figures for one phase.
func (f *FarmResult) Markdown(tickets int64) string {
	var b strings.Builder
	fmt.Fprintf(&b, "| figure | value |\n|---|---|\n")
	fmt.Fprintf(&b, "| **tickets the farm holds** (bots + collector) | **%d of %d (%.2f %%)** |\n", f.FarmTickets, tickets, 100*f.FarmShare)
	fmt.Fprintf(&b, "| … held by bots / by the collector | %d / %d |\n", f.BotTickets, f.CollectorTickets)
	fmt.Fprintf(&b, "| tickets fans hold / unsold | %d / %d |\n", f.FanTickets, f.Unsold)
	fmt.Fprintf(&b, "| bots that bought / refunded over the card limit | %d / %d of %d |\n", f.BotsBought, f.BotsCardLimited, f.Bots)
	fmt.Fprintf(&b, "| transfers to the collector tried / refused | %d / %d |\n", f.Transfers, f.TransfersRefused)
	fmt.Fprintf(&b, "| bots challenged | %d |\n", f.BotsChallenged)
	fmt.Fprintf(&b, "| **fans challenged** | **%d (%.2f %%)** |\n", f.FansChallenged, 100*f.ChallengedRate)
	fmt.Fprintf(&b, "| **fans wrongly refused** (card limit, linked limit) | **%d (%.2f %%)**; %d fans share a card with family |\n", f.FansRefused, 100*f.RefusedRate, f.FamilyFans)
	fmt.Fprintf(&b, "| a fan's join, p50 / p99 | %.1f / %.1f ms (n %d) |\n", f.FanJoin.P50, f.FanJoin.P99, f.FanJoin.N)
	if f.FanJoinChallenged.N > 0 {
		fmt.Fprintf(&b, "| a challenged fan's join (solving included), p50 / p99 | %.1f / %.1f ms (n %d) |\n", f.FanJoinChallenged.P50, f.FanJoinChallenged.P99, f.FanJoinChallenged.N)
	} else {
		fmt.Fprintf(&b, "| a challenged fan's join (solving included), p50 / p99 | no fan was challenged |\n")
	}
	return b.String()
}

// Phase is one on-sale of a farm run: the same fans and farm, with the
// defenses as named.
type Phase struct {
	Name     string   `json:"name"`
	Defenses []string `json:"defenses_on"`
	Report   *Report  `json:"report"`
}

// PhaseDefenses names the defenses on in a phase: all of them, or (off)
// those that cannot be turned off.
func PhaseDefenses(off bool) []string {
	var on []string
	for _, d := range Defenses {
		if !off || d.Off == nil {
			on = append(on, d.Name)
		}
	}
	return on
}

// FarmMarkdown compares the phases of a farm run side by side; dir[i] is
// where phase i's own report is, relative to this one.
func FarmMarkdown(phases []Phase, dirs []string) string {
	var b strings.Builder
	if len(phases) == 0 || phases[0].Report == nil || phases[0].Report.Farm == nil {
		return "# Scalper farm\n\nno phase ran\n"
	}
	first := phases[0].Report
	f := first.Farm
	fmt.Fprintf(&b, "# Scalper farm\n\n")
	fmt.Fprintf(&b, "%d bots on %d cards and %d devices, joining first, buying the most one account may and transferring it to one collector, among %d fans (%d share a card with family); %d tickets, ceiling %d, commits: %s. The same on-sale twice, each on fresh databases: every defense that can be turned off, off; then every defense on.\n\n",
		f.Bots, f.Cards, f.Devices, first.Options.Fans, f.FamilyFans, first.Tickets, first.Options.Ceiling, first.Commits())
	fmt.Fprintf(&b, "| defense | how it is turned off |\n|---|---|\n")
	for _, d := range Defenses {
		fmt.Fprintf(&b, "| %s | %s |\n", d.Name, or(strings.ReplaceAll(d.Switch, "|", "\\|"), "cannot be: on in both phases"))
	}
	row := func(what string, cell func(*Report) string) {
		fmt.Fprintf(&b, "| %s |", what)
		for _, p := range phases {
			fmt.Fprintf(&b, " %s |", cell(p.Report))
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "\n| figure |")
	for i, p := range phases {
		fmt.Fprintf(&b, " [%s](%s/onsale.md) |", p.Name, dirs[i])
	}
	fmt.Fprintf(&b, "\n|---|%s\n", strings.Repeat("---:|", len(phases)))
	row("defenses on", func(r *Report) string { return or(strings.Join(phaseOf(phases, r).Defenses, ", "), "none") })
	row("**tickets the farm holds** (goal ≤ 2 % with defenses on)", func(r *Report) string {
		return fmt.Sprintf("**%d (%.2f %%)**", r.Farm.FarmTickets, 100*r.Farm.FarmShare)
	})
	row("… of which the collector's", func(r *Report) string { return fmt.Sprint(r.Farm.CollectorTickets) })
	row("tickets fans hold", func(r *Report) string { return fmt.Sprint(r.Farm.FanTickets) })
	row("unsold", func(r *Report) string { return fmt.Sprint(r.Farm.Unsold) })
	row("farm + fans + unsold = tickets", func(r *Report) string {
		f := r.Farm
		return fmt.Sprintf("%d + %d + %d = %d", f.FarmTickets, f.FanTickets, f.Unsold, f.FarmTickets+f.FanTickets+f.Unsold)
	})
	row("bots that bought / refunded over the card limit", func(r *Report) string {
		return fmt.Sprintf("%d / %d", r.Farm.BotsBought, r.Farm.BotsCardLimited)
	})
	row("transfers to the collector tried / refused", func(r *Report) string {
		return fmt.Sprintf("%d / %d", r.Farm.Transfers, r.Farm.TransfersRefused)
	})
	row("**fans challenged** (goal ≤ 5 %)", func(r *Report) string {
		return fmt.Sprintf("**%d (%.2f %%)**", r.Farm.FansChallenged, 100*r.Farm.ChallengedRate)
	})
	row("**fans wrongly refused** (goal ≤ 0.5 %)", func(r *Report) string {
		return fmt.Sprintf("**%d (%.2f %%)**", r.Farm.FansRefused, 100*r.Farm.RefusedRate)
	})
	row("a fan's join, p50 / p99", func(r *Report) string {
		return fmt.Sprintf("%.1f / %.1f ms", r.Farm.FanJoin.P50, r.Farm.FanJoin.P99)
	})
	row("a challenged fan's join, p50 / p99", func(r *Report) string {
		if p := r.Farm.FanJoinChallenged; p.N > 0 {
			return fmt.Sprintf("%.1f / %.1f ms (n %d)", p.P50, p.P99, p.N)
		}
		return "none challenged"
	})
	row("tickets paid during the run (card-limit refunds come after) / draw to sold out", func(r *Report) string {
		return fmt.Sprintf("%d / %.1f s", r.Sold, r.DrawToSoldOut())
	})
	row("invariant violations", func(r *Report) string { return fmt.Sprint(len(r.Violations)) })
	return b.String()
}

func phaseOf(phases []Phase, r *Report) Phase {
	for _, p := range phases {
		if p.Report == r {
			return p
		}
	}
	return Phase{}
}
