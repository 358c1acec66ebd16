package e2e

import (
	"bytes"
	"context"
	"fmt"
	"image/png"
	"net/http"
	"regexp"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/makiuchi-d/gozxing"
	"github.com/makiuchi-d/gozxing/qrcode"
	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/shared/account"
	"github.com/catraca/catraca/shared/account/pgstore"
	"github.com/catraca/catraca/tools/fan"
)

// The door's screenshots docs/entry.md shows (go test -update-docs).
func init() {
	for _, name := range []string{"door-admitted", "door-already-used", "door-conflict", "my-tickets", "console-door-staff"} {
		inDocs[name] = true
	}
}

// door is an event with a fan holding paid standing tickets and a door
// staff account the organizer granted.
type door struct {
	s        *site
	event    int64
	fan      apiFan
	fanEmail string
	email    string // door staff's
}

func newDoor(t *testing.T, tickets int) door {
	t.Helper()
	ctx := context.Background()
	s := newSite(t)
	d := door{s: s, event: s.event(t, "Doors Open", false, 480), fan: apiFan{fan.New(s.st.URL, nil)}}
	d.fanEmail = fmt.Sprintf("ticket-holder-%d@catraca.dev", time.Now().UnixNano())
	require.NoError(t, d.fan.SignUp(ctx, d.fanEmail, "a-long-password", "API Fan"))
	h, err := d.fan.HoldGA(ctx, d.event, "FLOOR", tickets)
	require.NoError(t, err)
	payURL, err := fan.Retry(ctx, func() (string, error) {
		u, _, err := d.fan.Checkout(ctx, h.OrderID)
		if err == nil && u == "" {
			err = &fan.Error{Status: http.StatusServiceUnavailable, Code: "queued"}
		}
		return u, err
	})
	require.NoError(t, err)
	require.NoError(t, d.fan.PayOnPage(ctx, payURL, "4242424242424242"))
	require.Eventually(t, func() bool {
		o, err := d.fan.Order(ctx, h.OrderID)
		return err == nil && len(o.Tickets) == tickets
	}, 20*time.Second, 100*time.Millisecond, "tickets issued")

	d.email = fmt.Sprintf("door-%d@catraca.dev", time.Now().UnixNano())
	_, err = s.st.App.Accounts.SignUp(ctx, d.email, "door-staff-password", "Dora Door")
	require.NoError(t, err)
	// Only an organizer has an event's doors to give (a demoted one has not).
	require.NoError(t, pgstore.New(s.st.App.Catalog).SetRole(ctx, s.organizer, account.RoleOrganizer))
	_, _, err = s.st.App.Entry.Grant(ctx, d.event, s.organizer, d.email)
	require.NoError(t, err)
	return d
}

// code is the code the fan's n-th ticket shows now, opened.
func (d door) code(t *testing.T, n int) string {
	t.Helper()
	return d.ticket(t, n).Codes[0].Code
}

// myTicket is a ticket as the fan opens it.
type myTicket struct {
	Codes []struct {
		Code string `json:"code"`
	} `json:"codes"`
	Static *struct{ Code string } `json:"static_code"`
}

// ticket opens the fan's n-th ticket of the list.
func (d door) ticket(t *testing.T, n int) myTicket {
	t.Helper()
	var list struct {
		Tickets []struct {
			ID int64 `json:"id"`
		} `json:"tickets"`
	}
	require.NoError(t, d.fan.Call(context.Background(), "tickets", http.MethodGet, "/api/me/tickets", nil, &list))
	var one struct {
		Ticket myTicket `json:"ticket"`
	}
	require.NoError(t, d.fan.Call(context.Background(), "ticket", http.MethodGet, fmt.Sprintf("/api/me/tickets/%d", list.Tickets[n].ID), nil, &one))
	return one.Ticket
}

// logIn logs an account in through the log-in page, which then goes to next.
func (d door) logIn(t *testing.T, ctx context.Context, email, password, next string) {
	t.Helper()
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(d.s.st.URL+"/login?next="+next),
		chromedp.WaitVisible(chromedp.CSS(`#f-email`)),
		chromedp.SendKeys(chromedp.CSS(`#f-email`), email),
		chromedp.SendKeys(chromedp.CSS(`#f-password`), password),
		chromedp.Click(chromedp.CSS(`form button[type=submit]`)),
	))
}

