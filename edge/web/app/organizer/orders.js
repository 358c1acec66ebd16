// Orders of the organizer's events: find one by buyer email, order or
// ticket number or ticket code, see its items, payments, refunds and
// tickets, refund it whole or some of its tickets with a reason (confirmed
// first, with the amount; again after a refusal or no answer), the orders
// whose refund failed, and export every order or attendee as CSV (a page
// per request, saved as one file).
import { api, money, when } from '../api.js';
import { h } from '../dom.js';
import { REASONS, refundDialog } from './refund.js';
import { frame, problemText } from './shell.js';

const STATUS = { pending: 'Pending', paid: 'Paid', refund_pending: 'Refund pending', refunded: 'Refunded', cancelled: 'Cancelled', expired: 'Expired' };
// REFUND names what the PSP said of a refund attempt, and how it looks.
const REFUND = { succeeded: ['Refunded', 'good'], pending: ['Pending', ''], refused: ['Refused', 'bad'], unanswered: ['No answer', 'bad'] };
const refundTag = (st) => h('span', { class: 'tag ' + (REFUND[st] || [])[1] }, (REFUND[st] || [st])[0]);
const statusTag = (st) => h('span', { class: 'tag' + (st === 'paid' ? ' good' : st === 'refunded' ? ' bad' : '') }, STATUS[st] || st);
// A paid order some of whose tickets were refunded reads partially refunded.
const orderTag = (o) => (o.status === 'paid' && o.refunded_cents ? h('span', { class: 'tag' }, 'Partially refunded') : statusTag(o.status));
const table = (caption, head, rows) => h('table', { class: 'grid' }, h('caption', { class: 'sr-only' }, caption),
  h('thead', {}, h('tr', {}, head.map((c) => h('th', { scope: 'col' }, c)))),
  h('tbody', {}, rows));

// inAddress tells whether a search may stay in the page's address: an
// email or a number. Anything else may be a ticket code, a secret (a
// printed one never expires) that the address would leave in the
// browser's history and the edge's access logs: it is only ever sent in a
// request body.
const inAddress = (q) => q.includes('@') || /^#?\d+$/.test(q);

