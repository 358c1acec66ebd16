// The live control room of an event on sale: one call a second to
// /api/events/{id}/control-room (built at most once a second however many
// organizers watch), drawn as plots of the last ten minutes, the seat map
// coloured by state, and the controls: pause or resume admission, change
// the ceiling, stop the sale, each confirmed first.
import { api, layoutOf, money } from '../api.js';
import { h, s } from '../dom.js';
import { SeatMap } from '../seatmap.js';
import { confirm } from './confirm.js';
import { statusTag } from './events.js';
import { bars, lines, short, STATE_COLORS } from './plot.js';
import { frame, problemText } from './shell.js';

const POLL_MS = 1000;

// pick lists the organizer's events that have a control room.
export async function pick(main) {
  const body = frame(main, 'live', 'Control room');
  const { events } = await api('GET', '/api/organizer/events');
  const live = events.filter((e) => ['scheduled', 'on_sale', 'sold_out', 'closed'].includes(e.status));
  body.append(live.length
    ? h('ul', { class: 'events' }, live.map((e) => h('li', { class: 'card' },
        h('h2', {}, h('a', { href: `/organizer/events/${e.id}/live` }, e.name)),
        h('p', {}, statusTag(e), ' ', e.waiting_room.enabled ? 'Waiting room' : 'No waiting room'))))
    : h('p', {}, 'No event is scheduled or on sale.'));
}

// A seat map that only shows: seats are not picked here.
class StateMap extends SeatMap {
  toggle() {}
}

const seconds = (n) => {
  if (n === null || n === undefined) return '–';
  if (n < 60) return `${n} s`;
  const m = Math.floor(n / 60);
  return m < 60 ? `${m} min ${n % 60} s` : `${Math.floor(m / 60)} h ${m % 60} min`;
};
const last = (a) => (a && a.length ? a[a.length - 1] : null);

// jump warns when a new ceiling is far from the one set (200 typed as
// 200150): more than double or less than half.
function jump(was, next) {
  if (!was || (next <= 2 * was && next * 2 >= was)) return '';
  const times = next > was ? `${Math.round(next / was)} times` : `1/${Math.round(was / next)} of`;
  return `Check the number: ${next} is ${times} the ceiling set now (${was}).`;
}

// limitNote says why the shoppers' limit shown is below the ceiling set:
// the room adapts it to how fast holds answer, up to the ceiling.
const limitNote = (q) => (q.ceiling_adaptive < q.ceiling_configured
  ? `(limit now ${short(q.ceiling_adaptive)} of the ${short(q.ceiling_configured)} set: the room raises it step by step while holds answer fast, and lowers it when they slow down)`
  : '');