// open logs door staff in on the scanner page as gate.
func (d door) open(t *testing.T, ctx context.Context, gate string) {
	t.Helper()
	d.logIn(t, ctx, d.email, "door-staff-password", fmt.Sprintf("/events/%d/door", d.event))
	require.NoError(t, chromedp.Do(ctx,
		chromedp.WaitVisible(`//h1[. = "Door: Doors Open"]`),
		chromedp.SetValue(chromedp.CSS(`#door-gate`), gate),
	))
}

// scan types a code and waits for the full-screen answer.
func scan(t *testing.T, ctx context.Context, code, kind, title string) string {
	t.Helper()
	sel := fmt.Sprintf(`//div[contains(@class, "verdict") and contains(@class, "%s") and not(@hidden)]/p[@class="big" and . = "%s"]`, kind, title)
	evaluate[bool](t, ctx, `document.querySelector('.verdict').hidden = true`)
	require.NoError(t, chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.CSS(`#door-code`), code),
		chromedp.Click(`//button[. = "Check"]`),
		chromedp.WaitVisible(sel),
	))
	return text(t, ctx, ".verdict")
}

func TestDoorScanByManualEntry(t *testing.T) {
	d := newDoor(t, 2)
	ctx := d.s.tab(t)
	d.open(t, ctx, "North")
	require.Contains(t, text(t, ctx, "#door-counts"), "Checked in 0 of 2")
	accessible(t, ctx, "door")
	code := d.code(t, 0)

	answer := scan(t, ctx, code, "good", "Admitted")
	require.Contains(t, answer, "API Fan")
	require.Contains(t, answer, "Floor (standing)")
	require.NotContains(t, answer, "×", "one ticket is one place, not the whole order item")
	d.s.shot(t, ctx, "door-admitted")
	require.NoError(t, chromedp.Do(ctx, chromedp.WaitVisible(`//p[@id="door-counts" and contains(., "Checked in 1 of 2")]`)))

	answer = scan(t, ctx, code, "bad", "Already used")
	require.Contains(t, answer, ", North.")
	d.s.shot(t, ctx, "door-already-used")
	accessible(t, ctx, "door answer")
	full := evaluate[bool](t, ctx, `(() => { const r = document.querySelector('.verdict').getBoundingClientRect(); return r.width >= innerWidth && r.height >= innerHeight; })()`)
	require.True(t, full, "the answer covers the whole screen")
	scan(t, ctx, forge(d.code(t, 1)), "bad", "Invalid code")
	require.Zero(t, evaluate[int](t, ctx, `document.querySelectorAll('#staff-email').length`), "door staff do not get the organizer's tools")

	// The organizer, on another device, adds a gate and allows printed codes.
	org, cancel := chromedp.NewContext(ctx, chromedp.WithNewBrowserContext())
	t.Cleanup(cancel)
	_, err := d.s.st.App.Accounts.SignUp(context.Background(), "gate2@catraca.dev", "door-staff-password", "Gil Gate")
	require.NoError(t, err)
	d.logIn(t, org, "org-e2e@catraca.dev", "organizer-password", fmt.Sprintf("/events/%d/door", d.event))
	// The door page leads the organizer to the console's event page, where
	// door staff and entry rules are, and whose door link leads back.
	wait, cancel := context.WithTimeout(org, 30*time.Second)
	defer cancel()
	require.NoError(t, chromedp.Do(wait,
		chromedp.WaitVisible(`//h1[. = "Door: Doors Open"]`),
		chromedp.Click(`//p[@id="door-console"]/a[. = "Doors Open in the console"]`),
		chromedp.WaitVisible(`//h1[. = "Doors Open"]`),
		chromedp.WaitVisible(`//h2[. = "Entry rules"]`),
	), "the page said: %s", text(t, org, "main"))
	require.Equal(t, fmt.Sprintf("/organizer/events/%d", d.event), evaluate[string](t, org, `location.pathname`))
	require.Equal(t, fmt.Sprintf("/events/%d/door", d.event), evaluate[string](t, org, `document.querySelector('.door-staff a').getAttribute('href')`))
	require.NoError(t, chromedp.Do(org,
		chromedp.SendKeys(chromedp.CSS(`#staff-email`), "gate2@catraca.dev"),
		chromedp.Click(`//button[. = "Add"]`),
		chromedp.WaitVisible(`//*[@id="toast" and contains(., "gate2@catraca.dev can scan")]`),
		chromedp.WaitVisible(`//ul[@id="door-staff"]/li[contains(., "gate2@catraca.dev")]`),
		chromedp.Click(chromedp.CSS(`#entry-static`)),
		chromedp.Click(`//button[. = "Save entry rules"]`),
		chromedp.WaitVisible(`//*[@id="toast" and contains(., "Entry rules saved")]`),
	))
	d.s.consoleShot(t, org, "console-entry-rules")
	accessible(t, org, "event page with entry rules")
	static := d.ticket(t, 1).Static
	require.NotNil(t, static, "the fan can print a code now")
	scan(t, ctx, static.Code, "good", "Admitted")
}

