// The fan's tickets at the door. Each code is signed for one 15-second step,
// so a screenshot stops working within a minute. The list comes a page at a
// time and carries codes only for events near their doors; opening a ticket
// fetches its codes. Whatever shows codes holds the next minute of them and
// rotates through them without signal, refreshed every 30 s while online.
import { api, when } from './api.js';
import { h, s, toast } from './dom.js';
import { explain } from './messages.js';

const QUIET = 4; // light modules around a code: scanners need them
const PAGE = 20;

export async function render(main) {
  main.append(h('h1', {}, 'My tickets'));
  const live = liveTickets();
  main.append(live.el);
  await live.ready;
  return live.stop;
}

// qrPath is the SVG path of a QR module matrix ({size, modules}: base64,
// one bit a module, row by row): a rectangle per run of dark modules.
export function qrPath(m) {
  const bits = Uint8Array.from(atob(m.modules), (c) => c.charCodeAt(0));
  const dark = (i) => (bits[i >> 3] >> (7 - (i & 7))) & 1;
  let d = '';
  for (let y = 0; y < m.size; y++) {
    for (let x = 0; x < m.size;) {
      let n = 0;
      while (x + n < m.size && dark(y * m.size + x + n)) n++;
      if (n) d += `M${x} ${y}h${n}v1h-${n}z`;
      x += n || 1;
    }
  }
  return d;
}

// qrBox is an SVG that draw(matrix) paints, quiet zone included, at px.
function qrBox(px, label) {
  const bg = s('rect', { fill: '#fff' });
  const path = s('path', { fill: '#000' });
  const svg = s('svg', { class: 'qr', width: px, height: px, role: 'img', 'aria-label': label, 'shape-rendering': 'crispEdges' });
  svg.append(bg, path);
  svg.style.display = 'none';
  let drawn = null;
  return {
    svg,
    draw(m) {
      svg.style.display = m ? '' : 'none';
      if (!m || m === drawn) return;
      drawn = m;
      const side = m.size + 2 * QUIET;
      svg.setAttribute('viewBox', `${-QUIET} ${-QUIET} ${side} ${side}`);
      for (const [k, v] of Object.entries({ x: -QUIET, y: -QUIET, width: side, height: side })) bg.setAttribute(k, v);
      path.setAttribute('d', qrPath(m));
    },
  };
}

