package e2e

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/shared/event"
	"github.com/catraca/catraca/shared/organizer"
	"github.com/catraca/catraca/shared/presale"
)

// TestPresaleFromRegistrationToCode: the organizer opens a presale's
// registration in the console and sees its seed commitment; a fan
// registers on the event's presale page; when the registration closes,
// the draw (the local sweep's) gives the fan a code, which the fan uses,
// and the console shows the revealed seed and the counts. Every page
// passes axe-core.
func TestPresaleFromRegistrationToCode(t *testing.T) {
	s := newSite(t)
	now := time.Now().UTC()
	id := s.eventWith(t, "Presale show", true, 600, func(spec *organizer.EventSpec) {
		opens := now.Add(-time.Hour)
		spec.SaleStartsAt = now.Add(time.Hour)
		spec.WaitingRoom = event.WaitingRoom{Enabled: true, PrequeueOpensAt: &opens, Ceiling: 10, ActiveTTL: 600, AdmissionTTL: 900}
	})
	page := "/events/" + strconv.FormatInt(id, 10) + "/presale"

	org := s.tab(t)
	s.logInOrganizer(t, org, "/organizer/events/"+strconv.FormatInt(id, 10))
	// The registration closes 40 s from now: time for the fan to register.
	require.NoError(t, chromedp.Do(org, chromedp.WaitVisible(`#presale-closes`)))
	evaluate[bool](t, org, `(() => {
		const local = (ms) => { const d = new Date(ms); return new Date(ms - d.getTimezoneOffset() * 60000).toISOString().slice(0, 19); };
		document.getElementById('presale-opens').value = local(Date.now() - 60000);
		document.getElementById('presale-closes').value = local(Date.now() + 40000);
		document.getElementById('presale-codes').value = '5';
		return true;
	})()`)
	require.NoError(t, chromedp.Do(org, chromedp.Click(`//button[. = "Open registration"]`)))
	// The commitment, or the console's refusal, named in the failure.
	opened, err := chromedp.Run(org, chromedp.Poll[string](`document.querySelector('#presale-commitment') ? 'opened' :
		(document.querySelector('.presale .error')?.textContent || [...document.querySelectorAll('.presale form :invalid')].map((e) => e.id + ': ' + e.validationMessage + ' ' + e.value).join('; '))`,
		chromedp.WithPollingTimeout(30*time.Second)))
	require.NoError(t, err)
	require.Equal(t, "opened", opened)
	commitment := text(t, org, `#presale-commitment`)
	require.Regexp(t, `^[0-9a-f]{64}$`, commitment)
	accessible(t, org, "console presale")

	fan := s.tabOf(t, s.newBrowser(t))
	s.signUp(t, fan, page)
	require.NoError(t, chromedp.Do(fan,
		chromedp.WaitVisible(`//button[. = "Register for the presale"]`),
	))
	require.Equal(t, commitment, text(t, fan, `code.hash`), "the fan sees the commitment the console published")
	accessible(t, fan, "presale not registered")
	require.NoError(t, chromedp.Do(fan,
		chromedp.Click(`//button[. = "Register for the presale"]`),
		chromedp.WaitVisible(`//p[@id="presale-state" and contains(., "You are registered")]`),
	))
	accessible(t, fan, "presale registered")

	// The local sweep draws within seconds of the close; the page shows
	// the code after a reload.
	won, err := chromedp.Run(fan, chromedp.Poll[bool](`(async () => {
		const r = await fetch('/api/events/`+strconv.FormatInt(id, 10)+`/presale/registration');
		return (await r.json()).state === 'won';
	})()`, chromedp.WithPollingInterval(time.Second), chromedp.WithPollingTimeout(2*time.Minute)))
	require.NoError(t, err)
	require.True(t, won)
	require.NoError(t, chromedp.Do(fan,
		chromedp.Reload(),
		chromedp.WaitVisible(`#presale-code`),
		chromedp.WaitVisible(`//button[. = "Use my code"]`),
	))
	accessible(t, fan, "presale won")
	require.NoError(t, chromedp.Do(fan,
		chromedp.Click(`//button[. = "Use my code"]`),
		chromedp.WaitVisible(`//a[. = "Join the presale's waiting room"]`),
	))
	s.shot(t, fan, "presale-won")

	require.NoError(t, chromedp.Do(org,
		chromedp.Reload(),
		chromedp.WaitVisible(`#presale-seed`),
	))
	facts := text(t, org, `#presale-facts`)
	require.Contains(t, facts, "Drawn")
	require.Regexp(t, `Codes redeemed\s*1`, facts)
	accessible(t, org, "console presale drawn")
	s.consoleShot(t, org, "console-presale")
}

// TestEndedPresaleSendsWinnersToTheGeneralSale: once the presale is over,
// a winner's page says so and leads to the general sale's waiting room;
// it asked them to enter their code "to join the presale's waiting room",
// which the server then refused (409 presale-over).
func TestEndedPresaleSendsWinnersToTheGeneralSale(t *testing.T) {
	s := newSite(t)
	ctx := context.Background()
	now := time.Now().UTC()
	id := s.eventWith(t, "Ended presale show", true, 600, func(spec *organizer.EventSpec) {
		opens := now.Add(-time.Hour)
		spec.SaleStartsAt = now.Add(time.Hour)
		spec.WaitingRoom = event.WaitingRoom{Enabled: true, PrequeueOpensAt: &opens, Ceiling: 10, ActiveTTL: 600, AdmissionTTL: 900}
	})
	e, err := s.st.App.Events.Get(ctx, id)
	require.NoError(t, err)
	_, err = s.st.App.Presale.Open(ctx, e, s.organizer, presale.Spec{RegistrationOpensAt: now.Add(-time.Minute),
		RegistrationClosesAt: now.Add(30 * time.Minute), Codes: 5, SaleEndsAt: now.Add(2 * time.Hour)})
	require.NoError(t, err)
	page := "/events/" + strconv.FormatInt(id, 10) + "/presale"

	fan := s.tabOf(t, s.newBrowser(t))
	s.signUp(t, fan, page)
	require.NoError(t, chromedp.Do(fan,
		chromedp.Click(`//button[. = "Register for the presale"]`),
		chromedp.WaitVisible(`//p[@id="presale-state" and contains(., "You are registered")]`),
	))
	// The whole presale in the past: registration, draw, presale.
	_, err = s.st.App.Catalog.Exec(ctx, `UPDATE presales SET registration_opens_at = now() - interval '3 hours',
		registration_closes_at = now() - interval '2 hours', sale_ends_at = now() - interval '1 minute' WHERE event_id = $1`, id)
	require.NoError(t, err)
	_, err = s.st.App.Presale.Draw(ctx, id)
	require.NoError(t, err)

	require.NoError(t, chromedp.Do(fan,
		chromedp.Reload(),
		chromedp.WaitVisible(`//p[@id="presale-state" and contains(., "The presale is over")]`),
		chromedp.WaitVisible(`//a[. = "Go to the general sale's waiting room" and @href = "/events/`+strconv.FormatInt(id, 10)+`/queue"]`),
	))
	require.NotContains(t, text(t, fan, `main`), "join the presale's waiting room")
	require.Zero(t, evaluate[int](t, fan, `document.querySelectorAll('#presale-code-input').length`), "no code to enter")
	accessible(t, fan, "presale over")
}