// qrDrawn tells that every QR code shown is painted at a visible size.
const qrDrawn = `[...document.querySelectorAll('.ticket svg.qr')].filter((q) => q.style.display !== 'none')
	.every((q) => { const r = q.getBoundingClientRect(); return r.width >= 100 && r.height === r.width && q.querySelector('path').getAttribute('d').length > 100; })`

// scanScreen reads the QR code in what the screen shows of sel, as a
// scanner at the gate would (ZXing, as many phone scanners run).
func scanScreen(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	shot, err := chromedp.Run(ctx, chromedp.Screenshot(chromedp.CSS(sel), chromedp.NodeVisible))
	require.NoError(t, err)
	img, err := png.Decode(bytes.NewReader(shot))
	require.NoError(t, err)
	bmp, err := gozxing.NewBinaryBitmapFromImage(img)
	require.NoError(t, err)
	res, err := qrcode.NewQRCodeReader().Decode(bmp, nil)
	require.NoError(t, err, "a scanner reads the code on the screen")
	return res.GetText()
}

// The organizer takes a scanner back from a temp worker in the console:
// the list shows the email granted (never the account's name), Revoke asks
// first, and the worker's next scan is refused and their page forgets the
// scan bundle (names and seats) it had downloaded.
func TestOrganizerRevokesDoorStaffInTheConsole(t *testing.T) {
	d := newDoor(t, 1)
	staff := d.s.tab(t)
	d.open(t, staff, "Temp")
	require.NoError(t, chromedp.Do(staff,
		chromedp.Click(`//button[. = "Download for offline scanning"]`),
		chromedp.WaitVisible(`//p[@id="door-offline" and contains(., "Ready for offline scanning: 1 tickets")]`),
	))

	org, cancel := chromedp.NewContext(staff, chromedp.WithNewBrowserContext())
	t.Cleanup(cancel)
	d.s.logInOrganizer(t, org, fmt.Sprintf("/organizer/events/%d", d.event))
	row := fmt.Sprintf(`//ul[@id="door-staff"]/li[contains(., %q)]`, d.email)
	require.NoError(t, chromedp.Do(org, chromedp.WaitVisible(row)))
	require.NotContains(t, text(t, org, ".door-staff"), "Dora", "an email does not reveal whose account it is")
	accessible(t, org, "door staff")
	d.s.consoleShot(t, org, "console-door-staff")
	require.NoError(t, chromedp.Do(org,
		chromedp.Click(row+`/button[. = "Revoke"]`),
		chromedp.WaitVisible(`//dialog[@open]//h2[. = "Revoke door staff?"]`),
	))
	accessible(t, org, "revoke door staff")
	require.NoError(t, chromedp.Do(org,
		chromedp.Click(`//dialog[@open]//button[. = "Revoke"]`),
		chromedp.WaitNotPresent(`//dialog`),
		chromedp.WaitNotPresent(row),
		chromedp.WaitVisible(`//p[contains(., "No door staff")]`),
		chromedp.WaitVisible(`//*[@id="toast" and contains(., "can no longer scan")]`),
	))

	require.NoError(t, chromedp.Do(staff,
		chromedp.SendKeys(chromedp.CSS(`#door-code`), d.code(t, 0)),
		chromedp.Click(`//button[. = "Check"]`),
		chromedp.WaitVisible(`//*[@id="toast" and contains(., "ask its organizer to add you")]`),
		chromedp.WaitVisible(`//p[@id="door-offline" and contains(., "Not ready for offline scanning")]`),
	))
	gone, err := chromedp.Run(staff, chromedp.Evaluate[bool](fmt.Sprintf(`import('/app/store.js').then((s) => s.get('catraca.bundle.%d')).then((b) => b == null)`, d.event),
		chromedp.EvalAwaitPromise))
	require.NoError(t, err)
	require.True(t, gone, "the bundle left the device")
}