// room draws the control room of event id.
export async function room(main, [id]) {
  const e = await api('GET', `/api/organizer/events/${id}`);
  const body = frame(main, 'live', `Control room: ${e.name}`);
  const updated = h('span', { class: 'muted small' });
  const status = h('span', {});
  const result = h('p', { class: 'notice', role: 'status', hidden: true });
  const tiles = h('dl', { class: 'tiles' });
  const plots = h('div', { class: 'plots' });
  const sections = h('div', {});
  const mapBox = h('div', { class: 'state-map' });
  const pauseBtn = h('button', { type: 'button' }, 'Pause admission');
  const ceilingIn = h('input', { id: 'ceiling', name: 'ceiling', type: 'number', min: '1', step: '1', required: true, inputmode: 'numeric' });
  const stopBtn = h('button', { type: 'button', class: 'danger' }, 'Stop the sale');
  body.append(
    h('p', {}, status, ' ', updated),
    h('section', { 'aria-labelledby': 'controls-h', class: 'controls' },
      h('h2', { id: 'controls-h' }, 'Controls'),
      h('div', { class: 'inline' },
        pauseBtn,
        h('form', { class: 'inline', onsubmit: (ev) => { ev.preventDefault(); setCeiling(); } },
          h('p', { class: 'field' }, h('label', { for: 'ceiling' }, 'Ceiling (most fans shopping at once)'), ceilingIn),
          h('button', { type: 'submit', class: 'secondary' }, 'Set ceiling')),
        stopBtn),
      result),
    h('section', { 'aria-labelledby': 'now-h' }, h('h2', { id: 'now-h' }, 'Now'), tiles),
    h('section', { 'aria-labelledby': 'plots-h' }, h('h2', { id: 'plots-h' }, 'Last 10 minutes'), plots),
    h('section', { 'aria-labelledby': 'seats-h' }, h('h2', { id: 'seats-h' }, 'Seats'), h('div', { class: 'seats-grid' }, mapBox, sections)));

  let view = null;
  let map = null;
  layoutOf(e).then((layout) => {
    map = new StateMap(layout, e.price_levels || [], {});
    map.el.setAttribute('aria-label', `Seat map of ${layout.name}: each section filled by its share of seats sold (red), held (amber) and available (green).`);
    map.el.prepend(s('defs'));
    mapBox.append(map.controls(), map.el,
      h('ul', { class: 'legend' }, ['Sold', 'Held', 'Available'].map((t, i) =>
        h('li', {}, h('span', { class: 'swatch', style: { background: STATE_COLORS[i] } }), t))));
    if (view) paintMap(map, view);
  }).catch(() => mapBox.append(h('p', { class: 'muted' }, 'No seat map for this event.')));

  const say = (text, kind = 'good') => {
    result.hidden = false;
    result.className = `notice ${kind}`;
    result.textContent = text;
  };
  const act = async (question, call, done) => {
    if (!(await confirm(question))) return;
    let out;
    try {
      out = await call();
    } catch (err) {
      // 412: what this control sets changed since these figures (another
      // tab); the API says what. Say "now up to date" only once they are,
      // so a control pressed after reading it starts from them.
      await refresh();
      say(err.status === 412 ? `${problemText(err)} The figures below are now up to date; try again.` : problemText(err), 'bad');
      return;
    }
    await refresh();
    say(done(out));
  };
  // Each control sends only what it changes, and the API's If-Match guards
  // only that field: a ceiling right after a resume (or a price change in
  // another tab) applies to the event as it is. A pause sends no If-Match:
  // stopping the line is always safe. A resume and a ceiling do, so a page
  // that missed someone's pause cannot undo it, nor replace a ceiling it
  // never saw.
  const admission = (body, ifMatch) =>
    api('PUT', `/api/events/${e.id}/admission`, body, ifMatch ? { headers: { 'If-Match': ifMatch } } : {});
  pauseBtn.addEventListener('click', () => {
    const paused = !view.queue.paused;
    const etag = view.event_etag;
    act({ title: paused ? 'Pause admission?' : 'Resume admission?',
      text: paused
        ? 'Nobody new is let in from the waiting room until you resume. Fans keep their places; fans already shopping keep buying.'
        : 'The waiting room starts letting fans in again within a second, up to the ceiling.',
      action: paused ? 'Pause admission' : 'Resume admission' },
    () => admission({ paused }, paused ? null : etag),
    (ev) => (ev.waiting_room.paused ? 'Admission paused: nobody new is let in.' : 'Admission resumed.'));
  });
  async function setCeiling() {
    const ceiling = Number(ceilingIn.value);
    if (!Number.isInteger(ceiling) || ceiling < 1) return say('The ceiling is a whole number of shoppers, at least 1.', 'bad');
    const was = view.queue.ceiling_configured;
    const etag = view.event_etag;
    act({ title: `Change the ceiling from ${was} to ${ceiling}?`,
      warning: jump(was, ceiling),
      text: `At most ${ceiling} fans will shop at once (now ${was}). A lower ceiling applies at the next admission; nobody shopping is sent back.`,
      action: 'Set ceiling' },
    () => admission({ ceiling }, etag),
    (ev) => `Ceiling set to ${ev.waiting_room.ceiling}.`);
  }
  stopBtn.addEventListener('click', () => act({ title: 'Stop the sale?',
    text: 'Sales close now: the waiting room closes and nobody can hold seats. Orders already paid stay paid. You can open sales again from Events.',
    action: 'Stop the sale', danger: true },
  () => api('PUT', `/api/events/${e.id}/status`, { status: 'closed' }),
  () => 'Sales are closed.'));

  // One read at a time: the timer skips a beat rather than pile up.
  let inflight = null;
  const poll = (cache) => {
    inflight ||= api('GET', `/api/events/${e.id}/control-room`, undefined, { cache })
      .then((v) => { view = v; draw(v); })
      .catch((err) => { updated.textContent = `Not updated: ${problemText(err)}`; })
      .finally(() => { inflight = null; });
    return inflight;
  };
  // After a control, a read under way, or the browser's copy of a second
  // ago (max-age=1), may predate the write: wait for the one, skip the
  // other, so the next control starts from the event as it is.
  const refresh = () => (inflight || Promise.resolve()).then(() => poll('no-cache'));

  function draw(v) {
    const q = v.queue;
    const cur = v.currency;
    const sr = v.series;
    status.replaceChildren(statusTag(v), ' ', h('span', { class: 'tag' + (q.paused ? ' bad' : '') }, q.paused ? 'Admission paused' : 'Admitting'));
    updated.textContent = `Updated ${new Date(v.now).toLocaleTimeString('en')}`;
    pauseBtn.textContent = q.paused ? 'Resume admission' : 'Pause admission';
    pauseBtn.disabled = !q.enabled;
    stopBtn.disabled = v.status === 'closed' || v.status === 'cancelled';
    if (document.activeElement !== ceilingIn && !ceilingIn.value) ceilingIn.value = q.ceiling_configured;
    // data-value carries the exact figure (tests read it).
    const tile = (key, label, value, shown, note) => h('div', { class: 'tile' }, h('dt', {}, label),
      h('dd', { 'data-figure': key, 'data-value': value ?? '' }, shown, note ? h('span', { class: 'small muted' }, ' ' + note) : null));
    tiles.replaceChildren(
      tile('waiting', 'People waiting', q.waiting + q.prequeue, short(q.waiting + q.prequeue), q.prequeue ? `(${short(q.prequeue)} before the draw)` : ''),
      tile('eta', 'Line clears in', q.eta_seconds, seconds(q.eta_seconds)),
      tile('admitted', 'Admitted so far', q.admitted_total, short(q.admitted_total), `(${short(q.admitted_last_minute)} last minute)`),
      tile('active', 'Shopping now', q.active, `${short(q.active)} / ${short(q.ceiling_adaptive)}`, limitNote(q)),
      tile('revenue', 'Revenue', v.sales.revenue_cents, money(v.sales.revenue_cents, cur)),
      tile('sold', 'Tickets sold', v.sales.tickets_sold, short(v.sales.tickets_sold)),
      tile('queued', 'Payments queued', v.payments.queued, short(v.payments.queued), '(behind the PSP limit)'),
      tile('psp-errors', 'PSP errors / min', last(sr.psp_errors_per_min), short(last(sr.psp_errors_per_min))),
      tile('p99', 'Hold p99', last(sr.hold_p99_ms), `${short(last(sr.hold_p99_ms))} ms`),
      tile('5xx', '5xx / min', last(sr.http_5xx_per_min), short(last(sr.http_5xx_per_min))));
    const step = sr.step_seconds;
    const cents = (c) => (c === null || c === undefined ? '–' : money(c, cur));
    plots.replaceChildren(
      lines({ id: 'plot-waiting', title: 'People waiting', step, series: [{ label: 'Waiting', values: sr.waiting }] }),
      lines({ id: 'plot-flow', title: 'Joins and admissions per minute', step, series: [{ label: 'Joins', values: sr.joins_per_min }, { label: 'Admissions', values: sr.admissions_per_min }] }),
      lines({ id: 'plot-active', title: 'Shopping now against the ceiling', step, series: [{ label: 'Shopping', values: sr.active }, { label: 'Ceiling', values: sr.ceiling }],
        note: last(sr.active) && last(sr.active) >= last(sr.ceiling) ? 'At the ceiling: every shopping slot is taken (the two lines coincide), so the next fan waits for one to free up.' : '' }),
      lines({ id: 'plot-holds', title: 'Holds and seat collisions per minute', step, series: [{ label: 'Holds', values: sr.holds_per_min }, { label: 'Collisions', values: sr.collisions_per_min }] }),
      lines({ id: 'plot-revenue', title: `Revenue (${cur})`, step, format: cents, axis: (c) => short(c / 100), series: [{ label: 'Revenue', values: sr.revenue_cents }] }),
      lines({ id: 'plot-sold', title: 'Tickets sold', step, series: [{ label: 'Sold', values: sr.tickets_sold }] }),
      lines({ id: 'plot-psp', title: 'Payments queued and PSP errors per minute', step, series: [{ label: 'Queued', values: sr.payments_queued }, { label: 'PSP errors', values: sr.psp_errors_per_min }] }),
      lines({ id: 'plot-health', title: 'Hold p99 (ms) and 5xx per minute', step, series: [{ label: 'Hold p99 ms', values: sr.hold_p99_ms }, { label: '5xx', values: sr.http_5xx_per_min }] }));
    const rows = v.seats.sections.map((x) => ({ label: x.code, parts: [x.sold, x.held, x.available] }))
      .concat(v.pools.map((p) => ({ label: p.code, parts: [p.sold, p.held, p.available] })));
    sections.replaceChildren(rows.length
      ? bars({ id: 'plot-sections', title: 'Sold, held and available by section', names: ['sold', 'held', 'available'], rows })
      : h('p', { class: 'muted' }, 'No seats.'));
    if (map) paintMap(map, v);
  }

  await poll();
  const timer = setInterval(poll, POLL_MS);
  return () => clearInterval(timer);
}

