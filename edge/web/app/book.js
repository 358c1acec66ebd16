// Booking page: the seat map with live availability, the same seats as
// section → row → seat lists (keyboard and screen readers), "best
// available for N" with the prices it may pick, and general-admission
// quantities. A sticky bar carries the selection, its total and the hold
// button. A hold turns into an order and the fan moves on to pay.
import { api, clockTime, eventWhen, layoutOf, money, newKey } from './api.js';
import { h, toast } from './dom.js';
import { navigate } from './nav.js';
import { explain } from './messages.js';
import { SeatMap } from './seatmap.js';

export async function render(main, [id]) {
  const e = await api('GET', `/api/events/${id}`); // fresh: prices and status may have changed
  const loading = h('div', { class: 'loading' },
    h('p', { role: 'status' }, 'Loading the seat map…'), h('progress', { 'aria-label': 'Loading the seat map' }));
  main.append(h('h1', {}, e.name), h('p', { class: 'lead' }, eventWhen(e)), loading);
  return book(main, id, e, loading);
}

async function book(main, id, e, loading) {
  const layout = await layoutOf(e);
  const price = Object.fromEntries((e.price_levels || []).map((p) => [p.code, p]));
  const cost = (code) => (price[code] ? price[code].price_cents : 0);
  const fmt = (cents) => money(cents, e.currency);
  const info = h('p', { class: 'seat-info muted' }, 'Tap or click a section to see its seats, then tap seats to select them.');
  const chosen = h('ul', { class: 'chosen' });
  const holdButton = h('button', { type: 'button', disabled: true }, 'Hold selected seats');
  const summary = h('p', { class: 'bar-summary' });
  const raceNotice = h('p', { class: 'notice bad', role: 'alert', hidden: true });
  const holding = h('p', { class: 'holding', hidden: true });
  // The turn's end sits in the sticky bar, where a fan on a phone looks.
  const turn = h('p', { class: 'turn', hidden: true });
  let turnOver = false;
  const live = h('p', { class: 'muted small', role: 'status' }, 'Connecting to live availability…');
  const gaRemaining = {};
  const soldOut = h('p', { class: 'notice bad', role: 'status', hidden: true },
    'Sold out: every ticket is held or sold right now. Unpaid holds come back on sale within minutes; this map updates by itself. ');
  // Done here: hand the shopping slot to the next fan in line (a release
  // keeps it for the rest of the turn).
  const leave = (label) => h('button', { type: 'button', class: 'link', onclick: async () => {
    await api('DELETE', `/api/events/${id}/queue`).catch(() => {});
    navigate(`/events/${id}`);
  } }, label);
  if (e.waiting_room.enabled) soldOut.append(leave('Leave and let the next fan in'));

  const seated = layout.sections.filter((s) => s.kind !== 'standing');
  const standing = layout.sections.filter((s) => s.kind === 'standing');

  // The lists: section → row → seats, the keyboard and screen-reader way
  // to the same seats as the map.
  const secSelect = h('select', { id: 'pick-s' }, h('option', { value: '' }, 'Choose a section'),
    seated.map((s) => h('option', { value: s.code }, s.name)));
  const rowSelect = h('select', { id: 'pick-r', disabled: true }, h('option', { value: '' }, 'Choose a section first'));
  const seatLegend = h('legend', {}, 'Seats');
  const seatList = h('div', { class: 'seat-list' });
  const seatSet = h('fieldset', { class: 'seat-set', hidden: true }, seatLegend, seatList);
  let chips = new Map(); // seat index → checkbox of the row shown

  const map = new SeatMap(layout, e.price_levels || [], {
    onToggle: () => showSelection(),
    onHover: (seat, rec) => {
      if (seat) info.textContent = `${seat.label} · ${fmt(cost(seat.level))} · ${map.mine.has(seat.index) ? 'held by you' : map.isAvailable(seat.index) ? 'available' : 'not available'}`;
      else if (rec.seats.length) info.textContent = `${rec.sec.name} · ${fmt(cost(rec.sec.price_level))} · ${map.free(rec.sec.code).toLocaleString('en')} seats left`;
    },
    onOpen: (code) => {
      secSelect.value = code;
      showRows(code);
    },
    onCounts: () => {
      showCounts();
      showRange();
      syncChips();
    },
  });

  function showCounts() {
    for (const opt of secSelect.options) {
      if (!opt.value) continue;
      const rec = map.sections[opt.value];
      const n = map.free(opt.value);
      opt.textContent = `${rec.sec.name} · ${fmt(cost(rec.sec.price_level))} · ${n ? n.toLocaleString('en') + ' left' : 'sold out'}`;
    }
    if (secSelect.value) {
      for (const opt of rowSelect.options) {
        const n = rowSeats(secSelect.value, opt.value).filter((i) => map.isAvailable(i)).length;
        opt.textContent = `Row ${opt.value} · ${n ? n + ' free' : 'full'}`;
      }
    }
  }

  const rowSeats = (code, label) => map.sections[code].seats.filter((i) => map.seats[i].row === label);

  function showRows(code) {
    const rows = [...new Set(map.sections[code].seats.map((i) => map.seats[i].row))];
    rowSelect.replaceChildren(...rows.map((r) => h('option', { value: r }, `Row ${r}`)));
    rowSelect.disabled = false;
    rowSelect.value = rows.find((r) => rowSeats(code, r).some((i) => map.isAvailable(i))) || rows[0];
    showCounts();
    showSeats();
  }

  function showSeats() {
    const code = secSelect.value;
    const row = rowSelect.value;
    chips = new Map();
    seatSet.hidden = !code || !row;
    if (seatSet.hidden) return;
    seatLegend.textContent = `Seats in ${map.sections[code].sec.name}, row ${row} · ${fmt(cost(map.sections[code].sec.price_level))} each`;
    seatList.replaceChildren(...rowSeats(code, row).map((i) => {
      const seat = map.seats[i];
      const box = h('input', { type: 'checkbox', value: i, onchange: () => map.toggle(i) });
      chips.set(i, box);
      return h('label', { class: 'chip' }, box, h('span', {}, String(seat.number)));
    }));
    syncChips();
  }

  function syncChips() {
    for (const [i, box] of chips) {
      box.checked = map.selected.has(i);
      box.disabled = !box.checked && !map.isAvailable(i);
      box.closest('label').classList.toggle('taken', box.disabled);
      box.setAttribute('aria-label', `Seat ${map.seats[i].number}${map.mine.has(i) ? ', held by you' : box.disabled ? ', taken' : ''}`);
    }
    rove();
  }

  // rove keeps one Tab stop for the row's seats (the arrow keys move among
  // them): the seat last focused, else the first chosen or free one.
  function rove(to) {
    const boxes = [...chips.values()];
    const stop = to || boxes.find((b) => b.tabIndex === 0 && !b.disabled) || boxes.find((b) => b.checked) || boxes.find((b) => !b.disabled);
    for (const b of boxes) b.tabIndex = b === stop ? 0 : -1;
  }
  seatList.addEventListener('focusin', (ev) => {
    if (chips.has(Number(ev.target.value))) rove(ev.target);
  });

  secSelect.onchange = () => {
    if (!secSelect.value) return;
    map.open(secSelect.value, { quiet: true });
    showRows(secSelect.value);
  };
  // Arrow keys move through the seats of a row like a grid: left and right
  // along the row, up and down to the row in front or behind.
  seatList.onkeydown = (ev) => {
    const boxes = [...chips.values()];
    const i = boxes.indexOf(document.activeElement);
    if (i < 0) return;
    const step = { ArrowLeft: -1, ArrowRight: 1 }[ev.key];
    const rows = { ArrowUp: -1, ArrowDown: 1 }[ev.key];
    if (step) {
      const target = step > 0 ? boxes.slice(i + 1).find((b) => !b.disabled) : boxes.slice(0, i).reverse().find((b) => !b.disabled);
      if (target) target.focus();
    } else if (rows) {
      const r = rowSelect.selectedIndex + rows;
      if (r < 0 || r >= rowSelect.options.length) return;
      rowSelect.selectedIndex = r;
      showSeats();
      const now = [...chips.values()];
      (now.slice(Math.min(i, now.length - 1)).find((b) => !b.disabled) || now.find((b) => !b.disabled) || rowSelect).focus();
    } else {
      return;
    }
    ev.preventDefault();
  };
  rowSelect.onchange = () => {
    showSeats();
    map.show(rowSeats(secSelect.value, rowSelect.value).map((i) => map.seats[i]));
  };

  function showSelection(seat) {
    const sel = map.selection();
    chosen.replaceChildren(...sel.map((t) => h('li', {}, `${t.label} — ${fmt(cost(t.level))} `,
      h('button', { type: 'button', class: 'link', 'aria-label': `Remove ${t.label}`, onclick: () => map.toggle(t.index) }, 'remove'))));
    if (!sel.length) chosen.append(h('li', { class: 'muted' }, 'No seats selected.'));
    const total = sel.reduce((a, t) => a + cost(t.level), 0);
    const tooMany = sel.length > e.max_per_hold;
    // The bar names every seat, by section and row (it wraps rather than
    // cut the selection off on a phone).
    summary.textContent = sel.length
      ? `${grouped(sel)}${tooMany ? ` · at most ${e.max_per_hold} per order` : ''}`
      : holding.hidden ? 'No seats yet' : 'No other seats chosen'; // beside "You're holding N seats", not a lost hold
    summary.title = sel.map((t) => t.label).join(', ');
    holdButton.textContent = sel.length ? `Hold ${sel.length} seat${sel.length > 1 ? 's' : ''} · ${fmt(total)}` : 'Hold selected seats';
    holdButton.disabled = !sel.length || tooMany || turnOver;
    if (seat) raceNotice.hidden = true;
    syncChips();
  }

  async function hold(body, button, seats = []) {
    button.disabled = true;
    map.pending = new Set(seats.map((t) => t.index));
    performance.mark('catraca:hold');
    try {
      const res = await api('POST', `/api/events/${id}/holds`, body, { idempotencyKey: newKey() });
      navigate(`/orders/${res.order_id}`);
    } catch (err) {
      map.pending.clear();
      if (err.code === 'seats-taken') {
        // The loser of a race: name the seats and show the map around them.
        const lost = map.markTaken(err.body.seats || []);
        const kept = map.selection().length;
        raceNotice.textContent = lost.length
          ? `${names(lost)} ${lost.length > 1 ? 'were' : 'was'} taken by another fan a moment before you.${kept ? ' Your other seats are still selected.' : ''} Pick ${lost.length > 1 ? 'other seats' : 'another seat'} on the map.`
          : explain(err);
        raceNotice.hidden = false;
        if (lost.length) map.show(lost);
        refresh();
      } else if (err.code === 'admission-required') {
        toast(explain(err), 'bad');
        navigate(`/events/${id}/queue`);
      } else {
        toast(explain(err), 'bad');
      }
      showSelection();
      if (button !== holdButton) button.disabled = false;
    } finally {
      map.pending = new Set();
    }
  }
  holdButton.onclick = () => {
    const sel = map.selection();
    if (sel.length) hold({ seats: sel.map((t) => t.id).sort((a, b) => a - b) }, holdButton, sel);
  };

  const quantities = (sel) => Array.from({ length: e.max_per_hold }, (_, i) => h('option', { value: i + 1, selected: i + 1 === sel }, i + 1));
  const range = h('p', { class: 'muted small', id: 'best-range' });
  const bestForm = h('form', { class: 'inline', onsubmit: (ev) => {
      ev.preventDefault();
      const f = new FormData(bestForm);
      const best = { quantity: Number(f.get('quantity')) };
      if (f.get('section')) best.section = f.get('section');
      hold({ best }, bestForm.querySelector('button'));
    } },
    h('p', { class: 'field' }, h('label', { for: 'best-q' }, 'Tickets'), h('select', { id: 'best-q', name: 'quantity' }, quantities(2))),
    h('p', { class: 'field' }, h('label', { for: 'best-s' }, 'Section'), h('select', { id: 'best-s', name: 'section', onchange: () => showRange() },
      h('option', { value: '' }, 'Best in the house'), seated.map((s) => h('option', { value: s.code }, s.name)))),
    h('p', { class: 'field' }, h('button', { type: 'submit', 'aria-describedby': 'best-range' }, 'Find best seats')));

  // showRange tells, before the hold, what best available may cost.
  function showRange() {
    const code = bestForm.elements.section.value;
    const prices = seated.filter((s) => (!code || s.code === code) && map.free(s.code) > 0).map((s) => cost(s.price_level));
    if (!prices.length) {
      range.textContent = 'No seats are left there right now.';
      return;
    }
    const lo = Math.min(...prices);
    const hi = Math.max(...prices);
    range.textContent = lo === hi
      ? `Each ticket costs ${fmt(lo)}.`
      : `Each ticket costs from ${fmt(lo)} to ${fmt(hi)}: the best seats left are picked, whatever their price. You see the seats and total before paying.`;
  }

  const gaForms = standing.map((sec) => {
    const left = h('span', { class: 'muted' });
    gaRemaining[sec.code] = left;
    const f = h('form', { class: 'inline', onsubmit: (ev) => {
        ev.preventDefault();
        hold({ pool: sec.code, quantity: Number(new FormData(f).get('quantity')) }, f.querySelector('button'));
      } },
      h('p', { class: 'field' }, h('label', { for: 'ga-' + sec.code }, `${sec.name} · ${fmt(cost(sec.price_level))}`),
        h('select', { id: 'ga-' + sec.code, name: 'quantity' }, quantities(2))),
      h('p', { class: 'field' }, h('button', { type: 'submit' }, 'Get standing tickets')), left);
    return f;
  });

  const legend = h('ul', { class: 'legend' },
    (e.price_levels || []).map((p) => h('li', {}, h('span', { class: 'swatch', style: { background: map.color[p.code] } }), `${p.name} ${fmt(p.price_cents)}`)),
    h('li', {}, h('span', { class: 'swatch taken' }), 'Not available'),
    h('li', {}, h('span', { class: 'swatch selected' }), 'Your selection'),
    h('li', {}, h('span', { class: 'swatch mine' }), 'Held by you'));

  // Busy until the first availability arrives: until then every seat
  // reads as taken.
  const mapWrap = h('section', { class: 'map-wrap', 'aria-label': 'Seat map', 'aria-busy': 'true' }, map.controls(), map.el, info, legend, live);
  loading.remove();
  main.append(
    soldOut,
    h('div', { class: 'book' },
      mapWrap,
      h('aside', { class: 'panel' },
        h('h2', {}, 'Your seats'), chosen,
        h('h2', {}, 'Best available'), bestForm, range,
        h('h2', {}, 'Pick seats from a list'),
        h('p', { class: 'field' }, h('label', { for: 'pick-s' }, 'Section'), secSelect),
        h('p', { class: 'field' }, h('label', { for: 'pick-r' }, 'Row'), rowSelect),
        seatSet,
        standing.length ? h('h2', {}, 'Standing') : '', gaForms,
        e.waiting_room.enabled ? h('p', { class: 'small muted' }, 'Done buying? ', leave('Let the next fan in')) : '')),
    h('div', { class: 'actionbar' }, raceNotice, turn, holding, h('div', { class: 'bar-row' }, summary, holdButton)));
  document.body.classList.add('has-bar');
  map.reset();
  const resized = new ResizeObserver(() => map.setView(map.view));
  resized.observe(map.el);
  const bar = main.querySelector('.actionbar');
  const barResized = new ResizeObserver(() => document.body.style.setProperty('--bar', `${bar.offsetHeight}px`));
  barResized.observe(bar);
  showSelection();

  let etag = '';
  async function refresh() {
    const res = await fetch(`/api/events/${id}/availability`, { headers: etag ? { 'If-None-Match': etag } : {} });
    if (res.status === 304 || !res.ok) return;
    etag = res.headers.get('ETag') || '';
    const snap = await res.json();
    tellLost(map.applySnapshot(snap.available, snap.seat_count));
    mapWrap.setAttribute('aria-busy', 'false');
    let left = map.available.reduce((a, b) => a + b, 0);
    for (const [code, g] of Object.entries(snap.ga || {})) {
      left += g.remaining;
      if (gaRemaining[code]) gaRemaining[code].textContent = ` ${g.remaining} left`;
    }
    soldOut.hidden = left > 0;
  }
  await refresh();
  requestAnimationFrame(() => performance.mark('catraca:map-live'));
  const stopHolds = showHolds(id, map, holding, () => showSelection());
  // Once the turn is over the server refuses new holds: say so at the
  // buttons, and how to get another turn (holds already made stay payable).
  const stopTurn = e.waiting_room.enabled ? showTurn(id, turn, () => {
    turnOver = true;
    for (const b of main.querySelectorAll('form.inline button')) b.disabled = true;
    showSelection();
    turn.className = 'turn notice bad';
    turn.replaceChildren('Your turn to buy has ended, so no more seats can be held. ',
      h('a', { href: `/events/${id}/queue` }, 'Join the line again'));
    toast('Your turn to buy has ended.', 'bad');
  }) : () => {};

  // tellLost says which selected seats went to someone else while the fan
  // was choosing (never the fan's own hold: those seats are pending).
  function tellLost(lost) {
    if (!lost.length) return;
    raceNotice.textContent = `${names(lost)} ${lost.length > 1 ? 'were' : 'was'} just taken by another fan and ${lost.length > 1 ? 'are' : 'is'} no longer in your selection.`;
    raceNotice.hidden = false;
  }

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
      tellLost(map.applyDelta(d));
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
    stopHolds();
    stopTurn();
    clearInterval(poll);
    if (stream) stream.close();
    resized.disconnect();
    barResized.disconnect();
    document.body.classList.remove('has-bar');
    document.body.style.removeProperty('--bar');
  };
}