// forge changes one character in the middle of a code's signature.
func forge(code string) string {
	i := len(code) - 20
	c := "A"
	if code[i] == 'A' {
		c = "B"
	}
	return code[:i] + c + code[i+1:]
}

// offline cuts (or restores) the tab's network, as a gate losing signal.
func offline(on bool) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		cond := []*network.Conditions{}
		if on {
			cond = append(cond, &network.Conditions{Offline: true, DownloadThroughput: -1, UploadThroughput: -1})
		}
		if _, err := cdp.Call(ctx, t, network.EmulateNetworkConditionsByRule, network.EmulateNetworkConditionsByRuleParams{MatchedNetworkConditions: cond}); err != nil {
			return err
		}
		_, err := cdp.Call(ctx, t, network.OverrideNetworkState, network.OverrideNetworkStateParams{Offline: on, DownloadThroughput: -1, UploadThroughput: -1})
		return err
	})
}

// unreachable cuts only the requests matching pattern (a URLPattern) and
// restores the rest, until offline is called again.
func unreachable(pattern string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		cond := []*network.Conditions{{URLPattern: pattern, Offline: true, DownloadThroughput: -1, UploadThroughput: -1}}
		if _, err := cdp.Call(ctx, t, network.EmulateNetworkConditionsByRule, network.EmulateNetworkConditionsByRuleParams{MatchedNetworkConditions: cond}); err != nil {
			return err
		}
		_, err := cdp.Call(ctx, t, network.OverrideNetworkState, network.OverrideNetworkStateParams{Offline: false, DownloadThroughput: -1, UploadThroughput: -1})
		return err
	})
}

func TestOfflineGatesSyncAConflict(t *testing.T) {
	d := newDoor(t, 2)
	gateA := d.s.tab(t)
	d.open(t, gateA, "A")
	gateB, cancel := chromedp.NewContext(gateA, chromedp.WithNewBrowserContext()) // its own storage: another device
	t.Cleanup(cancel)
	d.open(t, gateB, "B")
	for _, g := range []context.Context{gateA, gateB} {
		require.NoError(t, chromedp.Do(g,
			chromedp.Click(`//button[. = "Download for offline scanning"]`),
			chromedp.WaitVisible(`//p[@id="door-offline" and contains(., "Ready for offline scanning: 2 tickets")]`),
			offline(true),
		))
	}
	code, other := d.code(t, 0), d.code(t, 1)
	require.Contains(t, scan(t, gateA, code, "good", "Admitted"), "Admitted offline")
	d.s.shot(t, gateA, "door-offline-admitted")
	require.Contains(t, scan(t, gateB, code, "good", "Admitted"), "Admitted offline", "gate B cannot know gate A admitted it")
	scan(t, gateA, code, "bad", "Already used")
	scan(t, gateA, other, "good", "Admitted")
	scan(t, gateA, forge(other), "bad", "Invalid code")
	require.NoError(t, chromedp.Do(gateA, chromedp.WaitVisible(`//p[@id="door-offline" and contains(., "2 offline scans waiting to sync")]`)))

	// A's page is reopened while its syncs still cannot get through: the
	// scans it kept on the device (IndexedDB) are still waiting. Then its
	// network returns first: those scans become the admissions.
	require.NoError(t, chromedp.Do(gateA, unreachable(`*://*:*/api/events/*/checkins/sync`), chromedp.Reload(),
		chromedp.WaitVisible(`//p[@id="door-offline" and contains(., "2 offline scans waiting to sync")]`),
		offline(false),
		chromedp.WaitVisible(`//p[@id="door-counts" and contains(., "Checked in 2 of 2")]`)))
	require.NoError(t, chromedp.Do(gateB, offline(false),
		chromedp.WaitVisible(`//*[@id="toast" and contains(., "1 conflict")]`),
		chromedp.WaitVisible(`//ul[@id="door-conflicts"]/li[contains(., "admitted offline at B") and contains(., "A admitted it first")]`),
	))
	evaluate[bool](t, gateB, `document.querySelector('.verdict').hidden = true`)
	d.s.shot(t, gateB, "door-conflict")
	db, err := d.s.st.App.Shards.ForEvent(context.Background(), d.event)
	require.NoError(t, err)
	var admissions, conflicts int
	require.NoError(t, db.QueryRow(context.Background(), `SELECT (SELECT count(*) FROM checkins WHERE event_id = $1 AND gate = 'A'),
		(SELECT count(*) FROM checkin_conflicts WHERE event_id = $1 AND gate = 'B' AND first_gate = 'A')`, d.event).Scan(&admissions, &conflicts))
	require.Equal(t, 2, admissions)
	require.Equal(t, 1, conflicts)
}

