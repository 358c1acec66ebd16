// Booking page: the seat map with live availability, "best available for
// N" and general-admission quantity pickers. A hold turns into an order and
// the fan moves on to pay.
import { api, money, newKey } from './api.js';
import { h, toast } from './dom.js';
import { navigate } from './main.js';
import { SeatMap } from './seatmap.js';

export async function render(main, [id]) {
  const e = await api('GET', `/api/events/${id}`);
  const layout = await api('GET', `/api/venues/${e.venue_id}/layouts/${e.layout_version}`);
  const price = Object.fromEntries((e.price_levels || []).map((p) => [p.code, p]));
  const info = h('p', { class: 'seat-info muted' }, 'Point at a seat to see it; click to select.');
  const chosen = h('ul', { class: 'chosen', 'aria-live': 'polite' });
  const holdButton = h('button', { type: 'button', disabled: true }, 'Hold selected seats');
  const live = h('p', { class: 'muted small', role: 'status' }, 'Connecting to live availability…');
  const gaRemaining = {};
  const soldOut = h('p', { class: 'notice bad', role: 'status', hidden: true },
    'Sold out: every ticket is held or sold right now. Unpaid holds come back on sale within minutes; this map updates by itself. ');
  if (e.waiting_room.enabled) {
    // Done here: hand the shopping slot to the next fan in line.
    soldOut.append(h('button', { type: 'button', class: 'link', onclick: async () => {
      await api('DELETE', `/api/events/${id}/queue`).catch(() => {});
      navigate(`/events/${id}`);
    } }, 'Leave and let the next fan in'));
  }

  const map = new SeatMap(layout, e.price_levels || [], {
    onToggle: () => showSelection(),
    onHover: (seat, avail) => {
      const p = price[seat.level];
      info.textContent = `${seat.label} · ${p ? money(p.price_cents, e.currency) : ''} · ${avail ? 'available' : 'not available'}`;
    },
  });

  function showSelection() {
    const sel = map.selection();
    chosen.replaceChildren(...sel.map((seat) => h('li', {}, `${seat.label} — ${money(price[seat.level].price_cents, e.currency)} `,
      h('button', { type: 'button', class: 'link', 'aria-label': `Remove ${seat.label}`, onclick: () => map.toggle(seat.index) }, 'remove'))));
    if (!sel.length) chosen.append(h('li', { class: 'muted' }, 'No seats selected.'));
    const total = sel.reduce((a, seat) => a + price[seat.level].price_cents, 0);
    holdButton.textContent = sel.length ? `Hold ${sel.length} seat${sel.length > 1 ? 's' : ''} · ${money(total, e.currency)}` : 'Hold selected seats';
    holdButton.disabled = !sel.length || sel.length > e.max_per_hold;
  }

  async function hold(body, button) {
    button.disabled = true;
    try {
      const res = await api('POST', `/api/events/${id}/holds`, body, { idempotencyKey: newKey() });
      navigate(`/orders/${res.order_id}`);
    } catch (err) {
      if (err.code === 'seats-taken') {
        const lost = map.markTaken(err.body.seats || []);
        toast(`Sorry, ${lost.length ? lost.map((s) => s.label).join(', ') : 'some seats'} just went to someone else. The map is up to date; pick again.`, 'bad');
        refresh();
      } else if (err.code === 'admission-required') {
        toast('Your turn to buy has ended. Join the waiting room again.', 'bad');
        navigate(`/events/${id}/queue`);
      } else {
        toast(err.message, 'bad');
      }
      button.disabled = false;
    }
  }
  holdButton.onclick = () => hold({ seats: map.selection().map((s) => s.id).sort((a, b) => a - b) }, holdButton);

  const seated = layout.sections.filter((s) => s.kind !== 'standing');
  const standing = layout.sections.filter((s) => s.kind === 'standing');
  const quantities = (sel) => Array.from({ length: e.max_per_hold }, (_, i) => h('option', { value: i + 1, selected: i + 1 === sel }, i + 1));

  const bestForm = h('form', { class: 'inline', onsubmit: (ev) => {
      ev.preventDefault();
      const f = new FormData(bestForm);
      const best = { quantity: Number(f.get('quantity')) };
      if (f.get('section')) best.section = f.get('section');
      hold({ best }, bestForm.querySelector('button'));
    } },
    h('p', { class: 'field' }, h('label', { for: 'best-q' }, 'Tickets'), h('select', { id: 'best-q', name: 'quantity' }, quantities(2))),
    h('p', { class: 'field' }, h('label', { for: 'best-s' }, 'Section'), h('select', { id: 'best-s', name: 'section' },
      h('option', { value: '' }, 'Best in the house'), seated.map((s) => h('option', { value: s.code }, s.name)))),
    h('p', { class: 'field' }, h('button', { type: 'submit' }, 'Find best seats')));

  const gaForms = standing.map((sec) => {
    const left = h('span', { class: 'muted' });
    gaRemaining[sec.code] = left;
    const f = h('form', { class: 'inline', onsubmit: (ev) => {
        ev.preventDefault();
        hold({ pool: sec.code, quantity: Number(new FormData(f).get('quantity')) }, f.querySelector('button'));
      } },
      h('p', { class: 'field' }, h('label', { for: 'ga-' + sec.code }, `${sec.name} · ${money(price[sec.price_level].price_cents, e.currency)}`),
        h('select', { id: 'ga-' + sec.code, name: 'quantity' }, quantities(2))),
      h('p', { class: 'field' }, h('button', { type: 'submit' }, 'Get standing tickets')), left);
    return f;
  });

  const legend = h('ul', { class: 'legend' },
    (e.price_levels || []).map((p) => h('li', {}, h('span', { class: 'swatch', style: { background: map.color[p.code] } }), `${p.name} ${money(p.price_cents, e.currency)}`)),
    h('li', {}, h('span', { class: 'swatch taken' }), 'Not available'),
    h('li', {}, h('span', { class: 'swatch selected' }), 'Your selection'));

  main.append(
    h('h1', {}, e.name),
    h('p', { class: 'lead' }, `${e.venue_name} · up to ${e.max_per_hold} tickets per order`),
    soldOut,
    h('div', { class: 'book' },
      h('section', { class: 'map-wrap', 'aria-label': 'Seat map' }, map.controls(), map.el, info, legend, live),
      h('aside', { class: 'panel' },
        h('h2', {}, 'Your seats'), chosen, holdButton,
        h('h2', {}, 'Best available'), bestForm,
        standing.length ? h('h2', {}, 'Standing') : '', gaForms)));
  showSelection();

  let etag = '';
  async function refresh() {
    const res = await fetch(`/api/events/${id}/availability`, { headers: etag ? { 'If-None-Match': etag } : {} });
    if (res.status === 304 || !res.ok) return;
    etag = res.headers.get('ETag') || '';
    const snap = await res.json();
    const lost = map.applySnapshot(snap.available, snap.seat_count);
    tellLost(lost);
    let left = map.available.reduce((a, b) => a + b, 0);
    for (const [code, g] of Object.entries(snap.ga || {})) {
      left += g.remaining;
      if (gaRemaining[code]) gaRemaining[code].textContent = ` ${g.remaining} left`;
    }
    soldOut.hidden = left > 0;
  }
  await refresh();

  // Live changes over SSE; if the stream is unavailable (as behind a
  // buffered Lambda), poll the edge-cached snapshot instead.
  let poll = setInterval(refresh, 30000);
  let stream = null;
  let failures = 0;
  const fallback = () => {
    if (stream) stream.close();
    stream = null;
    clearInterval(poll);
    poll = setInterval(refresh, 2000);
    live.textContent = 'Live updates every 2 seconds.';
  };
  if (window.EventSource) {
    stream = new EventSource(`/api/events/${id}/stream`);
    stream.onopen = () => { failures = 0; live.textContent = 'Live: seats update as others buy.'; };
    stream.addEventListener('change', (m) => {
      const d = JSON.parse(m.data);
      const lost = map.applyDelta(d);
      tellLost(lost);
      for (const [code, n] of Object.entries(d.ga || {})) {
        const el = gaRemaining[code];
        if (el) el.textContent = ` ${Math.max(0, parseInt(el.textContent, 10) + n)} left`;
      }
    });
    stream.addEventListener('resync', refresh);
    stream.onerror = () => { if (++failures >= 3 || stream.readyState === EventSource.CLOSED) fallback(); };
  } else {
    fallback();
  }
  return () => {
    clearInterval(poll);
    if (stream) stream.close();
  };
}

// tellLost says which selected seats went to someone else meanwhile.
function tellLost(lost) {
  if (lost.length) toast(`${lost.map((s) => s.label).join(', ')} was just taken by someone else.`, 'bad');
}