// showHolds finds the fan's own unpaid holds at this event (back from
// checkout, or from another tab): the map shows their seats as the fan's,
// not "not available", and the bar leads back to paying for them, with the
// time left. It reads them again when the soonest one ends; shown runs
// once the line is shown or hidden.
function showHolds(id, map, el, shown) {
  let timer = null;
  let stopped = false;
  const read = async () => {
    const res = await api('GET', '/api/me/orders').catch(() => ({ orders: [] }));
    if (stopped) return;
    const open = res.orders.filter((o) => o.event_id === Number(id) && o.status === 'pending' && o.hold_status === 'active'
      && new Date(o.hold_expires_at) > Date.now()).sort((a, b) => new Date(a.hold_expires_at) - new Date(b.hold_expires_at));
    map.setMine(open.flatMap((o) => o.items.filter((it) => it.seat_index !== undefined).map((it) => it.seat_index)));
    clearInterval(timer);
    el.hidden = !open.length;
    shown();
    if (!open.length) return;
    const o = open[0];
    const n = open.reduce((a, x) => a + x.items.reduce((b, it) => b + it.quantity, 0), 0);
    const seats = open.every((x) => x.items.every((it) => it.seat_index !== undefined));
    const left = h('span', { class: 'muted' });
    el.replaceChildren(`You're holding ${n} ${seats ? 'seat' : 'ticket'}${n > 1 ? 's' : ''} — `,
      h('a', { href: `/orders/${o.id}` }, 'continue to pay'), ' ', left);
    const ends = new Date(o.hold_expires_at);
    const tick = () => {
      const s = Math.max(0, Math.round((ends - Date.now()) / 1000));
      left.textContent = `· ${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')} left (until ${clockTime(ends)})`;
      if (s === 0) read();
    };
    tick();
    timer = setInterval(tick, 1000);
  };
  read();
  return () => {
    stopped = true;
    clearInterval(timer);
  };
}