// TestTransferVoidsTheOldCode: the fan sends a ticket from the ticket page;
// the code they had is void at the door at once, the friend's admits.
func TestTransferVoidsTheOldCode(t *testing.T) {
	d := newDoor(t, 1)
	ctx := context.Background()
	_, err := d.s.st.App.Accounts.SignUp(ctx, "friend-e2e@catraca.dev", "a-long-password", "Frida Friend")
	require.NoError(t, err)

	// Three days before the event the list has no codes: the fan opens
	// the ticket to see its live code, which a QR reader reads off the
	// screen, and which keeps rotating with the network cut.
	holder := d.s.tab(t)
	d.logIn(t, holder, d.fanEmail, "a-long-password", "/tickets")
	require.NoError(t, chromedp.Do(holder,
		chromedp.WaitVisible(`//h1[. = "My tickets"]`),
		chromedp.WaitVisible(`//li[@class="ticket"]//p[starts-with(., "Your live code shows here from")]`),
	))
	require.Zero(t, evaluate[int](t, holder, `document.querySelectorAll('.ticket svg.qr:not([style*="none"])').length`), "no code before the fan asks")
	require.NoError(t, chromedp.Do(holder, chromedp.Click(`//button[. = "Show code now"]`), chromedp.WaitVisible(chromedp.CSS(`.ticket svg.qr`))))
	drawn, err := chromedp.Run(holder, chromedp.Poll[bool](qrDrawn, chromedp.WithPollingTimeout(10*time.Second)))
	require.NoError(t, err)
	require.True(t, drawn, "the QR code is painted")
	old := scanScreen(t, holder, `.ticket svg.qr`)
	require.Equal(t, text(t, holder, `.ticket .code`), old, "the QR code is the code shown under it")
	d.s.shot(t, holder, "my-tickets")
	accessible(t, holder, "my tickets")
	require.NoError(t, chromedp.Do(holder, offline(true)))
	rotated, err := chromedp.Run(holder, chromedp.Poll[bool](fmt.Sprintf(`document.querySelector('.ticket .code').textContent.startsWith('R1.') && document.querySelector('.ticket .code').textContent !== %q`, old),
		chromedp.WithPollingTimeout(20*time.Second)))
	require.NoError(t, err)
	require.True(t, rotated, "the next step's code shows without network")
	require.NotEqual(t, old, scanScreen(t, holder, `.ticket svg.qr`))
	require.NoError(t, chromedp.Do(holder, offline(false)))
	require.NoError(t, chromedp.Do(holder,
		chromedp.Click(`//summary[. = "Send to a friend"]`),
		chromedp.SendKeys(`//input[@name="email"]`, "friend-e2e@catraca.dev"),
		chromedp.Click(`//button[. = "Send"]`),
		chromedp.Click(`//button[starts-with(., "Yes, send it")]`),
		chromedp.WaitVisible(`//*[@id="toast" and contains(., "Sent to friend-e2e@catraca.dev")]`),
		chromedp.WaitVisible(`//li[. = "No tickets yet."]`),
	))

	gate, cancel := chromedp.NewContext(holder, chromedp.WithNewBrowserContext())
	t.Cleanup(cancel)
	d.open(t, gate, "North")
	answer := scan(t, gate, old, "bad", "Void")
	require.Contains(t, answer, "transferred")

	friend := fan.New(d.s.st.URL, nil)
	require.NoError(t, friend.LogIn(ctx, "friend-e2e@catraca.dev", "a-long-password"))
	d.fan = apiFan{friend}
	require.Contains(t, scan(t, gate, d.code(t, 0), "good", "Admitted"), "Frida Friend")
}