// liveTickets draws the caller's tickets (only those in ids, if given,
// each read on its own) and rotates their codes; stop() ends the timers.
export function liveTickets(ids) {
  const el = h('div', {});
  const list = h('ul', { class: 'tickets' });
  const more = h('button', { type: 'button', class: 'secondary', hidden: true, onclick: () => page(cursor).catch((err) => toast(explain(err), 'bad')) }, 'More tickets');
  el.append(list, more);
  let skew = 0; // server clock minus ours
  let cursor = '';
  let refreshed = Date.now();
  const shown = new Map(); // ticket id → { t, li, qr, left, code, later }

  const mine = (id) => api('GET', `/api/me/tickets/${id}`);

  async function load() {
    shown.clear();
    list.replaceChildren();
    if (ids) {
      const res = await Promise.all(ids.map((id) => mine(id).catch(() => null)));
      for (const r of res) if (r) put(r.ticket, r.now);
    } else {
      await page('');
    }
    if (!shown.size) list.append(h('li', {}, 'No tickets yet.'));
    tick();
  }

  async function page(after) {
    const res = await api('GET', `/api/me/tickets?limit=${PAGE}${after ? '&cursor=' + encodeURIComponent(after) : ''}`);
    for (const t of res.tickets) put(t, res.now);
    cursor = res.next_cursor || '';
    more.hidden = !cursor;
    tick();
    return res;
  }

  // put draws a ticket or updates the one shown: codes replace the ones
  // held, a ticket without codes keeps them (they expire on their own).
  function put(t, now) {
    skew = new Date(now) - Date.now();
    const old = shown.get(t.id);
    if (old && old.t.status === t.status) {
      old.t = { ...t, codes: t.codes || old.t.codes, static_code: t.static_code || old.t.static_code };
      if (old.t.static_code) old.printable?.(old.t.static_code.qr);
      return;
    }
    const c = card(t);
    if (old) old.li.replaceWith(c.li);
    else list.append(c.li);
    shown.set(t.id, c);
  }

  async function open(id) {
    try {
      const r = await mine(id);
      put(r.ticket, r.now);
      tick();
    } catch (err) {
      toast(explain(err), 'bad');
    }
  }

  function card(t) {
    const qr = qrBox(240, `Entry code for ${t.seat}`);
    const code = h('p', { class: 'code small muted' });
    const left = h('p', { class: 'small', 'aria-live': 'off' });
    // Codes come with the list from live_from until the event is past
    // (12 h after its start, as the server cuts the list).
    const past = new Date(t.starts_at).getTime() + 12 * 3600e3 < Date.now() + skew;
    const later = h('p', { class: 'small' }, past ? 'This event is over. ' : `Your live code shows here from ${when(t.live_from)}. `,
      h('button', { type: 'button', class: 'secondary', onclick: () => open(t.id) }, 'Show code now'));
    const li = h('li', { class: 'ticket', 'data-ticket': t.id },
      h('p', {}, h('strong', {}, t.event_name || `Event ${t.event_id}`)),
      t.starts_at ? h('p', { class: 'small muted' }, when(t.starts_at)) : null,
      t.status === 'valid' ? [qr.svg, later, left, code] : h('p', { class: 'notice ' + (t.status === 'used' ? 'good' : 'bad') },
        t.status === 'used' ? `Used at the door${t.checked_in_at ? ' ' + when(t.checked_in_at) : ''}.` : t.refunded ? 'Refunded: this ticket no longer admits anyone; its price went back to the buyer.' : 'Void: this ticket no longer admits anyone.'),
      h('p', {}, h('strong', {}, t.seat)),
      h('p', { class: 'small' }, t.holder));
    const c = { t, li, qr, left, code, later };
    if (t.status === 'valid') {
      const print = qrBox(160, 'Printable entry code');
      const details = h('details', { hidden: true }, h('summary', {}, 'Printable code'), print.svg,
        h('p', { class: 'small' }, 'This code does not change. Anyone with a copy can get in once, and whoever is scanned first wins: print it only for yourself and keep it private.'));
      li.append(details);
      c.printable = (m) => {
        details.hidden = false;
        print.draw(m);
      };
      if (t.static_code) c.printable(t.static_code.qr);
      if (t.transfers_left > 0) li.append(transferForm(t));
    }
    return c;
  }

  function transferForm(t) {
    const email = h('input', { type: 'email', name: 'email', required: true, 'aria-label': 'Their email', placeholder: 'their email' });
    const send = h('button', { type: 'submit', class: 'secondary' }, 'Send');
    let sure = false; // the first press asks, the second sends
    email.oninput = () => {
      sure = false;
      send.textContent = 'Send';
    };
    return h('details', {}, h('summary', {}, 'Send to a friend'),
      h('form', { class: 'inline', onsubmit: async (e) => {
        e.preventDefault();
        if (!sure) {
          sure = true;
          send.textContent = 'Yes, send it: my code stops working';
          return;
        }
        send.disabled = true;
        try {
          const res = await api('POST', `/api/tickets/${t.id}/transfer`, { email: email.value });
          toast(`Sent to ${res.to}. The ticket is theirs now.`);
          await load();
        } catch (err) {
          toast(explain(err), 'bad');
          send.disabled = false;
        }
      } }, email, send),
      h('p', { class: 'small muted' }, `They need a catraca account. ${t.transfers_left === 1 ? 'This ticket can be sent once.' : `It can be sent ${t.transfers_left} more times.`}`));
  }

  // refresh gets new codes for every ticket showing some: the list's
  // first page (where tickets near their doors are), then each one it
  // did not cover. A failure keeps the codes held.
  async function refresh() {
    const covered = new Set();
    if (!ids) {
      const res = await api('GET', `/api/me/tickets?limit=${PAGE}`).catch(() => null);
      for (const t of res?.tickets || []) {
        if (!shown.has(t.id)) continue;
        put(t, res.now);
        if (t.codes) covered.add(t.id);
      }
    }
    await Promise.all([...shown.values()].filter((c) => c.t.codes && c.t.status === 'valid' && !covered.has(c.t.id))
      .map((c) => mine(c.t.id).then((r) => put(r.ticket, r.now), (err) => {
        if (err.status !== 404) return;
        c.li.remove(); // sent away: its codes are no longer this fan's
        shown.delete(c.t.id);
      })));
    tick();
  }

  function tick() {
    const now = Date.now() + skew;
    for (const c of shown.values()) {
      if (c.t.status !== 'valid') continue;
      const codes = c.t.codes || [];
      const cur = codes.find((x) => new Date(x.from) <= now && now < new Date(x.until));
      c.later.hidden = codes.length > 0;
      c.qr.draw(cur?.qr);
      if (!codes.length) {
        c.left.textContent = c.code.textContent = '';
      } else if (!cur) {
        c.code.textContent = '';
        c.left.textContent = 'Offline too long: connect to the internet to show your live code.';
      } else {
        c.code.textContent = cur.code;
        c.left.textContent = `Live code: changes in ${Math.ceil((new Date(cur.until) - now) / 1000)} s. Screenshots do not work.`;
      }
    }
    // The next minute of codes, every 30 s while online.
    if (Date.now() - refreshed > 30000) {
      refreshed = Date.now();
      refresh().catch(() => {});
    }
  }

  const timer = setInterval(tick, 1000);
  return { el, ready: load(), stop: () => clearInterval(timer) };
}
