// The fan's tickets at the door. Each code is signed for one 15-second step,
// so a screenshot stops working within a minute; the page gets the codes of
// the next minute at a time and keeps rotating through them without signal.
import { api, when } from './api.js';
import { h, toast } from './dom.js';
import { explain } from './messages.js';

export async function render(main) {
  main.append(h('h1', {}, 'My tickets'));
  const live = liveTickets();
  main.append(live.el);
  await live.ready;
  return live.stop;
}

// liveTickets draws the caller's tickets (only those in ids, if given) and
// rotates their codes; stop() ends the timers.
export function liveTickets(ids) {
  const el = h('ul', { class: 'tickets' });
  let data = null;
  let skew = 0; // server clock minus ours
  let fetched = 0;
  const cards = new Map();

  async function load() {
    const res = await api('GET', '/api/me/tickets');
    skew = new Date(res.now) - Date.now();
    fetched = Date.now();
    data = res.tickets.filter((t) => !ids || ids.includes(t.id));
    cards.clear();
    el.replaceChildren(...(data.length ? data.map(card) : [h('li', {}, 'No tickets yet.')]));
    tick();
  }

  function card(t) {
    const img = h('img', { width: 240, height: 240, alt: `Entry code for ${t.seat}` });
    const code = h('p', { class: 'code small muted' });
    const left = h('p', { class: 'small', 'aria-live': 'off' });
    const li = h('li', { class: 'ticket', 'data-ticket': t.id },
      h('p', {}, h('strong', {}, t.event_name || `Event ${t.event_id}`)),
      t.starts_at ? h('p', { class: 'small muted' }, when(t.starts_at)) : null,
      t.status === 'valid' ? [img, left, code] : h('p', { class: 'notice ' + (t.status === 'used' ? 'good' : 'bad') },
        t.status === 'used' ? `Used at the door${t.checked_in_at ? ' ' + when(t.checked_in_at) : ''}.` : 'Void: this ticket no longer admits anyone.'),
      h('p', {}, h('strong', {}, t.seat)),
      h('p', { class: 'small' }, t.holder));
    if (t.static_code) {
      li.append(h('details', {}, h('summary', {}, 'Printable code'),
        h('img', { src: t.static_code.qr, width: 160, height: 160, alt: 'Printable entry code' }),
        h('p', { class: 'small' }, 'This code does not change. Anyone with a copy can get in once, and whoever is scanned first wins: print it only for yourself and keep it private.')));
    }
    if (t.status === 'valid' && t.transfers_left > 0) li.append(transferForm(t));
    cards.set(t.id, { img, code, left });
    return li;
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

  function tick() {
    if (!data) return;
    const now = Date.now() + skew;
    for (const t of data) {
      const c = cards.get(t.id);
      if (!c || t.status !== 'valid') continue;
      const cur = (t.codes || []).find((x) => new Date(x.from) <= now && now < new Date(x.until));
      if (!cur) {
        c.img.removeAttribute('src');
        c.left.textContent = 'Offline too long: connect to the internet to show your live code.';
        continue;
      }
      c.img.src = cur.qr;
      c.code.textContent = cur.code;
      c.left.textContent = `Live code: changes in ${Math.ceil((new Date(cur.until) - now) / 1000)} s. Screenshots do not work.`;
    }
    // Refresh the next minute of codes every 30 s while online.
    if (Date.now() - fetched > 30000) {
      fetched = Date.now();
      load().catch(() => {});
    }
  }

  const timer = setInterval(tick, 1000);
  return { el, ready: load(), stop: () => clearInterval(timer) };
}