// TestPastTicketSaysSo: a ticket of an event that is over is listed
// without codes, and says the event is over rather than when its code
// will show.
func TestPastTicketSaysSo(t *testing.T) {
	d := newDoor(t, 1)
	_, err := d.s.st.App.Catalog.Exec(context.Background(), `UPDATE events SET starts_at = now() - interval '2 days' WHERE id = $1`, d.event)
	require.NoError(t, err)
	ctx := d.s.tab(t)
	d.logIn(t, ctx, d.fanEmail, "a-long-password", "/tickets")
	require.NoError(t, chromedp.Do(ctx,
		chromedp.WaitVisible(`//h1[. = "My tickets"]`),
		chromedp.WaitVisible(`//li[@class="ticket"]//p[starts-with(., "This event is over.")]`),
	))
}

// TestDoorSpeaksPlainly: door staff the organizer has not granted yet are
// told so, as whom, and what to ask for (not "event not found"), and get in
// once granted; the page never prints "null", and a ticket used before says
// when in the gate's own time and names the gate once, as offline.
func TestDoorSpeaksPlainly(t *testing.T) {
	d := newDoor(t, 2)
	ctx := d.s.tab(t)
	late := fmt.Sprintf("late-%d@catraca.dev", time.Now().UnixNano())
	_, err := d.s.st.App.Accounts.SignUp(context.Background(), late, "door-staff-password", "Lee Late")
	require.NoError(t, err)
	d.logIn(t, ctx, late, "door-staff-password", fmt.Sprintf("/events/%d/door", d.event))
	wait, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	require.NoError(t, chromedp.Do(wait, chromedp.WaitVisible(`#door-not-staff`)), "the page said: %s", text(t, ctx, "main"))
	page := text(t, ctx, "main")
	require.Contains(t, page, "You cannot scan tickets at this event yet.")
	require.Contains(t, page, "Ask its organizer to add "+late+" as door staff")
	require.NotContains(t, page, "could not find")
	accessible(t, ctx, "door (not staff yet)")

	_, _, err = d.s.st.App.Entry.Grant(context.Background(), d.event, d.s.organizer, late)
	require.NoError(t, err)
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Click(`//button[. = "Check again"]`),
		chromedp.WaitVisible(`//p[@id="door-counts" and contains(., "Checked in 0 of 2")]`),
		chromedp.SetValue(chromedp.CSS(`#door-gate`), "North"),
	))
	require.NotContains(t, text(t, ctx, "main"), "null")

	// The gate is in São Paulo (UTC-3): its hour is not UTC's.
	require.NoError(t, chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, emulation.SetTimezoneOverride, emulation.SetTimezoneOverrideParams{TimezoneID: "America/Sao_Paulo"})
		return err
	})))
	zone, err := time.LoadLocation("America/Sao_Paulo")
	require.NoError(t, err)
	code := d.code(t, 0)
	before := time.Now()
	scan(t, ctx, code, "good", "Admitted")
	scan(t, ctx, code, "bad", "Already used")
	detail := text(t, ctx, ".verdict .detail")
	m := regexp.MustCompile(`^Already used at (\d{1,2}):\d{2}:\d{2} [AP]M, North\.$`).FindStringSubmatch(detail)
	require.NotNil(t, m, "a local time and the gate once: %q", detail)
	require.Contains(t, []string{before.In(zone).Format("3"), time.Now().In(zone).Format("3")}, m[1], "the gate's local hour: %q", detail)
	answer := scan(t, ctx, forge(d.code(t, 1)), "bad", "Invalid code")
	require.NotContains(t, answer, "null")
}