// grouped names seats short, a row at a time: "101 row A: 3, 4 · 102 row B: 7".
function grouped(seats) {
  const rows = new Map();
  for (const t of [...seats].sort((a, b) => a.number - b.number)) {
    const key = `${t.section} row ${t.row}`;
    if (!rows.has(key)) rows.set(key, []);
    rows.get(key).push(t.number);
  }
  return [...rows].map(([key, numbers]) => `${key}: ${numbers.join(', ')}`).join(' · ');
}

// names lists seats for a sentence.
function names(seats) {
  const labels = seats.map((t) => t.label);
  return labels.length > 1 ? `${labels.slice(0, -1).join(', ')} and ${labels.at(-1)}` : labels[0];
}

// showTurn shows when the fan's shopping turn ends, as a clock time and
// minutes left, says so aloud at 2 and 1 minutes left, and calls over when
// it has ended.
function showTurn(id, el, over) {
  const key = `catraca.turn.${id}`;
  let timer = null;
  const said = new Set();
  const tick = () => {
    const until = sessionStorage.getItem(key);
    if (!until) return;
    const ms = new Date(until) - Date.now();
    el.hidden = false;
    if (ms <= 0) {
      clearInterval(timer);
      over();
      return;
    }
    const left = Math.round(ms / 60000);
    el.textContent = left > 0
      ? `Your turn to buy ends at ${clockTime(until)} (${left} min left).`
      : `Your turn to buy ends at ${clockTime(until)}: less than a minute left.`;
    for (const m of [2, 1]) {
      if (left <= m && !said.has(m)) {
        said.add(m);
        if (left > 0) toast(`${left === 1 ? 'One minute' : left + ' minutes'} left in your turn to buy.`, 'bad');
      }
    }
  };
  if (!sessionStorage.getItem(key)) {
    api('GET', `/api/events/${id}/queue`).then((st) => {
      if (st.admission_expires_at) sessionStorage.setItem(key, st.admission_expires_at);
      tick();
    }).catch(() => {});
  }
  tick();
  timer = setInterval(tick, 1000);
  return () => clearInterval(timer);
}