// search serves /organizer/orders?q= (q: an email or a number).
export async function search(main, _, params) {
  // export_limit asks for smaller export pages (tests see several pages).
  const exportLimit = Number(params.get('export_limit')) || 0;
  const body = frame(main, 'orders', 'Orders');
  let q = params.get('q') || '';
  const results = h('div', { 'aria-live': 'polite' });
  // address keeps q in the page's address when it may stay there.
  const address = (v) => {
    const next = new URLSearchParams(location.search);
    if (v && inAddress(v)) next.set('q', v);
    else next.delete('q');
    const rest = next.toString();
    history.replaceState(null, '', '/organizer/orders' + (rest ? '?' + rest : ''));
  };
  if (q && !inAddress(q)) {
    // An old link or history entry with a code in it: searched from the
    // box only.
    address('');
    results.append(h('p', { class: 'notice' }, 'Ticket codes are not searched from the page’s address, where they would stay in your history. Type or paste the code in the box.'));
    q = '';
  }
  const input = h('input', { id: 'q', name: 'q', type: 'search', value: q, required: true, autocomplete: 'off' });
  const show = async (v) => {
    let found;
    try {
      found = await api('POST', '/api/organizer/orders', { q: v });
    } catch (err) {
      results.replaceChildren(h('p', { class: 'error' }, problemText(err)));
      return;
    }
    results.replaceChildren(found.orders.length
      ? table('Orders found', ['Order', 'Event', 'Buyer', 'Status', 'Total', 'Placed'], found.orders.map((o) => h('tr', {},
          h('th', { scope: 'row' }, h('a', { href: `/organizer/orders/${o.id}` }, `#${o.id}`)),
          h('td', {}, o.event_name), h('td', {}, o.buyer.name, h('br'), h('span', { class: 'small muted' }, o.buyer.email)),
          h('td', {}, statusTag(o.status)), h('td', {}, money(o.total_cents, o.currency)), h('td', {}, when(o.created_at)))))
      : h('p', {}, `No order of your events matches “${v}”.`));
  };
  body.append(
    h('form', { class: 'search', role: 'search', onsubmit: (ev) => {
      ev.preventDefault();
      const v = input.value.trim();
      address(v);
      show(v);
    } },
    h('p', { class: 'field grow' }, h('label', { for: 'q' }, 'Email, order number, ticket number or ticket code'), input),
    h('button', { type: 'submit' }, 'Find')),
    results);
  const failed = h('section', { 'aria-labelledby': 'failures-h' }, h('h2', { id: 'failures-h' }, 'Refund failures'));
  const exports = h('section', { 'aria-labelledby': 'exports-h' }, h('h2', { id: 'exports-h' }, 'Exports'));
  body.append(failed, exports);
  const [mine, failures] = await Promise.all([
    api('GET', '/api/organizer/events'),
    api('GET', '/api/organizer/refund-failures').catch((err) => ({ error: err })),
    q ? show(q) : null,
  ]);
  failed.append(failures.error ? h('p', { class: 'error' }, problemText(failures.error)) : failures.failures.length
    ? table('Refund failures', ['Order', 'Event', 'Buyer', 'Amount', 'What the PSP said', 'When'], failures.failures.map((f) => h('tr', {},
        h('th', { scope: 'row' }, h('a', { href: `/organizer/orders/${f.order_id}` }, `#${f.order_id}`)),
        h('td', {}, f.event_name), h('td', {}, f.buyer.name, h('br'), h('span', { class: 'small muted' }, f.buyer.email)),
        h('td', {}, money(f.amount_cents, f.currency)), h('td', {}, refundTag(f.status), ' ', f.failure), h('td', {}, when(f.failed_at)))))
    : h('p', { class: 'muted' }, 'None: every refund asked for went through.'));
  const progress = h('progress', { max: 1, value: 0, hidden: true, 'aria-labelledby': 'export-status' });
  const status = h('p', { id: 'export-status', role: 'status' });
  const save = (e, kind, label) => async (ev) => {
    const clicked = ev.currentTarget;
    const buttons = [...exports.querySelectorAll('button')];
    buttons.forEach((b) => (b.disabled = true));
    progress.hidden = false;
    try {
      const file = await exportFile(e.id, kind, exportLimit, (done, total) => {
        progress.max = Math.max(total, done, 1);
        progress.value = done;
        status.textContent = `${label} of ${e.name}: ${done.toLocaleString()} of ${total.toLocaleString()} orders…`;
      });
      const a = h('a', { href: URL.createObjectURL(file), download: `event-${e.id}-${kind}.csv`, hidden: true });
      document.body.append(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(a.href), 60000);
      status.textContent = `${label} of ${e.name} saved as event-${e.id}-${kind}.csv.`;
    } catch (err) {
      status.textContent = `${label} of ${e.name} stopped: ${problemText(err)} Nothing was saved; try again.`;
    } finally {
      progress.hidden = true;
      buttons.forEach((b) => (b.disabled = false));
      clicked.focus();
    }
  };
  exports.append(mine.events.length
    ? h('ul', { class: 'items' }, mine.events.map((e) => h('li', {}, h('span', {}, e.name),
        h('span', { class: 'actions' },
          h('button', { type: 'button', class: 'link', onclick: save(e, 'orders', 'Orders CSV') }, h('span', { class: 'sr-only' }, `${e.name}: `), 'Orders CSV'),
          h('button', { type: 'button', class: 'link', onclick: save(e, 'attendees', 'Attendees CSV') }, h('span', { class: 'sr-only' }, `${e.name}: `), 'Attendees CSV')))))
    : h('p', { class: 'muted' }, 'No events yet.'),
  status, progress);
  if (!q) input.focus();
}

// exportFile fetches every page of an event's export, following Link
// rel="next" (each page is one request under the API's response cap), and
// returns them appended: the first page alone has the header row.
async function exportFile(id, kind, limit, progress) {
  const parts = [];
  let url = `/api/events/${id}/${kind}.csv` + (limit ? `?limit=${limit}` : '');
  let done = 0;
  let total = 0;
  while (url) {
    const res = await api('GET', url, undefined, { raw: true, headers: { Accept: 'text/csv' } });
    total = Number(res.headers.get('Export-Total-Orders')) || total;
    parts.push(await res.blob());
    done += Number(res.headers.get('Export-Page-Orders')) || 0;
    progress(done, total);
    const next = /<([^>]+)>\s*;\s*rel="?next"?/.exec(res.headers.get('Link') || '');
    url = next && next[1];
  }
  return new Blob(parts, { type: 'text/csv' });
}