// TestDoorStaffFindTheirDoorPage: door staff signing in find a "My door
// events" link in the account menu, listing their event, whose link opens
// its door page; a fan's menu has no such link.
func TestDoorStaffFindTheirDoorPage(t *testing.T) {
	d := newDoor(t, 1)
	ctx := d.s.tab(t)
	d.logIn(t, ctx, d.email, "door-staff-password", "/")
	require.NoError(t, chromedp.Do(ctx,
		chromedp.WaitVisible(`//nav//a[. = "My door events"]`),
		chromedp.Click(`//nav//a[. = "My door events"]`),
		chromedp.WaitVisible(`//h1[. = "My door events"]`),
	))
	require.Contains(t, text(t, ctx, "main"), "Arena Teste, Rio de Janeiro")
	accessible(t, ctx, "my door events")
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Click(`//a[. = "Door: Doors Open"]`),
		chromedp.WaitVisible(`//h1[. = "Door: Doors Open"]`),
	))

	fan := d.s.tabOf(t, d.s.newBrowser(t))
	d.logIn(t, fan, d.fanEmail, "a-long-password", "/tickets")
	require.NoError(t, chromedp.Do(fan, chromedp.WaitVisible(`//h1[. = "My tickets"]`)))
	require.NotContains(t, text(t, fan, "nav"), "My door events")
}

// TestDoorLinkShowsAGrantMadeWhileSignedIn: staff granted a door while
// signed in find the "My door events" link on a later page (the menu asks
// again once its count is a minute old, but not on a sale's pages), without
// signing out and in; Back keeps it.
func TestDoorLinkShowsAGrantMadeWhileSignedIn(t *testing.T) {
	d := newDoor(t, 1)
	ctx := d.s.tab(t)
	late := fmt.Sprintf("granted-later-%d@catraca.dev", time.Now().UnixNano())
	_, err := d.s.st.App.Accounts.SignUp(context.Background(), late, "door-staff-password", "Gil Later")
	require.NoError(t, err)
	d.logIn(t, ctx, late, "door-staff-password", "/tickets")
	require.NoError(t, chromedp.Do(ctx, chromedp.WaitVisible(`//h1[. = "My tickets"]`)))
	// The menu's first ask (at sign-in) has answered: no door events yet.
	within(t, ctx, `(JSON.parse(localStorage.getItem('catraca.account')) || {}).doors === 0`, 10*time.Second, "the menu asked at sign-in")
	require.NotContains(t, text(t, ctx, "nav"), "My door events")

	_, _, err = d.s.st.App.Entry.Grant(context.Background(), d.event, d.s.organizer, late)
	require.NoError(t, err)
	// A minute passes: the count the menu kept is that old.
	evaluate[bool](t, ctx, `(() => { const s = JSON.parse(localStorage.getItem('catraca.account'));
		s.doorsAt = Date.now() - 61000; localStorage.setItem('catraca.account', JSON.stringify(s)); return true; })()`)
	// The asks from here on, counted as they are made.
	evaluate[bool](t, ctx, `(() => { window.asked = 0; const f = window.fetch;
		window.fetch = (u, o) => { if (String(u).endsWith('/api/me/door-events')) window.asked++; return f(u, o); }; return true; })()`)
	// A sale's pages do not ask: at the busiest minute every fan let in would.
	evaluate[bool](t, ctx, fmt.Sprintf(`(import('/app/nav.js').then((m) => m.navigate('/events/%d')), true)`, d.event))
	soon, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	require.NoError(t, chromedp.Do(soon, chromedp.WaitVisible(`//h1[. = "Doors Open"]`)))
	require.Zero(t, evaluate[int](t, ctx, `window.asked`), "the event page does not ask")
	require.NoError(t, chromedp.Do(soon,
		chromedp.Click(`//nav//a[. = "My orders"]`),
		chromedp.WaitVisible(`//h1[. = "My orders"]`),
		chromedp.WaitVisible(`//nav//a[. = "My door events"]`),
	), "the menu links the door granted meanwhile: %s", text(t, ctx, "nav"))
	evaluate[bool](t, ctx, `history.back(), true`)
	require.NoError(t, chromedp.Do(soon,
		chromedp.WaitVisible(`//h1[. = "Doors Open"]`),
		chromedp.WaitVisible(`//nav//a[. = "My door events"]`),
		chromedp.Click(`//nav//a[. = "My door events"]`),
		chromedp.WaitVisible(`//a[. = "Door: Doors Open"]`),
	))
}