// paintMap fills each section with its shares of sold, held and available
// seats (a hard-stop gradient), and greys taken seats when zoomed in.
function paintMap(map, v) {
  const defs = map.el.querySelector('defs');
  defs.replaceChildren();
  for (const x of v.seats.sections) {
    const rec = map.sections[x.code];
    if (!rec || !rec.poly) continue;
    const g = s('linearGradient', { id: `st-${x.code}` });
    const total = x.total || 1;
    let at = 0;
    [x.sold, x.held, x.available].forEach((n, i) => {
      g.append(s('stop', { offset: at, 'stop-color': STATE_COLORS[i] }));
      at += n / total;
      g.append(s('stop', { offset: at, 'stop-color': STATE_COLORS[i] }));
    });
    defs.append(g);
    rec.poly.setAttribute('fill', `url(#st-${x.code})`);
  }
  // A seat is available when neither sold nor held.
  const sold = Uint8Array.from(atob(v.seats.sold), (c) => c.charCodeAt(0));
  const held = Uint8Array.from(atob(v.seats.held), (c) => c.charCodeAt(0));
  const free = new Uint8Array(Math.ceil(v.seats.seat_count / 8));
  for (let i = 0; i < free.length; i++) free[i] = ~((sold[i] || 0) | (held[i] || 0)) & 0xff;
  map.applySnapshot(btoa(String.fromCharCode(...free)), v.seats.seat_count);
}