// detail serves /organizer/orders/{id}.
export async function detail(main, [id]) {
  const o = await api('GET', `/api/organizer/orders/${id}`);
  const body = frame(main, 'orders', `Order #${o.id}`);
  const result = h('p', { class: 'notice', role: 'status', hidden: true });
  const say = (text, kind) => {
    result.hidden = false;
    result.className = `notice ${kind}`;
    result.textContent = text;
  };
  const refund = h('button', { type: 'button', class: 'danger' }, 'Refund tickets…');
  let shown = o;
  refund.addEventListener('click', async () => {
    const ask = await refundDialog(shown);
    if (!ask) return;
    refund.disabled = true;
    try {
      const after = await api('POST', `/api/orders/${o.id}/refund`, ask, { retries: 2 });
      draw(after);
      const some = ask.tickets ? `${ask.tickets.length} ticket${ask.tickets.length === 1 ? '' : 's'}` : 'the tickets';
      // A partial refund the PSP accepted as pending leaves the order paid:
      // its own row (the newest) says whether the money went back yet.
      const latest = (after.refunds || []).at(-1);
      say(after.status === 'refund_pending'
        ? `The payment provider accepted the refund; the order reads refunded once it confirms. ${some} are void.`
        : ask.tickets && latest && latest.status === 'pending'
          ? `The payment provider accepted the refund of ${some}; it reads Refunded below once the provider confirms. ${ask.tickets.length === 1 ? 'It is' : 'They are'} void.`
          : `Refunded ${some}: the money goes back to ${after.buyer.email}; ${ask.tickets ? 'they are' : 'the tickets are'} void.`, 'good');
    } catch (err) {
      say(problemText(err), 'bad');
      draw(await api('GET', `/api/organizer/orders/${o.id}`));
    }
  });
  const content = h('div', {});
  body.append(h('p', {}, h('a', { href: '/organizer/orders' }, 'Find another order')), result, content);

  function draw(d) {
    shown = d;
    refund.disabled = false;
    content.replaceChildren(...[
      h('dl', { class: 'facts' },
        h('dt', {}, 'Event'), h('dd', {}, d.event_name),
        h('dt', {}, 'Buyer'), h('dd', {}, `${d.buyer.name} · ${d.buyer.email}`),
        h('dt', {}, 'Status'), h('dd', {}, orderTag(d)),
        h('dt', {}, 'Total'), h('dd', {}, money(d.total_cents, d.currency)),
        d.refunded_cents ? [h('dt', {}, 'Refunded'), h('dd', {}, money(d.refunded_cents, d.currency))] : null,
        h('dt', {}, 'Placed'), h('dd', {}, when(d.created_at)),
        d.paid_at ? [h('dt', {}, 'Paid'), h('dd', {}, when(d.paid_at))] : null),
      d.status === 'paid' || d.status === 'refund_pending' ? h('p', { class: 'actions' }, refund) : null,
      h('h2', {}, 'Items'),
      // A standing line's label carries its quantity ("Floor (standing) × 2").
      h('ul', { class: 'items' }, d.items.map((i) => h('li', {}, h('span', {}, i.label),
        h('span', {}, money(i.price_cents * i.quantity, d.currency))))),
      h('h2', {}, 'Tickets'),
      d.tickets.length
        ? h('ul', { class: 'items' }, d.tickets.map((t) => h('li', {}, h('span', {}, `#${t.id} · ${t.label}`), h('span', { class: 'small' }, money(t.price_cents, d.currency)),
          // a void ticket of a paid order was refunded on its own
          t.void ? h('span', { class: 'tag bad' }, d.status === 'paid' ? 'Refunded' : 'Void') : h('span', { class: 'tag good' }, 'Valid'))))
        : h('p', { class: 'muted' }, 'No tickets: the order was never paid.'),
      h('h2', {}, 'Payments'),
      d.payments.length
        ? table('Payments', ['Attempt', 'Status', 'Amount', 'At the PSP', 'Updated'], d.payments.map((p) => h('tr', {},
            h('th', { scope: 'row' }, String(p.attempt)), h('td', {}, p.status.replace('_', ' '), p.failure ? h('span', { class: 'small muted' }, ` (${p.failure})`) : null),
            h('td', {}, money(p.amount_cents, p.currency)), h('td', { class: 'small' }, p.psp_payment_id || '–'), h('td', {}, when(p.updated_at)))))
        : h('p', { class: 'muted' }, 'No payment yet.'),
      h('h2', {}, 'Refunds'),
      d.refunds.length
        ? table('Refunds', ['When', 'Attempt', 'Result', 'Amount', 'Tickets', 'Reason', 'By', 'What the PSP said'], d.refunds.map((r) => h('tr', {},
            h('th', { scope: 'row' }, when(r.created_at)), h('td', {}, String(r.attempt)), h('td', {}, refundTag(r.status)),
            h('td', {}, r.amount_cents ? money(r.amount_cents, d.currency) : '–'),
            h('td', {}, r.tickets ? r.tickets.map((t) => `#${t}`).join(', ') : 'All'),
            h('td', {}, r.reason ? REASONS[r.reason] || r.reason : '–', r.note ? h('span', { class: 'small muted' }, ` (${r.note})`) : null),
            h('td', {}, r.requested_by ? `Organizer #${r.requested_by}` : 'Automatic'),
            h('td', { class: 'small' }, r.failure || r.psp_refund_id || '–'))))
        : h('p', { class: 'muted' }, 'None.'),
    ].filter(Boolean));
  }
  draw(o);
}
